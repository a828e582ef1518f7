/* mma_thin: float16 or bfloat16 products with a few rows (M <= 16) over a
 * wide B, or a tall A over a few columns (N <= 16), at the rate the wide
 * operand streams from memory: mma.sync.m16n8k16 on fragments built in
 * registers, FP32 accumulation, float C.
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
 * The N path (N <= 16, M >= 64) streams A the same way: 8 warps a block,
 * 32 rows of A a warp, 16 bytes of a row a lane and step, which are two
 * mma's A fragments as they stand once the k are labelled to match; B's
 * few columns, staged in shared memory turned k-major a chunk of K at a
 * time, give each lane its B fragments by one 16-byte read a column
 * (mma_thin_n_kernel).
 * Any M up to 16 with N from 64, or N up to 16 with M from 64, any K; a
 * stack of products takes blockIdx.z.
 *
 * gemmcli's own; the PTX ISA gives the fragment layouts of mma.m16n8k16.
 *
 * Run and checked by (a.npy float16 or bfloat16 with at most 16 rows, or b.npy with at most 16
 * columns):
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
    MT_ROW = MT_WARP_N + 4,              /* floats a row of a warp's tile in shared memory */
    /* The N path (N <= 16, A streamed): */
    MTN_WARPS = 8,
    MTN_THREADS = MTN_WARPS * 32,
    MTN_WARP_M = 32,                     /* rows of A a warp streams: two m16 tiles */
    MTN_BLOCK_M = MTN_WARPS * MTN_WARP_M,
    MTN_MOST_N = 16,                     /* two n8 tiles */
    MTN_LEAST_M = 64,
    MTN_CHUNK = 1024,                    /* values of k of B staged at a time */
    MTN_PITCH = MTN_CHUNK + 32           /* halves a staged column: rows 64 bytes apart in the banks */
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

/* The N path: the 8 values of row r of A at k .. k + 7 (k a multiple of
 * 8), as loaded, W at a time (K % W == 0, rows aligned to W values): word
 * q holds values 2q and 2q + 1 (W >= 2), or value q in its low half (W ==
 * 1, paired when used); zeros past M and at or past k1. */
template <int W>
static __device__ __forceinline__ void mtn_a_row(const mma_thin_args &p, const uint16_t *a, int r,
                                                 int k, int k1, uint32_t (&w)[W == 1 ? 8 : 4])
{
#pragma unroll
    for (int q = 0; q < 8; q += W) {
        gemv_unit<gemv_f16, W> u = gemv_unit<gemv_f16, W>();
        if (r < p.m && k + q < k1)
            u = gemv_load<gemv_f16, W>(a + (size_t)r * p.k + k + q);
        if constexpr (W == 1) {
            w[q] = u.w[0];
        } else {
#pragma unroll
            for (int i = 0; i < W / 2; i++)
                w[q / 2 + i] = u.w[i];
        }
    }
}

/* Values 2j and 2j + 1 of such a row as one register. */
template <int W>
static __device__ __forceinline__ uint32_t mtn_pair(const uint32_t (&w)[W == 1 ? 8 : 4], int j)
{
    if constexpr (W == 1)
        return w[2 * j] | w[2 * j + 1] << 16;
    else
        return w[j];
}

/* N <= 8 NT over a tall A (mma_thin's N path): a block is 8 warps, each
 * streaming 32 rows of A (two m16 tiles) over the block's slice of K, 32
 * values of k a step.  Lane (g, t) loads 16 bytes of each of its rows, k
 * = 8t .. 8t + 7 of the step: a warp's load is 8 rows x 64 adjacent
 * bytes.  Those are the A fragments of two m16n8k16 as they stand, once
 * the k are labelled so (the mma's k 2t, 2t + 1 are the step's 8t, 8t + 1,
 * its 2t + 8, 2t + 9 the step's 8t + 2, 8t + 3; the second mma takes 8t +
 * 4 .. 8t + 7): no PRMT.  B's fragments, the same k of column g, come
 * from B staged in shared memory turned k-major, MTN_CHUNK values of k at
 * a time (each column one 16-byte read a lane and step).  Two steps of A
 * are in flight. */
template <bool BF16, int NT, int W, bool JOIN>
static __global__ void __launch_bounds__(MTN_THREADS)
mma_thin_n_kernel(mma_thin_args p)
{
    constexpr int U = W == 1 ? 8 : 4;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const long long z = blockIdx.z;
    const uint16_t *a = p.a + z * p.sa;
    const uint16_t *b = p.b + z * p.sb;
    const int rb = blockIdx.x * MTN_BLOCK_M, rw = rb + warp * MTN_WARP_M;
    const int k0 = blockIdx.y * p.slice, k1 = min(p.k, k0 + p.slice);
    __shared__ __align__(16) uint16_t bt[8 * NT][MTN_PITCH];
    float acc[2][NT][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int c = 0; c < 4; c++)
                acc[i][j][c] = 0.0f;
    /* A's rows for a step, as loaded: [m16 tile][row g, g + 8][words]. */
    struct operands {
        uint32_t a[2][2][U];
    };
    operands s0, s1;
    auto fetch = [&](operands &o, int kk) {
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                mtn_a_row<W>(p, a, rw + 16 * i + 8 * h + g, kk + 8 * t, k1, o.a[i][h]);
    };
    /* B's values of k from kc (up to MTN_CHUNK, zeros past k1 and N),
     * column by column, a thread a row of B. */
    auto stage = [&](int kc) {
        __syncthreads();
        const int kend = min(k1, kc + MTN_CHUNK);
        for (int kl = threadIdx.x; kl < MTN_CHUNK; kl += MTN_THREADS) {
            const int k = kc + kl;
#pragma unroll
            for (int n = 0; n < 8 * NT; n++)
                bt[n][kl] = k < kend && n < p.n ? __ldg(b + (size_t)k * p.n + n) : (uint16_t)0;
        }
        __syncthreads();
    };
    int kc0 = k0;
    auto multiply = [&](const operands &o, int kk) {
        const int kc = kk - kc0 + 8 * t;
#pragma unroll
        for (int j = 0; j < NT; j++) {
            const uint4 bv = *reinterpret_cast<const uint4 *>(&bt[8 * j + g][kc]);
            const uint32_t b0[2] = { bv.x, bv.y }, b1[2] = { bv.z, bv.w };
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const uint32_t a0[4] = { mtn_pair<W>(o.a[i][0], 0), mtn_pair<W>(o.a[i][1], 0),
                                         mtn_pair<W>(o.a[i][0], 1), mtn_pair<W>(o.a[i][1], 1) };
                const uint32_t a1[4] = { mtn_pair<W>(o.a[i][0], 2), mtn_pair<W>(o.a[i][1], 2),
                                         mtn_pair<W>(o.a[i][0], 3), mtn_pair<W>(o.a[i][1], 3) };
                hmma_mma<BF16>(acc[i][j], a0, b0);
                hmma_mma<BF16>(acc[i][j], a1, b1);
            }
        }
    };
    if (k0 < k1)
        fetch(s0, k0);
    if (k0 + MT_STEP < k1)
        fetch(s1, k0 + MT_STEP);
    /* (every thread walks the same steps: the stages' barriers are whole) */
    for (int kk = k0; kk < k1; kk += 2 * MT_STEP) {
        if ((kk - k0) % MTN_CHUNK == 0) {
            kc0 = kk;
            stage(kk);
        }
        multiply(s0, kk);
        if (kk + 2 * MT_STEP < k1)
            fetch(s0, kk + 2 * MT_STEP);
        if (kk + MT_STEP >= k1)
            break;
        multiply(s1, kk + MT_STEP);
        if (kk + 3 * MT_STEP < k1)
            fetch(s1, kk + 3 * MT_STEP);
    }
    /* Lane (g, t) holds rows g and g + 8 of each m16 tile at columns 2t,
     * 2t + 1 of each n8 tile. */
    const size_t count = (size_t)p.m * p.n;
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = rw + 16 * i + 8 * h + g;
            if (row >= p.m)
                continue;
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int col = 8 * j + 2 * t + e;
                    if (col >= p.n)
                        continue;
                    const size_t at = (size_t)row * p.n + col;
                    const float sum = acc[i][j][2 * h + e];
                    if (gridDim.y == 1) {
                        float *c = p.out + z * p.sc + at;
                        *c = p.beta != 0.0f ? p.alpha * sum + p.beta * *c : p.alpha * sum;
                    } else {
                        p.out[((size_t)blockIdx.y * p.batch + z) * count + at] = sum;
                    }
                }
        }
    if constexpr (JOIN) {
        const int rows = min(MTN_BLOCK_M, p.m - rb);
        float *c = p.c + z * p.sc;
        join_slices<float>(p.tickets, z * gridDim.x + blockIdx.x,
                           (long long)gridDim.x * gridDim.z, blockIdx.y, gridDim.y, p.group,
                           p.out, (long long)count * p.batch, rows * p.n, p.alpha, p.beta,
                           [&](int i, float **out) {
                               long long at = (long long)rb * p.n + i;
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

/* The N path's kernel for a type, a count of n8 tiles, a load width of A
 * and whether the launch joins its slices. */
template <bool BF16, int NT>
static const void *mma_thin_n_kernel_w(int w, bool join)
{
    switch (w) {
    case 8: return join ? (const void *)mma_thin_n_kernel<BF16, NT, 8, true>
                        : (const void *)mma_thin_n_kernel<BF16, NT, 8, false>;
    case 4: return join ? (const void *)mma_thin_n_kernel<BF16, NT, 4, true>
                        : (const void *)mma_thin_n_kernel<BF16, NT, 4, false>;
    case 2: return join ? (const void *)mma_thin_n_kernel<BF16, NT, 2, true>
                        : (const void *)mma_thin_n_kernel<BF16, NT, 2, false>;
    default: return join ? (const void *)mma_thin_n_kernel<BF16, NT, 1, true>
                         : (const void *)mma_thin_n_kernel<BF16, NT, 1, false>;
    }
}

/* Which path takes a product: the M path (a few rows over a wide B), the
 * N path (a tall A over a few columns), or none. */
enum mma_thin_path { MT_NONE, MT_BY_COLS, MT_BY_ROWS };

static enum mma_thin_path mma_thin_path_of(long long m, long long n)
{
    if (m <= MT_MOST_M && n >= MT_WARP_N)
        return MT_BY_COLS;
    if (n <= MTN_MOST_N && m >= MTN_LEAST_M)
        return MT_BY_ROWS;
    return MT_NONE;
}

static const void *mma_thin_kernel_for(enum mma_thin_path path, bool bf16, int n, int w, bool join)
{
    if (path == MT_BY_ROWS) {
        if (n <= 8)
            return bf16 ? mma_thin_n_kernel_w<true, 1>(w, join)
                        : mma_thin_n_kernel_w<false, 1>(w, join);
        return bf16 ? mma_thin_n_kernel_w<true, 2>(w, join)
                    : mma_thin_n_kernel_w<false, 2>(w, join);
    }
    return bf16 ? mma_thin_kernel_w<true>(w, join) : mma_thin_kernel_w<false>(w, join);
}

static int mma_thin_threads(enum mma_thin_path path)
{
    return path == MT_BY_ROWS ? MTN_THREADS : MT_THREADS;
}

struct mma_thin_plan {
    enum mma_thin_path path;
    int blocks;                 /* along the wide side, per product */
    int slices, slice;
};

/* As thin_plan_for: slices of at least MT_MIN_K values of k, as many as
 * fill the `slots` once, thin_balance where the blocks alone fill them
 * more than half. */
static struct mma_thin_plan mma_thin_plan_for(int m, int n, int k, int batch, long slots)
{
    struct mma_thin_plan pl;
    pl.path = mma_thin_path_of(m, n);
    pl.blocks = pl.path == MT_BY_ROWS ? ceil_div(m, MTN_BLOCK_M) : ceil_div(n, MT_BLOCK_N);
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

/* Each block's region of C a ticket: its columns' M rows (M path), its
 * rows' N columns (N path). */
static struct join_plan mma_thin_join_plan(const struct mma_thin_plan &pl, long long m,
                                           long long n, int batch)
{
    long long items = pl.path == MT_BY_ROWS
                          ? (m < (long long)MTN_BLOCK_M ? m : (long long)MTN_BLOCK_M) * n
                          : m * (n < (long long)MT_BLOCK_N ? n : (long long)MT_BLOCK_N);
    return join_plan_of((long long)pl.blocks * batch, pl.slices, items,
                        mma_thin_threads(pl.path), SLAB_TICKETS);
}

static bool mma_thin_takes(const struct gemm_problem *p)
{
    return mma_thin_path_of(p->m, p->n) != MT_NONE && p->k >= 1 && p->batch >= 1 &&
           p->k <= 0x7fffffff && p->m <= 0x7fffffff && p->n <= 0x7fffffff;
}

/* At most one m16 tile of rows over at least one warp's strip of
 * columns, or at most two n8 tiles of columns under a tall A.  A narrower
 * B leaves most of each warp's lanes idle while one warp walks its slice
 * of K alone (float16 8 x 8 x 4000000 on the M path: 36% of cuBLAS, where
 * f16_thin, whose k-lanes share a block's K, ran 189%; NVIDIA H200,
 * 2026-11-28). */
extern "C" int hgemm_mma_thin_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (mma_thin_path_of(p->m, p->n) == MT_NONE) {
        snprintf(why, n, "mma_thin computes products with M <= %d and N >= %d, or N <= %d and "
                 "M >= %d (a few rows over a wide B, or a tall A over a few columns); this "
                 "product is %lld x %lld", MT_MOST_M, MT_WARP_N, MTN_MOST_N, MTN_LEAST_M,
                 (long long)p->m, (long long)p->n);
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
static long mma_thin_slots(const void *kernel, int threads, int sm_count)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) !=
            cudaSuccess ||
        per_sm < 1)
        per_sm = MT_PER_SM;
    if (per_sm > MT_PER_SM_MOST)
        per_sm = MT_PER_SM_MOST;
    return (long)per_sm * sm_count;
}

/* For auto's model: the slices on sm_count SMs of MT_PER_SM blocks, and
 * the share of the mma work that is p's (the m16 tile's rows past M and
 * the blocks' columns past N, or the n8 tiles' columns past N and the
 * blocks' rows past M). */
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
    if (pl.path == MT_BY_ROWS)
        *busy = (double)p->n / (p->n <= 8 ? 8 : 16) * (double)p->m /
                ((double)pl.blocks * MTN_BLOCK_M);
    else
        *busy = (double)p->m / 16 * (double)p->n / ((double)pl.blocks * MT_BLOCK_N);
    return pl.slices;
}

extern "C" cudaError_t hgemm_mma_thin_launch(const struct hgemm_problem *p,
                                             const struct launch_env *env)
{
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return cudaSuccess;
    const int sm_count = env->sm_count > 0 ? env->sm_count : 132;
    const long long per = (long long)p->m * p->n;
    const enum mma_thin_path path = mma_thin_path_of(p->m, p->n);
    const int threads = mma_thin_threads(path);
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
        /* The wide operand's loads (B's on the M path, A's on the N
         * path): 16 bytes where every row starts on 16, else 8, 4, 2. */
        const uint16_t *wide = path == MT_BY_ROWS ? a : b;
        const long long row = path == MT_BY_ROWS ? p->k : p->n;
        const long long stride = path == MT_BY_ROWS ? p->stride_a : p->stride_b;
        int w = 8;
        while (w > 1 && !(row % w == 0 && thin_aligned(wide, 2 * w) && (!stack || stride % w == 0)))
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
            mma_thin_slots(mma_thin_kernel_for(path, p->bf16, p->n, w, false), threads,
                           sm_count));
        args.slice = pl.slice;
        dim3 grid((unsigned)pl.blocks, (unsigned)pl.slices, (unsigned)batch);
        err = thin_launch_sliced<float>(
            args, [&](bool join) { return mma_thin_kernel_for(path, p->bf16, p->n, w, join); },
            grid, threads, mma_thin_join_plan(pl, p->m, p->n, batch), c, per, stride_c,
            p->alpha, p->beta, env);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

/* The resources of the M path's kernel of 16-byte loads. */
extern "C" cudaError_t hgemm_mma_thin_attr(struct kernel_attr *out)
{
    return kernel_attr_of(mma_thin_kernel<false, 8, false>, MT_THREADS, 0, out);
}
