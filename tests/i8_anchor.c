/* cuBLAS's int8 GEMM (GemmEx, int8 operands, int32 C, CUBLAS_COMPUTE_32I)
 * timed in its two layouts at N x N x N: TN, A's rows and B's columns
 * k-contiguous (cuBLAS's fast int8 case), and NN, the row-major operands
 * as NumPy stores them (what `--kernel cublas` and --verify hand it); and
 * beside TN, on the same operands, i8_igmma's product alone
 * (i8gemm_igmma_launch_kmajor: B already k-major, no pass over it), its
 * C compared with cuBLAS's bit for bit.  The anchor tests/int_rate.py
 * prints beside the int8 stages.  The operands are pseudo-random bytes.
 *
 *   i8_anchor N...    prints 'cublas int8 TN N^3: T ms, R TOP/s', the
 *                     kernel's line and NN's */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm.h"

cudaError_t i8gemm_igmma_launch_kmajor(const struct i8gemm_problem *p, const int8_t *bt,
                                       const struct launch_env *env);

#define REPEAT 10

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

/* One run: cuBLAS in a layout, or i8_igmma's product alone. */
struct one_run {
    cublasHandle_t h;            /* NULL: i8_igmma */
    int n, tn;
    const void *a, *b;
    void *c;
    int sm_count;
};

/* Queues one run; 0, or says why not and returns -1. */
static int queue_run(const struct one_run *r)
{
    if (r->h) {
        const int alpha = 1, beta = 0;
        cublasStatus_t st = cublasGemmEx(r->h, r->tn ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                                         r->n, r->n, r->n, &alpha, r->b, CUDA_R_8I, r->n, r->a,
                                         CUDA_R_8I, r->n, &beta, r->c, CUDA_R_32I, r->n,
                                         CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
        if (st == CUBLAS_STATUS_SUCCESS)
            return 0;
        fprintf(stderr, "i8_anchor: cublasGemmEx %s at %d failed (status %d)\n",
                r->tn ? "TN" : "NN", r->n, (int)st);
        return -1;
    }
    /* i8_igmma on the TN operands: A (n rows of n), B^T (n rows of n). */
    struct i8gemm_problem q = { r->n, r->n, r->n, r->a, NULL, r->c, 1, 0, 0, 0, 0 };
    struct launch_env env = { 0, NULL, r->sm_count, 90 };
    cudaError_t err = i8gemm_igmma_launch_kmajor(&q, r->b, &env);
    if (err == cudaSuccess)
        return 0;
    fprintf(stderr, "i8_anchor: i8_igmma at %d failed: %s\n", r->n, cudaGetErrorString(err));
    return -1;
}

/* The median of REPEAT timed runs after one untimed, in ms; < 0 on failure. */
static float time_run(const struct one_run *run)
{
    float ms[REPEAT];
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int r = -1; r < REPEAT; r++) {
        cudaEventRecord(e0, 0);
        int rc = queue_run(run);
        cudaEventRecord(e1, 0);
        if (rc || cudaEventSynchronize(e1) != cudaSuccess) {
            if (!rc)
                fprintf(stderr, "i8_anchor: %s\n", cudaGetErrorString(cudaGetLastError()));
            return -1;
        }
        if (r >= 0)
            cudaEventElapsedTime(&ms[r], e0, e1);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    qsort(ms, REPEAT, sizeof ms[0], cmp_float);
    return (ms[REPEAT / 2 - 1] + ms[REPEAT / 2]) / 2;
}

/* Whether two device buffers of `bytes` hold the same bytes. */
static int same(const void *x, const void *y, size_t bytes)
{
    unsigned char *hx = malloc(bytes), *hy = malloc(bytes);
    int eq = hx && hy && cudaMemcpy(hx, x, bytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy(hy, y, bytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
             memcmp(hx, hy, bytes) == 0;
    free(hx);
    free(hy);
    return eq;
}

int main(int argc, char **argv)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("skipped: no CUDA device on this machine\n");
        return 0;
    }
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "i8_anchor: no cuBLAS handle\n");
        return 1;
    }
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        int n = atoi(argv[i]);
        size_t bytes = (size_t)n * n;
        void *a = NULL, *b = NULL, *c = NULL, *c2 = NULL;
        unsigned char *fill = n > 0 ? malloc(bytes) : NULL;
        if (n <= 0 || !fill || cudaMalloc(&a, bytes) != cudaSuccess ||
            cudaMalloc(&b, bytes) != cudaSuccess || cudaMalloc(&c, bytes * 4) != cudaSuccess ||
            cudaMalloc(&c2, bytes * 4) != cudaSuccess) {
            fprintf(stderr, "i8_anchor: %s: no room for the operands\n", argv[i]);
            rc = 1;
        } else {
            unsigned long long x = 88172645463325252ull;
            for (int which = 0; which < 2; which++) {
                for (size_t e = 0; e < bytes; e++) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    fill[e] = (unsigned char)(x >> 32);
                }
                cudaMemcpy(which ? b : a, fill, bytes, cudaMemcpyHostToDevice);
            }
            int sm_count = 0;
            cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0);
            for (int tn = 1; tn >= 0 && !rc; tn--) {
                struct one_run cub = { h, n, tn, a, b, c, sm_count };
                float ms = time_run(&cub);
                if (ms < 0)
                    rc = 1;
                else
                    printf("cublas int8 %s %d^3: %.4f ms, %.1f TOP/s\n", tn ? "TN" : "NN", n, ms,
                           2.0 * n * n * (double)n / ms / 1e9);
                if (!tn || rc)
                    continue;
                /* The same TN operands on i8_igmma's product alone. */
                struct one_run own = { NULL, n, 1, a, b, c2, sm_count };
                float kms = time_run(&own);
                if (kms < 0) {
                    rc = 1;
                    continue;
                }
                int eq = same(c, c2, bytes * 4);
                printf("i8_igmma product alone (B k-major) %d^3: %.4f ms, %.1f TOP/s, %.0f%% of "
                       "cuBLAS TN, C the same as cuBLAS's: %s\n", n, kms,
                       2.0 * n * n * (double)n / kms / 1e9, 100.0 * ms / kms, eq ? "yes" : "NO");
                rc = !eq;
            }
        }
        free(fill);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
        cudaFree(c2);
    }
    cublasDestroy(h);
    return rc;
}
