/* What the tiny stages share (kernels/sgemm/sgemm_26_tiny.cu,
 * kernels/hgemm/hgemm_12_mma_tiny.cu, kernels/dgemm/dgemm_08_dmma_tiny.cu):
 * a block per 32 x 32 tile of C, the stack of products on blockIdx.y in
 * launches of at most 65535, and the launcher that lays them out.  The stage files hold the kernels.  Run
 * through its stages, e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_dmma_tiny --verify */
#ifndef GC_KERNELS_TINY_CUH
#define GC_KERNELS_TINY_CUH

#include "kernels/gemm.h"
#include "kernels/common.cuh"

enum {
    TINY_BM = 32,             /* rows of C a block owns */
    TINY_BN = 32,             /* columns */
    TINY_MOST_Y = 65535       /* products a launch (gridDim.y) */
};

/* A family's problem (hgemm_problem, dgemm_problem) and the layout. */
template <typename P>
struct tiny_args {
    P p;
    int tiles_n;
    int batch0;               /* the product of blockIdx.y == 0 */
};

/* The end of a tiny block, by every thread once the barrier after its
 * warps' partial tiles has passed: the WARPS tiles of 32 x 32 at part
 * (rows of ROW values) summed in warp order, the same sum every run, and
 * stored as alpha sum + beta C under a bounds check (C read only where
 * beta != 0).  Warp w takes rows w, w + WARPS, ..., lane l column l: a
 * warp's store is a row's 32 adjacent values, whole sectors whatever C's
 * alignment. */
template <int WARPS, int ROW, typename T, typename P>
static __device__ __forceinline__ void tiny_sum_store(const T (*part)[TINY_BM][ROW], const P &p,
                                                      T *c, int row0, int col0, int warp,
                                                      int lane)
{
    const int col = col0 + lane;
#pragma unroll
    for (int r = warp; r < TINY_BM; r += WARPS) {
        T sum = part[0][r][lane];
#pragma unroll
        for (int w = 1; w < WARPS; w++)
            sum += part[w][r][lane];
        const int out = row0 + r;
        if (out < p.m && col < p.n) {
            T *cp = c + (long long)out * p.n + col;
            *cp = p.beta != 0 ? p.alpha * sum + p.beta * *cp : p.alpha * sum;
        }
    }
}

/* Runs `kernel` over p: a block of `threads` per tile of every product, a
 * single product's strides taken as 0. */
template <typename P>
static cudaError_t tiny_launch(void (*kernel)(tiny_args<P>), const P *p, int threads,
                               cudaStream_t stream)
{
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return cudaErrorInvalidValue;
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    int batch = p->batch > 1 ? p->batch : 1;
    long long tiles = (long long)ceil_div(p->m, TINY_BM) * ceil_div(p->n, TINY_BN);
    if (tiles > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    tiny_args<P> args;
    args.p = *p;
    args.p.batch = batch;
    if (batch == 1)
        args.p.stride_a = args.p.stride_b = args.p.stride_c = 0;
    args.tiles_n = ceil_div(p->n, TINY_BN);
    for (int b0 = 0; b0 < batch; b0 += TINY_MOST_Y) {
        args.batch0 = b0;
        dim3 grid((unsigned)tiles, (unsigned)min(batch - b0, (int)TINY_MOST_Y));
        kernel<<<grid, threads, 0, stream>>>(args);
        cudaError_t err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

#endif
