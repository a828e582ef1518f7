/* gemv: the products the tile ladder is not made for, a row vector times a
 * matrix (m = 1) and a matrix times a column vector (n = 1).  Both are
 * memory-bound: the matrix is read once, and the figure of merit is its
 * bytes per second against the copy kernel's.
 *
 * Beyond the seeds.  A 128 x 128 tile ladder computes a 1 x n product on
 * tiles that are 127/128 empty and reads B through a handful of blocks;
 * here:
 *   - n = 1 (C = A b): a warp per row of A, its lanes walking the row in
 *     16-byte loads (4-byte ones when rows are not 16-byte aligned), b from
 *     L1/L2, the lanes' sums joined by shuffles in a fixed order.  8192
 *     rows are 8192 warps: enough to fill 132 SMs.
 *   - m = 1 (C = a B): a thread per 4 adjacent columns of B (16-byte loads
 *     along B's rows), so a block of 256 threads covers 1024 columns; that
 *     alone makes 8 blocks for n = 8192, so K is cut into S slices, one per
 *     blockIdx.y, each into its own row of partial sums, S chosen for about
 *     4 blocks per SM with at least 64 values of k per slice; a second
 *     kernel (kernels/gemm_split.cu) adds the S rows in a fixed order and
 *     applies alpha and beta.
 * A product with both m = 1 and n = 1 (a dot product) takes the n = 1
 * path: one warp.  Each product of a stack is its own launch (the row is
 * not KERNEL_BATCHED).
 *
 * auto takes it for every float32 product with M = 1 or N = 1 (its row is
 * KERNEL_VECTOR; src/select.c).
 *
 * Figures (`gemmcli bench --sizes ...`, NVIDIA H200, 2026-11-22, cuBLAS
 * SGEMM in the same run): 1x8192x8192 1.80 TFLOP/s (100%; the 256 MiB of
 * B in 75 us, 3.6 TB/s, 92% of the copy kernel's 3.92), 8192x1x8192 1.73
 * (124%), 1x65536x4096 2.18 (101%), 4096x1x65536 1.90 (97%); edge_peel,
 * auto's pick before, 0.31-0.38 TFLOP/s at all four. */
#include <stdint.h>
#include <stdio.h>

#include "gemm.h"
#include "common.cuh"

enum {
    GEMV_THREADS = 256,
    GEMV_COLS = GEMV_THREADS * 4,   /* columns of B per block (m = 1) */
    GEMV_MIN_K = 64,                /* values of k per slice at least */
    GEMV_MOST_SLICES = 256
};

/* C (m x 1) = alpha A b + beta C, a warp per row. */
template <bool VEC>
static __global__ void __launch_bounds__(GEMV_THREADS)
gemv_rows_kernel(int m, int k, float alpha, const float *a, const float *b, float beta,
                 float *c)
{
    int row = blockIdx.x * (GEMV_THREADS / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= m)
        return;
    const float *ar = a + (size_t)row * k;
    float sum = 0.0f;
    if (VEC) {
        const float4 *a4 = reinterpret_cast<const float4 *>(ar);
        const float4 *b4 = reinterpret_cast<const float4 *>(b);
        for (int q = lane; q < k / 4; q += 32) {
            float4 x = __ldg(a4 + q), y = __ldg(b4 + q);
            sum = fmaf(x.x, y.x, sum);
            sum = fmaf(x.y, y.y, sum);
            sum = fmaf(x.z, y.z, sum);
            sum = fmaf(x.w, y.w, sum);
        }
    } else {
        for (int q = lane; q < k; q += 32)
            sum = fmaf(__ldg(ar + q), __ldg(b + q), sum);
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0)
        c[row] = beta != 0.0f ? alpha * sum + beta * c[row] : alpha * sum;
}

/* partial[slice][j] = sum over the slice's k of a[k] B[k][j], four columns
 * per thread. */
template <bool VEC>
static __global__ void __launch_bounds__(GEMV_THREADS)
gemv_cols_kernel(int n, int k, int slice, const float *a, const float *b, float *partial)
{
    int j = (blockIdx.x * GEMV_THREADS + threadIdx.x) * 4;
    if (j >= n)
        return;
    int k0 = blockIdx.y * slice, k1 = min(k, k0 + slice);
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int kk = k0; kk < k1; kk++) {
        float s = __ldg(a + kk);
        const float *br = b + (size_t)kk * n + j;
        if (VEC) {
            float4 x = __ldg(reinterpret_cast<const float4 *>(br));
            sum.x = fmaf(s, x.x, sum.x);
            sum.y = fmaf(s, x.y, sum.y);
            sum.z = fmaf(s, x.z, sum.z);
            sum.w = fmaf(s, x.w, sum.w);
        } else {
            sum.x = fmaf(s, __ldg(br), sum.x);
            if (j + 1 < n)
                sum.y = fmaf(s, __ldg(br + 1), sum.y);
            if (j + 2 < n)
                sum.z = fmaf(s, __ldg(br + 2), sum.z);
            if (j + 3 < n)
                sum.w = fmaf(s, __ldg(br + 3), sum.w);
        }
    }
    float *out = partial + (size_t)blockIdx.y * n + j;
    if (VEC) {
        *reinterpret_cast<float4 *>(out) = sum;
    } else {
        out[0] = sum.x;
        if (j + 1 < n)
            out[1] = sum.y;
        if (j + 2 < n)
            out[2] = sum.z;
        if (j + 3 < n)
            out[3] = sum.w;
    }
}

/* Slices of K for an m = 1 product on `sm_count` SMs. */
static int gemv_slices(int n, int k, int sm_count)
{
    long blocks = (n + GEMV_COLS - 1) / GEMV_COLS;
    long want = (4L * sm_count + blocks - 1) / blocks;
    long most = k / GEMV_MIN_K;
    if (want > most)
        want = most;
    if (want > GEMV_MOST_SLICES)
        want = GEMV_MOST_SLICES;
    return want < 1 ? 1 : (int)want;
}

extern "C" size_t sgemm_gemv_workspace(const struct gemm_problem *p)
{
    if (p->m != 1 || p->n == 1 || p->n < 1 || p->k < 1)
        return 0;
    return (size_t)gemv_slices((int)p->n, (int)p->k, 256) * p->n * sizeof(float);
}

extern "C" int sgemm_gemv_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->m != 1 && p->n != 1) {
        snprintf(why, n, "gemv computes a vector times a matrix (M = 1) or a matrix times a "
                 "vector (N = 1); this product is %lld x %lld", (long long)p->m,
                 (long long)p->n);
        return 0;
    }
    return 1;
}

extern "C" cudaError_t sgemm_gemv_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    if (p->m < 1 || p->n < 1)
        return cudaSuccess;
    if (p->k == 0)   /* C = beta C: an empty sum, 0 whatever alpha is */
        return gemm_split_reduce(p->c, 0, p->c, (size_t)p->m * p->n, 1, 0, 0.0f, p->beta,
                                 env->stream);
    if (p->n == 1) {
        bool vec = p->k % 4 == 0 && (uintptr_t)p->a % 16 == 0 && (uintptr_t)p->b % 16 == 0;
        unsigned grid = (unsigned)((p->m + GEMV_THREADS / 32 - 1) / (GEMV_THREADS / 32));
        if (vec)
            gemv_rows_kernel<true><<<grid, GEMV_THREADS, 0, env->stream>>>(
                p->m, p->k, p->alpha, p->a, p->b, p->beta, p->c);
        else
            gemv_rows_kernel<false><<<grid, GEMV_THREADS, 0, env->stream>>>(
                p->m, p->k, p->alpha, p->a, p->b, p->beta, p->c);
        return launch_result();
    }
    int slices = gemv_slices(p->n, p->k, env->sm_count);
    int slice = (p->k + slices - 1) / slices;
    slices = (p->k + slice - 1) / slice;
    float *partial;
    cudaError_t err = cudaMallocAsync((void **)&partial, (size_t)slices * p->n * sizeof(float),
                                      env->stream);
    if (err != cudaSuccess)
        return err;
    bool vec = p->n % 4 == 0 && (uintptr_t)p->b % 16 == 0;
    dim3 grid((unsigned)((p->n + GEMV_COLS - 1) / GEMV_COLS), (unsigned)slices);
    if (vec)
        gemv_cols_kernel<true><<<grid, GEMV_THREADS, 0, env->stream>>>(p->n, p->k, slice, p->a,
                                                                      p->b, partial);
    else
        gemv_cols_kernel<false><<<grid, GEMV_THREADS, 0, env->stream>>>(p->n, p->k, slice,
                                                                       p->a, p->b, partial);
    err = launch_result();
    if (err == cudaSuccess)
        err = gemm_split_reduce(p->c, 0, partial, (size_t)p->n, 1, slices, p->alpha, p->beta,
                                env->stream);
    cudaError_t free_err = cudaFreeAsync(partial, env->stream);
    return err != cudaSuccess ? err : free_err;
}

extern "C" cudaError_t sgemm_gemv_attr(struct kernel_attr *out)
{
    return kernel_attr_of(gemv_rows_kernel<true>, GEMV_THREADS, 0, out);
}
