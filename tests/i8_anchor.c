/* cuBLAS's int8 GEMM (GemmEx, int8 operands, int32 C, CUBLAS_COMPUTE_32I)
 * timed in its two layouts at N x N x N: TN, A's rows and B's columns
 * k-contiguous (cuBLAS's fast int8 case), and NN, the row-major operands
 * as NumPy stores them (what `--kernel cublas` and --verify hand it).  The
 * anchor tests/int_rate.py prints beside the int8 stages.  The operands'
 * values do not change an integer GEMM's time; they are bytes of 1.
 *
 *   i8_anchor N...    prints 'cublas int8 TN N^3: T ms, R TOP/s' and NN's */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define REPEAT 10

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

/* The median of REPEAT timed runs after one untimed, in ms; < 0 on failure. */
static float time_gemm(cublasHandle_t h, int n, int tn, const void *a, const void *b, void *c)
{
    const int alpha = 1, beta = 0;
    float ms[REPEAT];
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int r = -1; r < REPEAT; r++) {
        cudaEventRecord(e0, 0);
        cublasStatus_t st = cublasGemmEx(h, tn ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
                                         &alpha, b, CUDA_R_8I, n, a, CUDA_R_8I, n, &beta, c,
                                         CUDA_R_32I, n, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
        cudaEventRecord(e1, 0);
        if (st != CUBLAS_STATUS_SUCCESS || cudaEventSynchronize(e1) != cudaSuccess) {
            fprintf(stderr, "i8_anchor: cublasGemmEx %s at %d failed (status %d)\n",
                    tn ? "TN" : "NN", n, (int)st);
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
        void *a = NULL, *b = NULL, *c = NULL;
        if (n <= 0 || cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
            cudaMalloc(&c, bytes * 4) != cudaSuccess) {
            fprintf(stderr, "i8_anchor: %s: no room for the operands\n", argv[i]);
            rc = 1;
        } else {
            cudaMemset(a, 1, bytes);
            cudaMemset(b, 1, bytes);
            for (int tn = 1; tn >= 0 && !rc; tn--) {
                float ms = time_gemm(h, n, tn, a, b, c);
                if (ms < 0)
                    rc = 1;
                else
                    printf("cublas int8 %s %d^3: %.4f ms, %.1f TOP/s\n", tn ? "TN" : "NN", n, ms,
                           2.0 * n * n * (double)n / ms / 1e9);
            }
        }
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
    }
    cublasDestroy(h);
    return rc;
}
