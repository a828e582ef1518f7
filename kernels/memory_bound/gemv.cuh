/* What the gemv stages share (sgemm_22_gemv.cu float, hgemm_08_gemv.cu
 * float16 and bfloat16, dgemm_03_gemv.cu double): the kernels for a matrix
 * times a column vector and a row vector times a matrix, their launch and
 * the fixed-order sum of K's slices, as templates over the operand type.
 * A stage file names its type and turns its family's problem into a
 * gemv_args; nothing else differs.
 *
 * Types.  A type (gemv_f32, gemv_f16, gemv_bf16, gemv_f64) says how its
 * elements are stored, how wide they become (float; double for f64: the
 * accumulator, and the type of C and of the partial sums) and how many
 * fill 16 bytes (its `vec`: 4, 8, 8, 2).  Loads move W elements at a
 * time, W * size bytes (16, 8, 4 or 2) as raw 32-bit words; widen turns
 * them into accumulators (float16 by HADD2.F32, bfloat16 by a shift or a
 * mask, double by pairing words).  A product of two float16 or bfloat16
 * values is exact in float, so the 16-bit types lose nothing before the
 * sums.
 *
 * Width.  The launcher takes the widest W (vec, vec / 2, ... 1) for which
 * every unit it loads is aligned: the bases, the rows (lda or ldb), the
 * strides of a stack and, for the columns of B, N itself.  A ragged K
 * (1001) keeps 16-byte loads where the rows still start aligned (a single
 * row, a dot product): the last K mod W values of a row are single loads.
 * Narrower loads come with more of them per step (unroll * vec / W, at
 * most 16), so the bytes in flight per thread stay about the same.
 *
 * Rows (N = 1, C = A b; a dot product M = N = 1 too).  A warp per row of
 * A, or per slice of a row: tasks s * rows + g over the rows g of every
 * product of the stack and the slices s of K, so a block's 8 warps take
 * 8 rows of one slice, or 8 slices of one row when the rows are few.
 * Each lane loads `unroll` units of A and of b (4 of 16 bytes each at
 * full width) before its multiply-adds, into as many accumulators, added
 * in order and then across the warp by shuffles in a fixed order.  K is
 * cut when the rows fill less than half a wave (3 blocks of 8 warps per
 * SM): 64 x 1 x 10^6 takes 49 slices on 132 SMs, a dot product of 4 x
 * 10^6 floats 3125, each slice at least two full steps of every lane.
 *
 * Cols (M = 1, C = a B).  A thread per W adjacent columns of B, `unroll`
 * rows of B (8 of 16 bytes at full width) and as many values of a loaded
 * before the multiply-adds; blocks of 128 threads, fewer when N is short,
 * the blocks of columns of every product in one index.  K is cut into
 * slices (blockIdx.y) until a wave is busy (8 blocks of 128 per SM), each
 * of at least GEMV_MIN_K values of k, with slabs of partial sums that
 * weigh at most 1/64 of B, or 1 MiB in up to 256 slices where that is
 * more (each slab is N accumulators, written and read once: 1x8192x8192
 * in float16 takes 64 slices, 2 + 2 MiB beside B's 128).  A small B is
 * cut fine: a block's threads wait on their chain of loads along K, not
 * on the bandwidth (float16 1x1000x1000 took 7 slices of 144 on 7 blocks
 * by the 1/64 alone, and takes 42 slices of 24, 3 steps a thread; the
 * README gives the times).  The cap of 256 keeps a few columns over a
 * huge K in the slices 1/64 of B gives (1x46x52479: 386 in float16; the
 * 1 MiB alone made 2187, which lost to 386).  A B of at most 16 threads'
 * columns (1 x 8 in float16 is one thread's 16 bytes) would leave most of
 * a warp idle and each lane a long chain of loads down K: there the
 * warp's other lanes take rows too, 32 / 2^ceil(log2(threads)) of them
 * along K, so that a warp's load is whole rows of B, and the lanes of a
 * column add their sums by shuffles in a fixed order (gemv_cols_lanes);
 * such a slice holds GEMV_MIN_K rows a lane.
 *
 * Slices.  A split K writes one slab of partial sums per slice.  Where
 * the sum is small, the launch adds them itself (join.cuh): the last warp
 * of a row (rows), the last block of a block's columns (cols), in one
 * level or, for one result a thread, in two, with the slabs and tickets
 * kept per stream (slab_space.h).  Otherwise the slabs come from the
 * stream's pool (the registry's workspace is their bound) and
 * gemv_reduce_kernel adds them in a fixed order: group y of a block sums
 * slices y, y + G, ... in turn, then the G group sums meet in a fixed
 * tree in shared memory; a row of 3125 slices is summed by 256 threads,
 * not 1.  Whichever adds them applies alpha and beta; so does a kernel
 * that wrote C itself.  K = 0 is the reduce over no slice with alpha 0:
 * C = beta C0 (or 0).  No result depends on scheduling.
 *
 * Registers.  Left alone, ptxas starts the multiply-adds of a step's
 * first loads before issuing its last ones, holding about half of them in
 * flight (float: 60 registers for rows, 32 for columns).  The step loops
 * are not unrolled further (#pragma unroll 1), and the launch bounds allow
 * 3 blocks per SM for rows and 8 for columns (up to 85 and 64 registers):
 * the loads of a step then issue before its first multiply-add (all but
 * 2 of 16 in the 16-bit column loop, 3 in the double one).  ptxas (sm_90,
 * CUDA 13.0), the main loops at full width: float rows 35 instructions (8
 * LDG.128, 16 FFMA), 76 registers; float columns 85 (8 LDG.128 of B, 8
 * LDG of a, 32 FFMA), 60; float16 and bfloat16 rows 115 (8 LDG.128, 32
 * FFMA, 64 conversions), 72; columns 190 (64 FFMA), 64; double rows 23 (8
 * LDG.128, 8 DFMA), 77; columns 69 (16 DFMA), 64.  No kernel spills.
 *
 * When beta == 0, C is not read.  b (N = 1) is read as K adjacent values:
 * ldb must be 1 there.  Indices into a stack are 64-bit; grids walk on in
 * steps of themselves, so no shape exceeds a launch.
 *
 * gemmcli's own, for the memory-bound shapes.  Run through its stages
 * (a.npy a row vector, or b.npy a column vector), e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel gemv --verify --repeat 20 */
#ifndef GC_KERNELS_GEMV_CUH
#define GC_KERNELS_GEMV_CUH

#include <stdint.h>
#include <stdio.h>
#include <cuda_fp16.h>

#include "kernels/common.cuh"
#include "kernels/gemm.h"
#include "kernels/memory_bound/join.cuh"
#include "kernels/memory_bound/slab_space.h"

enum {
    GEMV_ROWS_THREADS = 256,
    GEMV_WARPS = GEMV_ROWS_THREADS / 32,
    GEMV_ROWS_BLOCKS = 3,       /* rows: blocks per SM the registers allow; a wave */
    GEMV_ROWS_UNROLL = 4,       /* units of A (and of b) per lane per step, at full width */
    GEMV_COLS_THREADS = 128,
    GEMV_COLS_BLOCKS = 8,       /* cols: blocks per SM the registers allow; a wave */
    GEMV_COLS_UNROLL = 8,       /* rows of B per thread per step, at full width */
    GEMV_MOST_UNROLL = 16,
    GEMV_REDUCE_THREADS = 256,
    GEMV_MIN_K = 16,            /* cols: values of k per slice at least (2 steps a thread) */
    GEMV_PARTIAL_SHARE = 64,    /* cols: the slabs are at most this share of B's bytes, */
    GEMV_PARTIAL_FLOOR = 1 << 20,   /* or this many bytes where that is more, */
    GEMV_FLOOR_SLICES = 256,    /* in at most this many slices */
    GEMV_MOST_SLICES = 4096
};

/* ---- the types ---- */

struct gemv_f32 {
    typedef float elem;
    typedef float acc;
    static constexpr int vec = 4;
    template <int W>
    static __device__ __forceinline__ void widen(const unsigned *w, float *out)
    {
#pragma unroll
        for (int i = 0; i < W; i++)
            out[i] = __uint_as_float(w[i]);
    }
};

struct gemv_f64 {
    typedef double elem;
    typedef double acc;
    static constexpr int vec = 2;
    template <int W>
    static __device__ __forceinline__ void widen(const unsigned *w, double *out)
    {
#pragma unroll
        for (int i = 0; i < W; i++)
            out[i] = __hiloint2double((int)w[2 * i + 1], (int)w[2 * i]);
    }
};

/* IEEE binary16, as bits. */
struct gemv_f16 {
    typedef uint16_t elem;
    typedef float acc;
    static constexpr int vec = 8;
    template <int W>
    static __device__ __forceinline__ void widen(const unsigned *w, float *out)
    {
#pragma unroll
        for (int i = 0; i < W; i++)
            out[i] = __half2float(
                __ushort_as_half((unsigned short)(i % 2 ? w[i / 2] >> 16 : w[i / 2] & 0xffffu)));
    }
};

/* bfloat16, as bits: the high half of a float. */
struct gemv_bf16 {
    typedef uint16_t elem;
    typedef float acc;
    static constexpr int vec = 8;
    template <int W>
    static __device__ __forceinline__ void widen(const unsigned *w, float *out)
    {
#pragma unroll
        for (int i = 0; i < W; i++)
            out[i] = __uint_as_float(i % 2 ? w[i / 2] & 0xffff0000u : w[i / 2] << 16);
    }
};

/* W elements of E as raw words (the low half of w[0] for one 16-bit one). */
template <typename E, int W>
struct gemv_unit {
    static constexpr int bytes = W * (int)sizeof(typename E::elem);
    static_assert(bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16,
                  "a unit is one load of 2, 4, 8 or 16 bytes");
    unsigned w[bytes >= 4 ? bytes / 4 : 1];
};

/* The unit at p, which is aligned to its size. */
template <typename E, int W>
static __device__ __forceinline__ gemv_unit<E, W> gemv_load(const typename E::elem *p)
{
    gemv_unit<E, W> u;
    constexpr int bytes = gemv_unit<E, W>::bytes;
    if constexpr (bytes == 16) {
        uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
        u.w[0] = v.x;
        u.w[1] = v.y;
        u.w[2] = v.z;
        u.w[3] = v.w;
    } else if constexpr (bytes == 8) {
        uint2 v = __ldg(reinterpret_cast<const uint2 *>(p));
        u.w[0] = v.x;
        u.w[1] = v.y;
    } else if constexpr (bytes == 4) {
        u.w[0] = __ldg(reinterpret_cast<const unsigned *>(p));
    } else {
        u.w[0] = __ldg(reinterpret_cast<const unsigned short *>(p));
    }
    return u;
}

/* One element, widened. */
template <typename E>
static __device__ __forceinline__ typename E::acc gemv_load1(const typename E::elem *p)
{
    typename E::acc v;
    E::template widen<1>(gemv_load<E, 1>(p).w, &v);
    return v;
}

static __device__ __forceinline__ float gemv_fma(float x, float y, float s)
{
    return fmaf(x, y, s);
}

static __device__ __forceinline__ double gemv_fma(double x, double y, double s)
{
    return fma(x, y, s);
}

/* Units per lane (rows) or rows of B per thread (cols) per step at width W. */
template <typename E, int W>
struct gemv_unroll {
    static constexpr int rows = GEMV_ROWS_UNROLL * E::vec / W < GEMV_MOST_UNROLL
                                    ? GEMV_ROWS_UNROLL * E::vec / W : GEMV_MOST_UNROLL;
    static constexpr int cols = GEMV_COLS_UNROLL * E::vec / W < GEMV_MOST_UNROLL
                                    ? GEMV_COLS_UNROLL * E::vec / W : GEMV_MOST_UNROLL;
};

/* ---- the kernels ---- */

/* One launch: the problem (strides 0 where the stack has one product),
 * and the plan the launcher made for it. */
template <typename E>
struct gemv_args {
    const typename E::elem *a, *b;
    typename E::acc *c;
    typename E::acc alpha, beta;
    int m, n, k;
    long long lda, ldb;             /* elements between rows of A, of B */
    long long batch, stride_a, stride_b, stride_c;
    int slices, slice;              /* K's slices (cols: blockIdx.y), values of k in each */
    int col_blocks;                 /* cols: blocks of columns per product */
    int k_lanes;                    /* cols: lanes of a warp along K (1: a thread a column) */
    typename E::acc *partial;       /* the slices' slabs; NULL: one slice, into C */
    unsigned *tickets;              /* the join's (join.cuh), where this launch joins */
    int group;                      /* its slices a ticket; 0: a second launch joins */
};

/* C (or the slab of the slice) for element `at` of the flattened stack,
 * which is (product z, offset `off` in it). */
template <typename T>
static __device__ __forceinline__ void gemv_put(T *c, long long stride_c, T alpha, T beta,
                                                T *partial, long long slab, long long at,
                                                long long z, long long off, T sum)
{
    if (partial) {
        partial[slab + at] = sum;
    } else {
        T *out = c + z * stride_c + off;
        *out = beta != T(0) ? alpha * sum + beta * *out : alpha * sum;
    }
}

/* One step of gemv_dot: U units of x and of y a lane, 32 units apart from
 * xq and yq, all loaded before the multiply-adds, unit u into s[u]; with
 * GUARD, those of index q + 32 u at or past `units` read as 0. */
template <typename E, int W, int U, bool GUARD>
static __device__ __forceinline__ void gemv_dot_step(const typename E::elem *xq,
                                                     const typename E::elem *yq, int q,
                                                     int units, typename E::acc *s)
{
    typedef typename E::acc T;
    gemv_unit<E, W> xu[U], yu[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (!GUARD || q + 32 * u < units) {
            xu[u] = gemv_load<E, W>(xq + 32 * u * W);
            yu[u] = gemv_load<E, W>(yq + 32 * u * W);
        } else {
            xu[u] = gemv_unit<E, W>();   /* 0 bits: 0 in every type */
            yu[u] = gemv_unit<E, W>();
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        T xv[W], yv[W];
        E::template widen<W>(xu[u].w, xv);
        E::template widen<W>(yu[u].w, yv);
#pragma unroll
        for (int i = 0; i < W; i++)
            s[u] = gemv_fma(xv[i], yv[i], s[u]);
    }
}

/* The dot product of len values at x and y (both aligned to W values),
 * this lane's share of it: units lane, lane + 32, ... */
template <typename E, int W, int U>
static __device__ __forceinline__ typename E::acc gemv_dot(const typename E::elem *x,
                                                           const typename E::elem *y, int len,
                                                           int lane)
{
    typedef typename E::acc T;
    T s[U];
#pragma unroll
    for (int u = 0; u < U; u++)
        s[u] = T(0);
    const int units = len / W;
    const typename E::elem *xq = x + lane * W, *yq = y + lane * W;
    int q = lane;
#pragma unroll 1
    for (; q + 32 * (U - 1) < units; q += 32 * U, xq += 32 * U * W, yq += 32 * U * W)
        gemv_dot_step<E, W, U, false>(xq, yq, q, units, s);
    /* The rest, fewer than U units a lane: one step, its loads all issued
     * before its multiply-adds, absent units 0.  Taken a unit at a time,
     * a short row waited on its loads one after another: float 17463 x 1
     * x 141 (rows of 141 values, one a load, 5 a lane) took 16.3 us, in
     * one step 12.8, cuBLAS 12.2-13.4; float64 16.4 and 13.2 against
     * 14.1-15.5 (NVIDIA H100, 2026-11-27, `mul --repeat 30`, two runs). */
    if (q < units)
        gemv_dot_step<E, W, U, true>(xq, yq, q, units, s);
    if constexpr (W > 1) {
        int t = units * W + lane;   /* the last len mod W (< 32) values */
        if (t < len)
            s[0] = gemv_fma(gemv_load1<E>(x + t), gemv_load1<E>(y + t), s[0]);
    }
    T sum = s[0];
#pragma unroll
    for (int u = 1; u < U; u++)
        sum += s[u];
    return sum;
}

/* Rows: C[z][r] = alpha (A_z b_z)[r] + beta C0, or the slice's partial,
 * a warp per task: slice s of row g = z m + r of the stack, task s * rows
 * + g (the warps of a block take the rows of one slice, or the slices of
 * one row when the rows are few). */
template <typename E, int W, int U>
static __global__ void __launch_bounds__(GEMV_ROWS_THREADS, GEMV_ROWS_BLOCKS)
gemv_rows_kernel(const gemv_args<E> p)
{
    typedef typename E::acc T;
    const int lane = threadIdx.x % 32;
    const long long rows = (long long)p.m * p.batch, tasks = rows * p.slices;
    for (long long t = (long long)blockIdx.x * GEMV_WARPS + threadIdx.x / 32; t < tasks;
         t += (long long)gridDim.x * GEMV_WARPS) {
        long long s = p.slices > 1 ? t / rows : 0, g = t - s * rows;
        long long z = p.batch > 1 ? g / p.m : 0, r = g - z * p.m;
        long long k0 = s * p.slice;
        int len = (int)(p.k - k0 < p.slice ? p.k - k0 : p.slice);
        T sum = gemv_dot<E, W, U>(p.a + z * p.stride_a + r * p.lda + k0,
                                  p.b + z * p.stride_b + k0, len, lane);
#pragma unroll
        for (int off = 16; off > 0; off /= 2)
            sum += __shfl_xor_sync(0xffffffffu, sum, off);
        if (lane == 0)
            gemv_put<T>(p.c, p.stride_c, p.alpha, p.beta, p.partial, s * rows, g, z, r, sum);
        if (p.group)
            join_slices_warp<T>(p.tickets, g, rows, (int)s, p.slices, p.group, p.partial, rows,
                                g, p.c + z * p.stride_c + r, p.alpha, p.beta);
    }
}

/* The columns [j, j + W) of product z, over the slice [k0, k1). */
template <typename E, int W, int U>
static __device__ __forceinline__ void gemv_cols_step(const gemv_args<E> &p, long long z, int j,
                                                      int k0, int k1, long long count)
{
    typedef typename E::acc T;
    const typename E::elem *av = p.a + z * p.stride_a, *bc = p.b + z * p.stride_b + j;
    T s[W];
#pragma unroll
    for (int i = 0; i < W; i++)
        s[i] = T(0);
    int kk = k0;
#pragma unroll 1
    for (; kk + U <= k1; kk += U) {
        gemv_unit<E, W> bu[U];
        T x[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            bu[u] = gemv_load<E, W>(bc + (long long)(kk + u) * p.ldb);
            x[u] = gemv_load1<E>(av + kk + u);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            T v[W];
            E::template widen<W>(bu[u].w, v);
#pragma unroll
            for (int i = 0; i < W; i++)
                s[i] = gemv_fma(x[u], v[i], s[i]);
        }
    }
#pragma unroll 1
    for (; kk < k1; kk++) {
        T x = gemv_load1<E>(av + kk), v[W];
        E::template widen<W>(gemv_load<E, W>(bc + (long long)kk * p.ldb).w, v);
#pragma unroll
        for (int i = 0; i < W; i++)
            s[i] = gemv_fma(x, v[i], s[i]);
    }
#pragma unroll
    for (int i = 0; i < W; i++)
        gemv_put<T>(p.c, p.stride_c, p.alpha, p.beta, p.partial, blockIdx.y * count,
                    z * p.n + j + i, z, j + i, s[i]);
}

/* The same for a B of at most 16 threads' columns (p.k_lanes > 1), by a
 * warp whose lanes also split the slice's rows: lane l takes columns
 * (l mod 32 / k_lanes) W on and rows k0 + l / (32 / k_lanes), k_lanes
 * apart, so that a warp's loads of B are k_lanes whole rows; the lanes of
 * a column then add their sums by shuffles in a fixed order.  Every lane
 * of the warp comes here (the shuffles), those past N with nothing to
 * load. */
template <typename E, int W, int U>
static __device__ __forceinline__ void gemv_cols_lanes(const gemv_args<E> &p, long long z, int j,
                                                       int k0, int k1, long long count)
{
    typedef typename E::acc T;
    const int kl = p.k_lanes, across = 32 / kl, kq = (int)(threadIdx.x % 32) / across;
    const bool live = j < p.n;
    const typename E::elem *av = p.a + z * p.stride_a, *bc = p.b + z * p.stride_b + j;
    T s[W];
#pragma unroll
    for (int i = 0; i < W; i++)
        s[i] = T(0);
    int kk = k0 + kq;
    if (live) {
#pragma unroll 1
        for (; kk + (U - 1) * kl < k1; kk += U * kl) {
            gemv_unit<E, W> bu[U];
            T x[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                bu[u] = gemv_load<E, W>(bc + (long long)(kk + u * kl) * p.ldb);
                x[u] = gemv_load1<E>(av + kk + u * kl);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                T v[W];
                E::template widen<W>(bu[u].w, v);
#pragma unroll
                for (int i = 0; i < W; i++)
                    s[i] = gemv_fma(x[u], v[i], s[i]);
            }
        }
#pragma unroll 1
        for (; kk < k1; kk += kl) {
            T x = gemv_load1<E>(av + kk), v[W];
            E::template widen<W>(gemv_load<E, W>(bc + (long long)kk * p.ldb).w, v);
#pragma unroll
            for (int i = 0; i < W; i++)
                s[i] = gemv_fma(x, v[i], s[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < W; i++)
        for (int off = across; off < 32; off *= 2)
            s[i] += __shfl_xor_sync(0xffffffffu, s[i], off);
    if (live && kq == 0) {
#pragma unroll
        for (int i = 0; i < W; i++)
            gemv_put<T>(p.c, p.stride_c, p.alpha, p.beta, p.partial, blockIdx.y * count,
                        z * p.n + j + i, z, j + i, s[i]);
    }
}

/* Cols: C[z][j..j+W) = alpha (a_z B_z)[j..j+W) + beta C0, or the slice's
 * partials, a thread per W columns (LANES: a warp's lanes along K too). */
template <typename E, int W, int U, bool LANES>
static __global__ void __launch_bounds__(GEMV_COLS_THREADS, GEMV_COLS_BLOCKS)
gemv_cols_kernel(const gemv_args<E> p)
{
    typedef typename E::acc T;
    const long long blocks = (long long)p.col_blocks * p.batch, count = (long long)p.n * p.batch;
    const int k0 = blockIdx.y * p.slice, k1 = min(p.k, k0 + p.slice);
    for (long long t = blockIdx.x; t < blocks; t += gridDim.x) {
        long long z = p.batch > 1 ? t / p.col_blocks : 0;
        if constexpr (LANES) {
            /* one block of one warp a product (gemv_plan_of) */
            gemv_cols_lanes<E, W, U>(p, z, (int)(threadIdx.x % (32 / p.k_lanes)) * W, k0, k1,
                                     count);
        }
        long long col0 = (t - z * p.col_blocks) * blockDim.x * W, col = col0 + threadIdx.x * W;
        if (!LANES && col < p.n)
            gemv_cols_step<E, W, U>(p, z, (int)col, k0, k1, count);
        if (p.group) {
            const int items = (int)min((long long)blockDim.x * W, p.n - col0);
            T *c = p.c + z * p.stride_c + col0;
            const long long base = z * p.n + col0;
            join_slices<T>(p.tickets, t, blocks, blockIdx.y, p.slices, p.group, p.partial, count,
                           items, p.alpha, p.beta, [&](int i, T **out) {
                               *out = c + i;
                               return base + i;
                           });
        }
    }
}

/* C[e] = alpha * (the sum of slab s's element e over s < slices, in a
 * fixed order) + beta C0[e], for the `count` elements of the flattened
 * stack (products of `per` elements, stride_c apart in C).  A block is
 * `lanes` elements by blockDim.x / lanes groups of slices. */
template <typename T>
static __global__ void __launch_bounds__(GEMV_REDUCE_THREADS)
gemv_reduce_kernel(T *c, const T *partial, long long count, int slices, long long per,
                   long long stride_c, T alpha, T beta, int lanes)
{
    __shared__ T part[GEMV_REDUCE_THREADS];
    const int x = threadIdx.x % lanes, y = threadIdx.x / lanes, groups = blockDim.x / lanes;
    for (long long e0 = (long long)blockIdx.x * lanes; e0 < count;
         e0 += (long long)gridDim.x * lanes) {
        long long e = e0 + x;
        T sum = T(0);
        if (e < count) {
            const T *at = partial + e;
            int s = y;
            for (; s + 3 * groups < slices; s += 4 * groups) {
                T v0 = at[s * count], v1 = at[(s + groups) * count];
                T v2 = at[(s + 2 * groups) * count], v3 = at[(s + 3 * groups) * count];
                sum += v0;
                sum += v1;
                sum += v2;
                sum += v3;
            }
            for (; s < slices; s += groups)
                sum += at[s * count];
        }
        part[threadIdx.x] = sum;
        __syncthreads();
        join_tree(part, lanes, groups, y);
        if (y == 0 && e < count) {
            long long z = per == stride_c ? 0 : e / per;
            T *out = c + (per == stride_c ? e : z * stride_c + (e - z * per));
            *out = beta != T(0) ? alpha * part[x] + beta * *out : alpha * part[x];
        }
        __syncthreads();
    }
}

/* ---- the host ---- */

/* How K is cut: `slices` of `slice` values; for cols, the block. */
struct gemv_plan {
    int slices, slice;
    int threads, col_blocks;
    int k_lanes;                    /* cols: lanes of a warp along K */
    long long count;                /* elements of the slabs: M x batch or N x batch */
};

/* The plan for M x N x K (M = 1 or N = 1) on `sm_count` SMs, loads W wide. */
template <typename E>
static struct gemv_plan gemv_plan_of(long long m, long long n, long long k, long long batch,
                                     int w, int sm_count)
{
    struct gemv_plan pl;
    long long want, most;
    pl.threads = GEMV_ROWS_THREADS;
    pl.col_blocks = 0;
    pl.k_lanes = 1;
    if (n == 1) {
        pl.count = m * batch;
        want = (long long)GEMV_ROWS_BLOCKS * GEMV_WARPS * sm_count;
        most = k / (2LL * 32 * GEMV_ROWS_UNROLL * E::vec);
        pl.slices = (int)(want / pl.count < most ? want / pl.count : most);
    } else {
        long long per_block =
            n < (long long)GEMV_COLS_THREADS * w ? n : (long long)GEMV_COLS_THREADS * w;
        pl.threads = (int)(((per_block + w - 1) / w + 31) / 32 * 32);
        pl.col_blocks = (int)((n + (long long)pl.threads * w - 1) / ((long long)pl.threads * w));
        pl.count = n * batch;
        /* A B of at most 16 threads' columns: the warp's other lanes take
         * rows of the slice (gemv_cols_lanes), each at least GEMV_MIN_K of
         * them as a lane of its own would. */
        long long across = (n + w - 1) / w;
        if (across <= 16) {
            int p2 = 1;
            while (p2 < across)
                p2 *= 2;
            pl.k_lanes = 32 / p2;
        }
        want = (long long)GEMV_COLS_BLOCKS * GEMV_COLS_THREADS * sm_count;
        long long busy = (long long)pl.col_blocks * batch * pl.threads;
        most = k / ((long long)GEMV_MIN_K * pl.k_lanes);
        long long share = k * (long long)sizeof(typename E::elem) /
                          (GEMV_PARTIAL_SHARE * (long long)sizeof(typename E::acc));
        long long floor_share = GEMV_PARTIAL_FLOOR / (n * batch * (long long)sizeof(typename E::acc));
        floor_share = floor_share < (long long)GEMV_FLOOR_SLICES ? floor_share
                                                                 : (long long)GEMV_FLOOR_SLICES;
        share = floor_share > share ? floor_share : share;
        most = share < most ? share : most;
        pl.slices = (int)(want / busy < most ? want / busy : most);
    }
    if (pl.slices > GEMV_MOST_SLICES)
        pl.slices = GEMV_MOST_SLICES;
    if (pl.slices < 1)
        pl.slices = 1;
    /* Slices of rows start on whole units of every width. */
    long long unit = n == 1 ? 32LL * E::vec : (long long)GEMV_COLS_UNROLL;
    long long slice = ((k + pl.slices - 1) / pl.slices + unit - 1) / unit * unit;
    if (slice < 1)
        slice = 1;
    pl.slice = (int)(slice < k ? slice : k > 0 ? k : 1);
    pl.slices = k > 0 ? (int)((k + pl.slice - 1) / pl.slice) : 0;
    return pl;
}

/* How a launch of plan pl (loads w wide) joins its slices (join.cuh):
 * rows, a warp a result and every row its region; cols, the columns of a
 * block its region. */
template <typename E>
static struct join_plan gemv_join_plan(const struct gemv_plan &pl, long long n, int w)
{
    if (pl.col_blocks == 0)
        return join_plan_of(pl.count, pl.slices, 1, 32, SLAB_TICKETS);
    long long items = (long long)pl.threads * w < n ? (long long)pl.threads * w : n;
    return join_plan_of(pl.count / n * pl.col_blocks, pl.slices, items, pl.threads,
                        SLAB_TICKETS);
}

/* The slabs' bytes for the registry: a bound over every width and up to
 * 256 SMs. */
template <typename E>
static size_t gemv_workspace(const struct gemm_problem *p)
{
    if ((p->m != 1 && p->n != 1) || p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1)
        return 0;
    size_t most = 0;
    for (int w = E::vec; w >= 1; w /= 2) {
        struct gemv_plan pl = gemv_plan_of<E>(p->m, p->n, p->k, p->batch, w, 256);
        size_t bytes = pl.slices > 1 ? (size_t)pl.slices * pl.count * sizeof(typename E::acc) : 0;
        if (bytes > most)
            most = bytes;
    }
    return most;
}

/* The slices a launch on sm_count SMs cuts p into, its loads the widest,
 * and in *joined whether that launch adds them itself (auto's model asks;
 * a run whose rows take narrower loads may plan otherwise); *busy 1: a
 * warp a row, a thread a few columns, none computed past the product. */
template <typename E>
static int64_t gemv_slices(const struct gemm_problem *p, int sm_count, int *joined,
                           double *busy)
{
    *joined = 0;
    *busy = 1;
    if ((p->m != 1 && p->n != 1) || p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1 ||
        sm_count < 1)
        return 1;
    struct gemv_plan pl = gemv_plan_of<E>(p->m, p->n, p->k, p->batch, E::vec, sm_count);
    *joined = pl.slices > 1 && gemv_join_plan<E>(pl, p->n, E::vec).group > 0;
    return pl.slices;
}

static int gemv_check(const char *name, const struct gemm_problem *p, char *why, size_t n)
{
    if (p->m != 1 && p->n != 1) {
        snprintf(why, n, "%s computes a vector times a matrix (M = 1) or a matrix times a "
                 "vector (N = 1); this product is %lld x %lld", name, (long long)p->m,
                 (long long)p->n);
        return 0;
    }
    return 1;
}

/* The widest loads (W elements) that every unit of p meets aligned. */
template <typename E>
static int gemv_width(const struct gemv_args<E> &p)
{
    const size_t es = sizeof(typename E::elem);
    for (int w = E::vec; w > 1; w /= 2) {
        bool ok;
        if (p.n == 1)
            ok = (uintptr_t)p.a % (w * es) == 0 && (uintptr_t)p.b % (w * es) == 0 &&
                 (p.m == 1 || p.lda % w == 0) && p.stride_a % w == 0 && p.stride_b % w == 0;
        else
            ok = (uintptr_t)p.b % (w * es) == 0 && p.n % w == 0 && p.ldb % w == 0 &&
                 p.stride_b % w == 0;
        if (ok)
            return w;
    }
    return 1;
}

static inline unsigned gemv_grid(long long units)
{
    return (unsigned)(units < (1LL << 30) ? (units > 0 ? units : 1) : (1LL << 30));
}

template <typename E, int W>
static cudaError_t gemv_launch_w(const struct gemv_args<E> &p, int w, int slices, int threads,
                                 cudaStream_t stream)
{
    if constexpr (W > 1) {
        if (w < W)
            return gemv_launch_w<E, W / 2>(p, w, slices, threads, stream);
    }
    if (p.n == 1) {
        long long tasks = (long long)p.m * p.batch * slices;
        gemv_rows_kernel<E, W, gemv_unroll<E, W>::rows>
            <<<gemv_grid((tasks + GEMV_WARPS - 1) / GEMV_WARPS), GEMV_ROWS_THREADS, 0, stream>>>(p);
    } else {
        dim3 grid(gemv_grid((long long)p.col_blocks * p.batch), (unsigned)slices);
        if (p.k_lanes > 1)
            gemv_cols_kernel<E, W, gemv_unroll<E, W>::cols, true><<<grid, threads, 0, stream>>>(p);
        else
            gemv_cols_kernel<E, W, gemv_unroll<E, W>::cols, false><<<grid, threads, 0, stream>>>(p);
    }
    return launch_result();
}

template <typename T>
static cudaError_t gemv_reduce(T *c, const T *partial, long long count, int slices,
                               long long per, long long stride_c, T alpha, T beta,
                               cudaStream_t stream)
{
    int groups = 1, lanes = 1;
    while (groups * 2 <= slices && groups * 2 <= GEMV_REDUCE_THREADS)
        groups *= 2;
    if (count >= 32 && groups > GEMV_REDUCE_THREADS / 32)
        groups = GEMV_REDUCE_THREADS / 32;
    while (lanes < count && lanes * groups < GEMV_REDUCE_THREADS)
        lanes *= 2;
    gemv_reduce_kernel<T><<<gemv_grid((count + lanes - 1) / lanes), lanes * groups, 0, stream>>>(
        c, partial, count, slices, per, stride_c, alpha, beta, lanes);
    return launch_result();
}

/* Runs p (its plan fields are filled here): the kernel, and the sum of the
 * slices when K is split. */
template <typename E>
static cudaError_t gemv_run(struct gemv_args<E> p, const struct launch_env *env)
{
    typedef typename E::acc T;
    if (p.m < 0 || p.n < 0 || p.k < 0 || (p.m != 1 && p.n != 1) || (p.n == 1 && p.ldb != 1))
        return cudaErrorInvalidValue;   /* b, a column of B, is read as k adjacent values */
    if (p.batch < 1)
        p.batch = 1;
    if (p.batch == 1)
        p.stride_a = p.stride_b = p.stride_c = 0;
    if (p.m == 0 || p.n == 0)
        return cudaSuccess;
    long long per = (long long)p.m * p.n;
    if (p.batch == 1)
        p.stride_c = per;
    if (p.k == 0)   /* C = beta C: an empty sum, 0 whatever alpha is */
        return gemv_reduce<T>(p.c, NULL, per * p.batch, 0, per, p.stride_c, T(0), p.beta,
                              env->stream);
    int w = gemv_width<E>(p);
    struct gemv_plan pl = gemv_plan_of<E>(p.m, p.n, p.k, p.batch, w, env->sm_count);
    p.slices = pl.slices;
    p.slice = pl.slice;
    p.col_blocks = pl.col_blocks;
    p.k_lanes = pl.k_lanes;
    p.partial = NULL;
    p.tickets = NULL;
    p.group = 0;
    if (pl.slices == 1)
        return gemv_launch_w<E, E::vec>(p, w, 1, pl.threads, env->stream);
    /* The slices joined in this launch where the kept space allows. */
    const size_t bytes = (size_t)pl.slices * pl.count * sizeof(T);
    struct join_plan jp = gemv_join_plan<E>(pl, p.n, w);
    struct slab_space space = { NULL, NULL };
    cudaError_t err = jp.group ? slab_space_get(env->stream, bytes, (size_t)jp.tickets, &space)
                               : cudaSuccess;
    if (err != cudaSuccess)
        return err;
    if (space.tickets) {
        p.tickets = space.tickets;
        p.group = jp.group;
    }
    p.partial = (T *)space.slabs;
    bool pooled = !p.partial;
    if (pooled) {
        err = cudaMallocAsync((void **)&p.partial, bytes, env->stream);
        if (err != cudaSuccess)
            return err;
    }
    err = gemv_launch_w<E, E::vec>(p, w, pl.slices, pl.threads, env->stream);
    if (err == cudaSuccess && !p.group)
        err = gemv_reduce<T>(p.c, p.partial, pl.count, pl.slices, per, p.stride_c, p.alpha,
                             p.beta, env->stream);
    cudaError_t free_err = pooled ? cudaFreeAsync(p.partial, env->stream) : cudaSuccess;
    return err != cudaSuccess ? err : free_err;
}

/* Runs a family's problem struct (sgemm_problem, dgemm_problem,
 * hgemm_problem: the same fields) with rows lda and ldb apart. */
template <typename E, typename P>
static cudaError_t gemv_run_problem(const P *q, long long lda, long long ldb,
                                    const struct launch_env *env)
{
    struct gemv_args<E> g = {};
    g.a = q->a;
    g.b = q->b;
    g.c = q->c;
    g.alpha = q->alpha;
    g.beta = q->beta;
    g.m = q->m;
    g.n = q->n;
    g.k = q->k;
    g.lda = lda;
    g.ldb = ldb;
    g.batch = q->batch;
    g.stride_a = q->stride_a;
    g.stride_b = q->stride_b;
    g.stride_c = q->stride_c;
    return gemv_run(g, env);
}

/* The resources of the main kernel at full width. */
template <typename E>
static cudaError_t gemv_attr(struct kernel_attr *out)
{
    return kernel_attr_of(gemv_rows_kernel<E, E::vec, gemv_unroll<E, E::vec>::rows>,
                          GEMV_ROWS_THREADS, 0, out);
}

#endif
