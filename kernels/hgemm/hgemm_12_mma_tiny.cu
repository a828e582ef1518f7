/* mma_tiny: float16 or bfloat16 products too small to fill the GPU with
 * the other tensor-core stages' tiles (a few thousand outputs, a K of tens
 * to a few thousand), on the tensor cores by the warp-level
 * mma.sync.m16n8k16, FP32 accumulation, float C.
 *
 * Why another stage.  mma_sync's block owns 128 x 256 of C on 8 warps of
 * 64 x 64, and the Hopper stages 128 x 256 on two warpgroups: a product of
 * 95 x 297 x 89 is 2 such tiles, 2 SMs of 132, and each warp walks the
 * whole of K alone behind a pipeline that takes longer to fill than the
 * product takes: thousands of instructions a warp, each waiting on the
 * one before, with the memory all but idle (the README gives Nsight
 * Compute's figures, and cuBLAS's kernel: 32 x 32 tiles).  A tiny product
 * waits on the chain of dependent steps each warp walks, so this stage
 * makes the chains short:
 *
 *   - a block owns 32 x 32 of C (95 x 297: 30 blocks), and its 8 warps
 *     split K among them, warp w taking the k-steps of 16 values w, w + 8,
 *     w + 16, ...; each warp holds the whole 32 x 32 tile, 2 x 4 mma tiles
 *     of m16n8, 32 float accumulators a lane;
 *   - the fragments come straight from global memory into registers, no
 *     shared memory and no barrier on the way: for lane l (g = l / 4, t =
 *     l % 4) of a k-step at k, A's fragment is rows g and g + 8 of each m16
 *     tile at k + 2t, k + 2t + 1 and k + 2t + 8, k + 2t + 9 (a 4-byte load
 *     per pair where A's rows are even in length and 4-byte aligned, two
 *     2-byte loads otherwise), B's is column g of each n8 tile at those
 *     four k (2-byte loads: B's rows are the k).  The loads of the warp's
 *     next k-step are issued before this step's 8 mma, so that two steps
 *     are in flight;
 *   - the 8 partial tiles meet in shared memory (8 x 32 rows of 36
 *     floats), and each thread sums 4 outputs of a column over the warps
 *     in warp order (the same sum every run) and stores them as alpha sum
 *     + beta C, under a bounds check: lane l of warp w takes column l of
 *     rows w, w + 8, ..., so each store of a warp is a row's 32 adjacent
 *     floats (from 4 adjacent outputs a thread, a warp's stores went 4
 *     bytes in 16, and on rows not aligned to 16 bytes each sector
 *     arrived in quarters).
 * Values outside A or B load as zeros, so any M, N and K runs, and a stack
 * of products takes blockIdx.y, in launches of at most 65535.  A single
 * product with a long K over few tiles is cut into slices of K by the
 * dispatcher (kernels/gemm_dispatch.c), as for the other tensor-core
 * stages, from 512 values a slice: it fills the GPU, and it bounds each
 * FP32 chain (a tensor core's accumulator does not round to nearest).
 *
 * The loads are many for the arithmetic (24 to 32 a lane for 8 mma): a
 * larger product is the other stages' (auto's model weighs them).
 *
 * gemmcli's own; the PTX ISA gives the fragment layouts of mma.m16n8k16.
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel mma_tiny --verify --repeat 20 */
#include <stdint.h>

#include "kernels/hgemm/hmma_mma.cuh"
#include "kernels/tiny.cuh"

enum {
    TINY_WARPS = 8,           /* warps a block, each a share of K */
    TINY_THREADS = TINY_WARPS * 32,
    TINY_ROW = TINY_BN + 4    /* floats a row of a warp's tile in shared memory */
};

/* Element (r, c) of a matrix with rows of `ld`, 0 outside r < rows, c < cols. */
static __device__ __forceinline__ uint32_t tiny_ld16(const uint16_t *__restrict__ x, int r, int c,
                                                     int rows, int cols, int ld)
{
    return r < rows && c < cols ? (uint32_t)__ldg(x + (long long)r * ld + c) : 0u;
}

/* A's values (r, k) and (r, k + 1) in one register, the lower k in the low
 * half: the order mma's A fragment takes.  PAIR: one 4-byte load (k even,
 * A's rows even and 4-byte aligned, K even: the pair lies inside K). */
template <bool PAIR>
static __device__ __forceinline__ uint32_t tiny_a_pair(const uint16_t *__restrict__ a, int r, int k,
                                                       int m, int kk, int lda)
{
    if (PAIR)
        return r < m && k < kk ? __ldg((const unsigned int *)(a + (long long)r * lda + k)) : 0u;
    return tiny_ld16(a, r, k, m, kk, lda) | tiny_ld16(a, r, k + 1, m, kk, lda) << 16;
}

/* One k-step's fragments of a lane: A's for the 2 m16 tiles (4 registers
 * each, in mma's order: rows g, g + 8 at k + 2t, then at k + 2t + 8), B's
 * for the 4 n8 tiles (2 each: k + 2t and k + 2t + 8, column g). */
struct tiny_frag {
    uint32_t a[2][4];
    uint32_t b[4][2];
};

template <bool PAIR>
static __device__ __forceinline__ void tiny_load(tiny_frag &f, const uint16_t *__restrict__ a,
                                                 const uint16_t *__restrict__ b,
                                                 const struct hgemm_problem &p, int kk, int row0,
                                                 int col0, int k, int g, int t)
{
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int q = 0; q < 2; q++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                f.a[mi][h + 2 * q] = tiny_a_pair<PAIR>(a, row0 + 16 * mi + g + 8 * h,
                                                       k + 2 * t + 8 * q, p.m, kk, p.lda);
#pragma unroll
    for (int ni = 0; ni < 4; ni++)
#pragma unroll
        for (int q = 0; q < 2; q++) {
            int kb = k + 2 * t + 8 * q, col = col0 + 8 * ni + g;
            f.b[ni][q] = tiny_ld16(b, kb, col, kk, p.n, p.ldb) |
                         tiny_ld16(b, kb + 1, col, kk, p.n, p.ldb) << 16;
        }
}

template <bool BF16, bool PAIR>
static __global__ void __launch_bounds__(TINY_THREADS, 2) hgemm_mma_tiny_kernel(tiny_args<hgemm_problem> args)
{
    __shared__ __align__(16) float part[TINY_WARPS][TINY_BM][TINY_ROW];
    const struct hgemm_problem &p = args.p;
    const int prod = args.batch0 + blockIdx.y;
    const uint16_t *a = p.a + prod * p.stride_a;
    const uint16_t *b = p.b + prod * p.stride_b;
    float *c = p.c + prod * p.stride_c;
    const int row0 = (int)(blockIdx.x / args.tiles_n) * TINY_BM;
    const int col0 = (int)(blockIdx.x % args.tiles_n) * TINY_BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

    float acc[2][4][4];
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                acc[mi][ni][r] = 0.0f;

    /* (a split's shorter last slice: kernels/gemm_dispatch.c) */
    const int kk = p.k_last > 0 && prod == p.batch - 1 ? p.k_last : p.k;
    const int steps = (kk + 15) / 16;
    tiny_frag cur, next;
    if (warp < steps)
        tiny_load<PAIR>(cur, a, b, p, kk, row0, col0, 16 * warp, g, t);
    for (int s = warp; s < steps; s += TINY_WARPS) {
        if (s + TINY_WARPS < steps)
            tiny_load<PAIR>(next, a, b, p, kk, row0, col0, 16 * (s + TINY_WARPS), g, t);
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int ni = 0; ni < 4; ni++)
                hmma_mma<BF16>(acc[mi][ni], cur.a[mi], cur.b[ni]);
        cur = next;
    }

    /* The warps' tiles into shared memory: lane (g, t) holds rows g and
     * g + 8 of each m16 tile at columns 2t, 2t + 1 of each n8 tile. */
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                *(float2 *)&part[warp][16 * mi + g + 8 * h][8 * ni + 2 * t] =
                    make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
    __syncthreads();

    tiny_sum_store<TINY_WARPS>(part, p, c, row0, col0, warp, lane);
}

extern "C" cudaError_t hgemm_mma_tiny_launch(const struct hgemm_problem *p,
                                             const struct launch_env *env)
{
    long long stride_a = p->batch > 1 ? p->stride_a : 0;
    bool pair = p->k % 2 == 0 && p->k_last % 2 == 0 && p->lda % 2 == 0 && stride_a % 2 == 0 &&
                (uintptr_t)p->a % 4 == 0;
    void (*kernel)(tiny_args<hgemm_problem>) =
        p->bf16 ? (pair ? hgemm_mma_tiny_kernel<true, true> : hgemm_mma_tiny_kernel<true, false>)
                : (pair ? hgemm_mma_tiny_kernel<false, true> : hgemm_mma_tiny_kernel<false, false>);
    return tiny_launch(kernel, p, TINY_THREADS, env->stream);
}

extern "C" cudaError_t hgemm_mma_tiny_attr(struct kernel_attr *out)
{
    return kernel_attr_of(hgemm_mma_tiny_kernel<false, true>, TINY_THREADS, 0, out);
}
