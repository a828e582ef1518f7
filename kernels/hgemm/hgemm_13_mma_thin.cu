/* mma_thin: float16 or bfloat16 products with a few rows (M <= 16) over a
 * wide B, at the rate B streams from memory: mma.sync.m16n8k16 on
 * fragments built in registers, FP32 accumulation, float C.
 *
 * Why another stage.  Such a product is B read once (K x N values) and
 * M multiply-adds per value of B.  f16_thin widens each value to float
 * and does the M multiply-adds on the CUDA cores: past a handful of rows
 * those, not the memory, set its time (the README gives the figures).
 * The mma.sync and Hopper stages have the tensor cores but tiles of 128
 * rows or more, most of them empty for a few rows, and a grid of few
 * tiles along N.  This stage gives the tensor cores B as it arrives:
 *
 *   - a block is 4 warps, each streaming 64 columns of B over the block's
 *     slice of K (blockIdx.y), 32 values of k a step; A (at most 16 x K,
 *     read by every block) comes through L1 as mma fragments, rows past M
 *     as zeros: one m16 tile.  (Two tiles, up to 32 rows, took 230 to 255
 *     registers a thread with two steps in flight, and spilled.);
 *   - lane l (g = l / 4, t = l % 4) loads rows 2t, 2t + 1, 2t + 8, 2t + 9
 *     of each 16 values of k at its 8 columns 8g .. 8g + 7: 16 bytes a
 *     row (8 or 4 where N or the alignment forbid 16), so a warp's load
 *     is 4 rows x 128 adjacent bytes.  The B fragment of m16n8k16 wants,
 *     in one register, two values of k of one column; PRMT pairs row 2t
 *     with 2t + 1 (and 2t + 8 with 2t + 9) column by column, so the
 *     lane's 8 columns become the column g of 8 n8 tiles, tile e holding
 *     columns 8g + e (g = 0 .. 7): no shared memory and no shuffle on the
 *     way in.  A's fragment is the usual one (its k are the same labels);
 *   - tile e's result lands in lane l at columns 16t + e and 16t + 8 + e,
 *     so each lane ends holding 16 adjacent columns of its rows; the
 *     warp's results go out through shared memory, a row's 64 columns
 *     per store;
 *   - two steps are in flight, B's rows and A's fragments (as loaded,
 *     paired only when used): the one after next is fetched as soon as a
 *     step is multiplied, 8 KB of B a warp;
 *   - K is cut into slices over blockIdx.y as thin cuts it (as many as
 *     fill the GPU once, at least 128 values of k each; thin_balance
 *     where the blocks alone fill it more than half), the slices' FP32
 *     slabs added in a fixed order by the launch's last block of each
 *     region (join.cuh) or by a second launch.
 * Any M up to 16, N from 64, any K; a stack of products takes blockIdx.z.
 *
 * gemmcli's own; the PTX ISA gives the fragment layouts of mma.m16n8k16.
 *
 * Run and checked by (a.npy float16 or bfloat16 with at most 16 rows):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel mma_thin --verify --repeat 20 */
#include <stdint.h>

#include "kernels/gemm.h"
#include "kernels/hgemm/hmma_mma.cuh"
#include "kernels/memory_bound/thin.cuh"

enum {
    MT_WARPS = 4,
    MT_THREADS = MT_WARPS * 32,
    MT_WARP_N = 64,                      /* columns of B a warp streams */
    MT_BLOCK_N = MT_WARPS * MT_WARP_N,
    MT_STEP = 32,                        /* values of k a step: two k16 of mma */
    MT_MIN_K = 128,                      /* values of k a slice at least */
    MT_MOST_M = 16,
    MT_PER_SM = 4,                       /* blocks an SM, where no device says */
    MT_PER_SM_MOST = 8,                  /* ... and at most, for the workspace's bound */
    MT_ROW = MT_WARP_N + 4               /* floats a row of a warp's tile in shared memory */
};

struct mma_thin_args {
    int m, n, k;
    int slice;                  /* values of k per blockIdx.y */
    int batch;                  /* products in this launch */
    int a_pairs;                /* A's rows even and 4-byte aligned: pairs of k by one load */
    const uint16_t *a, *b;
    float *out;                 /* C when gridDim.y == 1, else the slabs */
    long long sa, sb, sc;
    float alpha, beta;
    float *c;                   /* C, where the launch joins its slices */
    unsigned *tickets;
    int group;                  /* slices a ticket; 0: a second launch joins */
};

/* Two values of k of row r of A (r < M) at k and k + 1, zeros at or
 * past k1: one 4-byte load into lo where A's rows hold whole aligned pairs
 * (hi 0), else a 2-byte load into each; the register is lo | hi << 16,
 * made when it is used, so that nothing waits for the loads here. */
static __device__ __forceinline__ void mt_a_pair(const mma_thin_args &p, const uint16_t *a,
                                                 int r, int k, int k1, uint32_t (&v)[2])
{
    v[0] = 0;
    v[1] = 0;
    if (r >= p.m || k >= k1)
        return;
    const uint16_t *at = a + (size_t)r * p.k + k;
    if (p.a_pairs) {
        v[0] = __ldg(reinterpret_cast<const unsigned *>(at));
    } else {
        v[0] = __ldg(at);
        if (k + 1 < k1)
            v[1] = __ldg(at + 1);
    }
}

/* The 8 values of row k at columns j .. j + 7, W at a time (N % W == 0,
 * rows aligned to W values), zeros past N or at or past k1. */
template <int W>
static __device__ __forceinline__ void mt_b_row(const mma_thin_args &p, const uint16_t *b, int k,
                                                int k1, int j, uint32_t (&w)[4])
{
    const uint16_t *row = b + (size_t)k * p.n + j;
#pragma unroll
    for (int q = 0; q < 8; q += W) {
        gemv_unit<gemv_f16, W> u = gemv_unit<gemv_f16, W>();
        if (k < k1 && j + q < p.n)
            u = gemv_load<gemv_f16, W>(row + q);
        if constexpr (W == 1) {
            if (q % 2 == 0)
                w[q / 2] = u.w[0];
            else
                w[q / 2] |= u.w[0] << 16;
        } else {
#pragma unroll
            for (int i = 0; i < W / 2; i++)
                w[q / 2 + i] = u.w[i];
        }
    }
}

/* One m16 tile of rows (M <= 16), B loaded W values at a time. */
template <bool BF16, int W, bool JOIN>
static __global__ void __launch_bounds__(MT_THREADS)
mma_thin_kernel(mma_thin_args p)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const long long z = blockIdx.z;
    const uint16_t *a = p.a + z * p.sa;
    const uint16_t *b = p.b + z * p.sb;
    const int jb = blockIdx.x * MT_BLOCK_N, jw = jb + warp * MT_WARP_N, jl = jw + 8 * g;
    const int k0 = blockIdx.y * p.slice, k1 = min(p.k, k0 + p.slice);
    float acc[8][4];
#pragma unroll
    for (int e = 0; e < 8; e++)
#pragma unroll
        for (int c = 0; c < 4; c++)
            acc[e][c] = 0.0f;
    /* A step's operands, as loaded: row r of B's at kk + 16 (r / 4) +
     * {2t, 2t + 1, 2t + 8, 2t + 9}[r % 4], and A's fragments for its two
     * k16 halves.  Two steps are in flight: the one after next is fetched
     * into a buffer as soon as that buffer's step is multiplied. */
    struct operands {
        uint32_t b[8][4];
        uint32_t a[2][4][2];
    };
    operands s0, s1;
    auto fetch = [&](operands &o, int kk) {
#pragma unroll
        for (int r = 0; r < 8; r++)
            mt_b_row<W>(p, b, kk + 16 * (r / 4) + 2 * t + (r % 4 / 2) * 8 + r % 2, k1, jl,
                        o.b[r]);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int kb = kk + 16 * h + 2 * t;
            mt_a_pair(p, a, g, kb, k1, o.a[h][0]);
            mt_a_pair(p, a, g + 8, kb, k1, o.a[h][1]);
            mt_a_pair(p, a, g, kb + 8, k1, o.a[h][2]);
            mt_a_pair(p, a, g + 8, kb + 8, k1, o.a[h][3]);
        }
    };
    auto multiply = [&](const operands &o) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            uint32_t af[4];
#pragma unroll
            for (int q = 0; q < 4; q++)
                af[q] = o.a[h][q][0] | o.a[h][q][1] << 16;
#pragma unroll
            for (int e = 0; e < 8; e++) {
                /* column e of the lane's 8: the low or high half of word e / 2 */
                const unsigned sel = e % 2 ? 0x7632u : 0x5410u;
                uint32_t bf[2];
                bf[0] = __byte_perm(o.b[4 * h][e / 2], o.b[4 * h + 1][e / 2], sel);
                bf[1] = __byte_perm(o.b[4 * h + 2][e / 2], o.b[4 * h + 3][e / 2], sel);
                hmma_mma<BF16>(acc[e], af, bf);
            }
        }
    };
    if (k0 < k1)
        fetch(s0, k0);
    if (k0 + MT_STEP < k1)
        fetch(s1, k0 + MT_STEP);
    for (int kk = k0; kk < k1; kk += 2 * MT_STEP) {
        multiply(s0);
        if (kk + 2 * MT_STEP < k1)
            fetch(s0, kk + 2 * MT_STEP);
        if (kk + MT_STEP >= k1)
            break;
        multiply(s1);
        if (kk + 3 * MT_STEP < k1)
            fetch(s1, kk + 3 * MT_STEP);
    }
    /* The warp's 16 x 64 results through shared memory: lane (g, t)
     * holds rows g, g + 8 at columns 16t + e and 16t + 8 + e of tile e. */
    __shared__ float tile[MT_WARPS][16][MT_ROW];
    float(*tw)[MT_ROW] = tile[warp];
#pragma unroll
    for (int e = 0; e < 8; e++) {
        tw[g][16 * t + e] = acc[e][0];
        tw[g][16 * t + 8 + e] = acc[e][1];
        tw[g + 8][16 * t + e] = acc[e][2];
        tw[g + 8][16 * t + 8 + e] = acc[e][3];
    }
    __syncwarp();
    const size_t count = (size_t)p.m * p.n;
    const int rows = min(16, p.m);
    for (int r = 0; r < rows; r++)
#pragma unroll
        for (int cc = lane; cc < MT_WARP_N; cc += 32) {
            const int col = jw + cc;
            if (col >= p.n)
                continue;
            const size_t at = (size_t)r * p.n + col;
            const float sum = tw[r][cc];
            if (gridDim.y == 1) {
                float *c = p.out + z * p.sc + at;
                *c = p.beta != 0.0f ? p.alpha * sum + p.beta * *c : p.alpha * sum;
            } else {
                p.out[((size_t)blockIdx.y * p.batch + z) * count + at] = sum;
            }
        }
    if constexpr (JOIN) {
        const int w = min(MT_BLOCK_N, p.n - jb);
        float *c = p.c + z * p.sc;
        join_slices<float>(p.tickets, z * gridDim.x + blockIdx.x,
                           (long long)gridDim.x * gridDim.z, blockIdx.y, gridDim.y, p.group,
                           p.out, (long long)count * p.batch, p.m * w, p.alpha, p.beta,
                           [&](int i, float **out) {
                               long long at = (long long)(i / w) * p.n + jb + i % w;
                               *out = c + at;
                               return (long long)z * count + at;
                           });
    }
}

/* The kernel for a type, a load width and whether the launch joins its
 * slices. */
template <bool BF16>
static const void *mma_thin_kernel_w(int w, bool join)
{
    switch (w) {
    case 8: return join ? (const void *)mma_thin_kernel<BF16, 8, true>
                        : (const void *)mma_thin_kernel<BF16, 8, false>;
    case 4: return join ? (const void *)mma_thin_kernel<BF16, 4, true>
                        : (const void *)mma_thin_kernel<BF16, 4, false>;
    case 2: return join ? (const void *)mma_thin_kernel<BF16, 2, true>
                        : (const void *)mma_thin_kernel<BF16, 2, false>;
    default: return join ? (const void *)mma_thin_kernel<BF16, 1, true>
                         : (const void *)mma_thin_kernel<BF16, 1, false>;
    }
}

static const void *mma_thin_kernel_for(bool bf16, int w, bool join)
{
    return bf16 ? mma_thin_kernel_w<true>(w, join) : mma_thin_kernel_w<false>(w, join);
}

struct mma_thin_plan {
    int blocks;                 /* along N, per product */
    int slices, slice;
};

/* As thin_plan_for's M path: slices of at least MT_MIN_K values of k, as
 * many as fill the `slots` once, thin_balance where the blocks alone fill
 * them more than half. */
static struct mma_thin_plan mma_thin_plan_for(int m, int n, int k, int batch, long slots)
{
    struct mma_thin_plan pl;
    pl.blocks = ceil_div(n, MT_BLOCK_N);
    long blocks = (long)pl.blocks * batch;
    long most = k / MT_MIN_K;
    if (most < 1)
        most = 1;
    long want = slots / blocks;
    if (want > most)
        want = most;
    if (want > THIN_MOST_SLICES)
        want = THIN_MOST_SLICES;
    if (want < 1)
        want = 1;
    if (blocks * 2 > slots)
        want = thin_balance<gemv_f16>(m, n, k, blocks, most, slots);
    long slice = (k + want - 1) / want;
    slice = (slice + MT_STEP - 1) / MT_STEP * MT_STEP;
    pl.slice = (int)(slice < (long)MT_STEP ? (long)MT_STEP : slice);
    pl.slices = k > 0 ? (int)((k + pl.slice - 1) / pl.slice) : 1;
    return pl;
}

static struct join_plan mma_thin_join_plan(const struct mma_thin_plan &pl, long long m,
                                           long long n, int batch)
{
    long long cols = n < (long long)MT_BLOCK_N ? n : (long long)MT_BLOCK_N;
    return join_plan_of((long long)pl.blocks * batch, pl.slices, m * cols, MT_THREADS,
                        SLAB_TICKETS);
}

static bool mma_thin_takes(const struct gemm_problem *p)
{
    return p->m >= 1 && p->m <= MT_MOST_M && p->n >= 1 && p->k >= 1 && p->batch >= 1 &&
           p->k <= 0x7fffffff;
}

/* At most one m16 tile of rows, and at least one warp's strip of columns:
 * a narrower B leaves most of each warp's lanes idle while one warp walks
 * its slice of K alone (float16 8 x 8 x 4000000: 36% of cuBLAS, where
 * f16_thin, whose k-lanes share a block's K, ran 189%; NVIDIA H200,
 * 2026-11-28). */
extern "C" int hgemm_mma_thin_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->m > MT_MOST_M || p->n < MT_WARP_N) {
        snprintf(why, n, "mma_thin computes products with M <= %d and N >= %d (one m16 tile "
                 "of rows, %d columns a warp); this product is %lld x %lld", MT_MOST_M,
                 MT_WARP_N, MT_WARP_N, (long long)p->m, (long long)p->n);
        return 0;
    }
    return 1;
}

/* The slabs' upper bound: the plan for 256 SMs of MT_PER_SM_MOST blocks
 * each, more than any GPU holds (or thin_balance's count, where the
 * blocks fill those). */
extern "C" size_t hgemm_mma_thin_workspace(const struct gemm_problem *p)
{
    if (!mma_thin_takes(p))
        return 0;
    int batch = p->batch < THIN_MOST_Z ? (int)p->batch : THIN_MOST_Z;
    struct mma_thin_plan pl = mma_thin_plan_for((int)p->m, (int)p->n, (int)p->k, batch,
                                                256L * MT_PER_SM_MOST);
    long slices = pl.slices;
    if (slices < THIN_BALANCE_MOST)
        slices = p->k / MT_MIN_K < (long)THIN_BALANCE_MOST ? p->k / MT_MIN_K
                                                            : (long)THIN_BALANCE_MOST;
    if (slices < pl.slices)
        slices = pl.slices;
    return slices > 1 ? (size_t)slices * batch * p->m * p->n * sizeof(float) : 0;
}

/* The blocks of a kernel the device holds at once, at most MT_PER_SM_MOST
 * an SM (the workspace's bound). */
static long mma_thin_slots(const void *kernel, int sm_count)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, MT_THREADS, 0) !=
            cudaSuccess ||
        per_sm < 1)
        per_sm = MT_PER_SM;
    if (per_sm > MT_PER_SM_MOST)
        per_sm = MT_PER_SM_MOST;
    return (long)per_sm * sm_count;
}

/* For auto's model: the slices on sm_count SMs of MT_PER_SM blocks, and
 * the share of the mma work that is p's (the m16 tiles' rows past M, the
 * blocks' columns past N). */
extern "C" int64_t hgemm_mma_thin_slices(const struct gemm_problem *p, int sm_count,
                                         int *joined, double *busy)
{
    *joined = 0;
    *busy = 1;
    if (!mma_thin_takes(p) || sm_count < 1)
        return 1;
    int batch = p->batch < THIN_MOST_Z ? (int)p->batch : THIN_MOST_Z;
    struct mma_thin_plan pl = mma_thin_plan_for((int)p->m, (int)p->n, (int)p->k, batch,
                                                (long)MT_PER_SM * sm_count);
    *joined = pl.slices > 1 && mma_thin_join_plan(pl, p->m, p->n, batch).group > 0;
    *busy = (double)p->m / 16 * (double)p->n /
            ((double)pl.blocks * MT_BLOCK_N);
    return pl.slices;
}

extern "C" cudaError_t hgemm_mma_thin_launch(const struct hgemm_problem *p,
                                             const struct launch_env *env)
{
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return cudaSuccess;
    const int sm_count = env->sm_count > 0 ? env->sm_count : 132;
    const long long per = (long long)p->m * p->n;
    for (int b0 = 0; b0 < p->batch; b0 += THIN_MOST_Z) {
        int batch = p->batch - b0 < THIN_MOST_Z ? p->batch - b0 : THIN_MOST_Z;
        long long stride_c = batch > 1 ? p->stride_c : per;
        float *c = p->c + (long long)b0 * p->stride_c;
        cudaError_t err;
        if (p->k == 0) {   /* C = beta C: an empty sum, 0 whatever alpha is */
            err = gemv_reduce<float>(c, NULL, per * batch, 0, per, stride_c, 0.0f, p->beta,
                                     env->stream);
            if (err != cudaSuccess)
                return err;
            continue;
        }
        const bool stack = batch > 1;
        const uint16_t *a = p->a + (long long)b0 * p->stride_a;
        const uint16_t *b = p->b + (long long)b0 * p->stride_b;
        /* B's loads: 16 bytes where every row starts on 16, else 8, 4, 2. */
        int w = 8;
        while (w > 1 && !(p->n % w == 0 && thin_aligned(b, 2 * w) &&
                          (!stack || p->stride_b % w == 0)))
            w /= 2;
        mma_thin_args args;
        args.m = p->m;
        args.n = p->n;
        args.k = p->k;
        args.batch = batch;
        args.a_pairs = p->k % 2 == 0 && thin_aligned(a, 4) && (!stack || p->stride_a % 2 == 0);
        args.a = a;
        args.b = b;
        args.sa = p->stride_a;
        args.sb = p->stride_b;
        args.sc = p->stride_c;
        args.alpha = p->alpha;
        args.beta = p->beta;
        args.c = c;
        struct mma_thin_plan pl = mma_thin_plan_for(
            p->m, p->n, p->k, batch,
            mma_thin_slots(mma_thin_kernel_for(p->bf16, w, false), sm_count));
        args.slice = pl.slice;
        dim3 grid((unsigned)pl.blocks, (unsigned)pl.slices, (unsigned)batch);
        err = thin_launch_sliced<float>(
            args, [&](bool join) { return mma_thin_kernel_for(p->bf16, w, join); }, grid,
            MT_THREADS, mma_thin_join_plan(pl, p->m, p->n, batch), c, per, stride_c, p->alpha,
            p->beta, env);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

/* The resources of the kernel of 16-byte loads. */
extern "C" cudaError_t hgemm_mma_thin_attr(struct kernel_attr *out)
{
    return kernel_attr_of(mma_thin_kernel<false, 8, false>, MT_THREADS, 0, out);
}
