/* small_k: products with a short K (K <= 32): outer products and their
 * sums, where the work is writing C.
 *
 * Beyond the seeds.  With K this short a tile stage spends its time
 * filling and draining its pipeline, and where N is not a multiple of 4
 * its C stores go one float at a time from threads 8 or 16 columns apart,
 * so a 1952 x 12555 x 1 product ran at 28% of cuBLAS.  Here C is written
 * the way a copy writes: a warp owns a strip of SMALL_K_COLS columns
 * (lane, lane + 32, ...: coalesced whatever the alignment) and a band of
 * R rows; it keeps the strip's K x 4 values of B in registers, read once,
 * and for each row of its band reads the row's K values of A (one address
 * per warp: a broadcast) and writes 4 sums per lane.  R is chosen so the
 * grid holds about 32 warps per SM; B, K x N, is read R times fewer than
 * C is written.  The stack runs in one launch (the product is a grid
 * index); broadcast operands have stride 0.
 *
 * Figures (`gemmcli bench`, NVIDIA H200, 2026-11-22, cuBLAS in the same run; the
 * device copies at 4.1 TB/s read + written):
 * 8192x8192x1 1.83 TFLOP/s (152% of cuBLAS; 3.65 TB/s moved), 100000 x
 * 8x8x8 127%.  At K = 32 it is compute-bound at 6.1 TFLOP/s (8192^2 x 32:
 * 25%): four results per lane, each K FMAs from registers, A read as a
 * broadcast per row; auto's model leaves those to the tiles. */
#include <stdio.h>

#include "gemm.h"
#include "common.cuh"

enum {
    SMALL_K_MAX = 32,
    SMALL_K_THREADS = 256,
    SMALL_K_Q = 4,                           /* columns per lane */
    SMALL_K_COLS = 32 * SMALL_K_Q,           /* columns per warp */
    SMALL_K_MOST_ROWS = 64
};

/* C[rows r0.., cols j0..] for one product; KMAX bounds k for the
 * register array. */
template <int KMAX>
static __global__ void __launch_bounds__(SMALL_K_THREADS)
small_k_kernel(struct sgemm_problem p, int rows_per_warp, long long strips_per_product)
{
    long long item = (long long)blockIdx.x * (SMALL_K_THREADS / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    long long col_strips = (p.n + SMALL_K_COLS - 1) / SMALL_K_COLS;
    if (item >= strips_per_product * p.batch)
        return;
    long long prod = item / strips_per_product, rest = item % strips_per_product;
    int j0 = (int)(rest % col_strips) * SMALL_K_COLS;
    int r0 = (int)(rest / col_strips) * rows_per_warp;
    const float *a = p.a + prod * p.stride_a;
    const float *b = p.b + prod * p.stride_b;
    float *c = p.c + prod * p.stride_c;

    float bv[KMAX][SMALL_K_Q];
#pragma unroll
    for (int kk = 0; kk < KMAX; kk++)
#pragma unroll
        for (int q = 0; q < SMALL_K_Q; q++) {
            int j = j0 + lane + 32 * q;
            bv[kk][q] = kk < p.k && j < p.n ? __ldg(b + (size_t)kk * p.n + j) : 0.0f;
        }
    int r1 = min(p.m, r0 + rows_per_warp);
    for (int r = r0; r < r1; r++) {
        const float *ar = a + (size_t)r * p.k;
        float sum[SMALL_K_Q] = {};
#pragma unroll
        for (int kk = 0; kk < KMAX; kk++) {
            if (kk < p.k) {
                float x = __ldg(ar + kk);
#pragma unroll
                for (int q = 0; q < SMALL_K_Q; q++)
                    sum[q] = fmaf(x, bv[kk][q], sum[q]);
            }
        }
        float *cr = c + (size_t)r * p.n;
#pragma unroll
        for (int q = 0; q < SMALL_K_Q; q++) {
            int j = j0 + lane + 32 * q;
            if (j < p.n)
                cr[j] = p.beta != 0.0f ? p.alpha * sum[q] + p.beta * cr[j] : p.alpha * sum[q];
        }
    }
}

extern "C" int sgemm_small_k_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->k > SMALL_K_MAX) {
        snprintf(why, n, "small_k computes products with K <= %d; this one has K = %lld",
                 SMALL_K_MAX, (long long)p->k);
        return 0;
    }
    return 1;
}

extern "C" cudaError_t sgemm_small_k_launch(const struct sgemm_problem *p,
                                            const struct launch_env *env)
{
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return cudaSuccess;
    long long col_strips = (p->n + SMALL_K_COLS - 1) / SMALL_K_COLS;
    /* Rows per warp: as many as keep about 32 warps per SM busy. */
    int sms = env->sm_count > 0 ? env->sm_count : 132;
    long long want_warps = 32LL * sms;
    long long bands = (want_warps + col_strips * p->batch - 1) / (col_strips * p->batch);
    long long rows = (p->m + bands - 1) / bands;
    if (rows < 1)
        rows = 1;
    if (rows > SMALL_K_MOST_ROWS)
        rows = SMALL_K_MOST_ROWS;
    long long strips = col_strips * ((p->m + rows - 1) / rows);
    long long warps = strips * p->batch;
    long long blocks = (warps + SMALL_K_THREADS / 32 - 1) / (SMALL_K_THREADS / 32);
    if (blocks > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    if (p->k <= 4)
        small_k_kernel<4><<<(unsigned)blocks, SMALL_K_THREADS, 0, env->stream>>>(*p, (int)rows,
                                                                                 strips);
    else if (p->k <= 8)
        small_k_kernel<8><<<(unsigned)blocks, SMALL_K_THREADS, 0, env->stream>>>(*p, (int)rows,
                                                                                 strips);
    else if (p->k <= 16)
        small_k_kernel<16><<<(unsigned)blocks, SMALL_K_THREADS, 0, env->stream>>>(*p, (int)rows,
                                                                                  strips);
    else
        small_k_kernel<SMALL_K_MAX><<<(unsigned)blocks, SMALL_K_THREADS, 0, env->stream>>>(
            *p, (int)rows, strips);
    return launch_result();
}

extern "C" cudaError_t sgemm_small_k_attr(struct kernel_attr *out)
{
    return kernel_attr_of(small_k_kernel<SMALL_K_MAX>, SMALL_K_THREADS, 0, out);
}
