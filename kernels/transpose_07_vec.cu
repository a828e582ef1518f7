/* vec: 16-byte accesses on both sides, four of smem_pad's tiles per block.
 *
 * Idea: the top of the ladder.  What it adds to smem_pad:
 *  - 16-byte global accesses (LDG.E.128 / STG.E.128): a quarter of the
 *    memory instructions of a 4-byte kernel for the same bytes.  A thread
 *    loads a V x V micro-block (V = 16 / element size: V rows of 16 bytes),
 *    turns it around in registers, and stores its V columns as 16-byte
 *    vectors of the transposed tile in shared memory; the tile then leaves
 *    as whole 16-byte pieces of output rows.
 *  - Coarsening: a block of 256 threads moves a 16V x 16V tile (64 x 64 for
 *    4-byte elements, four of smem_pad's 32 x 32 tiles), 16 elements per
 *    thread instead of 4.  Coarsening further, to 2, 4 or 8 such tiles in
 *    turn per block, measured slower (below): with one tile per block, the
 *    blocks start in tile order and those in flight share a compact stretch
 *    of both matrices.  Tiles are numbered down the input's columns, so
 *    consecutive blocks write consecutive pieces of the same output rows
 *    (2.5% and 3.6% faster at 8192^2 than numbering along input rows, with
 *    4 and 1 tiles per block).
 *  - An XOR swizzle instead of padding: padding would break the 16-byte
 *    alignment the vector accesses need, so 16-byte chunk q of tile row j
 *    is stored at chunk q ^ (j mod 8).  Vector stores of a micro-block
 *    column and vector or scalar reads along a tile row all spread over
 *    the 32 banks without conflict.
 *  - Streaming cache hints (ld.global.cs / st.global.cs): every byte is
 *    touched once, so nothing is worth keeping in the caches (+0.9% at
 *    8192^2 and 16384^2).
 *  - Fallbacks: each side is vectorised only where it can be: the input
 *    side when cols is a multiple of V and `in` is 16-byte aligned, the
 *    output side when rows is a multiple of V and `out` is aligned.  The
 *    other side moves single elements, a warp along 32 consecutive
 *    elements of a row.  Partial tiles at the edges take a guarded copy of
 *    the same code.
 * Not in seed 001, which stops at diagonal.
 *
 * Figures, NVIDIA H200, 2026-11-21, float32, GB/s read + written, against
 * cudaMemcpy device-to-device, the `copy` kernel and cublasSgeam measured
 * in the same process:
 *   4096^2     3441  93.8% of memcpy   99.9% of copy  108.5% of geam
 *   8192^2     3950  96.5%            100.7%          106.5%
 *   16384^2    4040  95.7%             99.7%          102.3%
 *   7001x3000  2800  78.7%             79.3%           95.7%
 *   3000x7001  3047  85.8%             84.9%           97.2%
 *   8192^2 of 8-byte elements 4075 (98.3% of memcpy, 101.6% of geam);
 *   of 2-byte elements 3353 (86.1% of memcpy, 89.8% of copy).
 * The same kernel without the cache hints, with 1, 2, 4 and 8 tiles per
 * block in turn: 3916, 3885, 3816 and 3726 GB/s at 8192^2; 2811, 2336, 2043
 * and 2049 at 7001x3000.
 * 7001 x 3000 is its gap: 7001-element output rows are not 16-byte
 * aligned, so the output side falls back to 4-byte stores, and each 256-byte
 * output piece straddles a sector boundary at both ends (nine 32-byte
 * sectors instead of eight, two of them shared with the neighbouring tile).
 * geam is 4.5% faster there. */
#include <limits.h>
#include <stdint.h>
#include "common.cuh"
#include "transpose.h"

static constexpr int vec_threads = 256;
/* A tile is micro_rows x micro_cols micro-blocks: micro_rows * V input rows
 * (an output row piece of 16 * micro_rows bytes) by micro_cols * V input
 * columns (an input row piece of 16 * micro_cols bytes). */
static constexpr int micro_rows = 16;
static constexpr int micro_cols = 16;
/* Output rows that do not start on a 16-byte boundary are written in
 * windows aligned to this many bytes (one 32-byte sector), shifted left of
 * the tile by the row's skew; the head_chunks 16-byte chunks of input rows
 * just above the tile fill the shift. */
static constexpr int out_align = 32;
static constexpr int head_chunks = out_align / 16;
static_assert(micro_rows % 8 == 0,
              "the swizzle permutes groups of 8 chunks (128 bytes, all 32 banks) of a tile row");
static_assert(micro_cols % 4 == 0, "a warp loads 4 micro-block columns of 8 micro-block rows");
static_assert((micro_rows * micro_cols) % vec_threads == 0, "each thread takes whole micro-blocks");
static_assert(micro_rows % head_chunks == 0, "tiles start on out_align boundaries of an output row");
static_assert(head_chunks * micro_cols <= vec_threads, "one head micro-block per thread at most");

/* Resident blocks per multiprocessor the register allocation must allow:
 * 4 x 256 threads keep about 64 KB of loads in flight per multiprocessor;
 * 2-byte elements hold an 8 x 8 micro-block (twice the registers) and would
 * spill at 4. */
template <typename T>
static constexpr int vec_min_blocks()
{
    return sizeof(T) == 2 ? 2 : 4;
}

/* 16 bytes seen either as one vector or as V elements. */
template <typename T>
union pack16 {
    uint4 v;
    T e[16 / sizeof(T)];
};

/* Where chunk `chunk` of transposed-tile row `row` lives, in 16-byte units. */
static __device__ __forceinline__ int swizzle(int row, int chunk)
{
    return row * micro_rows + (chunk ^ (row & 7));
}

/* Where head chunk `chunk` of transposed-tile row `row` lives, in 16-byte
 * units past the tile of `rows` rows.  Head chunks are stored column by
 * column; the XOR spreads the 8 rows that one store phase writes (rows
 * V apart) over all 32 banks. */
static __device__ __forceinline__ int head_slot(int row, int chunk, int rows)
{
    return rows * micro_rows + chunk * rows + (row ^ ((row >> 3) & 7));
}

/* Chunk `chunk` of a transposed-tile row extended on the left by its head:
 * chunks 0 .. head_chunks - 1 are the head, the rest the tile. */
template <typename T>
static __device__ __forceinline__ int padded_slot(int row, int chunk)
{
    constexpr int tile_cols = micro_cols * 16 / sizeof(T);
    return chunk < head_chunks ? head_slot(row, chunk, tile_cols)
                               : swizzle(row, chunk - head_chunks);
}

/* Elements d .. d + V - 1 of the 2V elements of a followed by b: a barrel
 * shift by words, then by half words for 2-byte elements. */
template <typename T>
static __device__ __forceinline__ uint4 shift_pair(uint4 a, uint4 b, int d)
{
    const int bytes = d * (int)sizeof(T);
    const unsigned x[8] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w };
    unsigned y[6], z[5];
#pragma unroll
    for (int i = 0; i < 6; i++)
        y[i] = (bytes & 8) ? x[i + 2] : x[i];
#pragma unroll
    for (int i = 0; i < 5; i++)
        z[i] = (bytes & 4) ? y[i + 1] : y[i];
    if constexpr (sizeof(T) == 2) {
        const unsigned bits = (bytes & 2) * 8;
        return make_uint4(__funnelshift_r(z[0], z[1], bits), __funnelshift_r(z[1], z[2], bits),
                          __funnelshift_r(z[2], z[3], bits), __funnelshift_r(z[3], z[4], bits));
    } else {
        return make_uint4(z[0], z[1], z[2], z[3]);
    }
}

/* Input tile (r0, c0) into the transposed tile s, and with HEAD the
 * out_align bytes of input rows above it into the head.  GUARD: the tile
 * crosses the matrix's edge; elements outside are skipped (their slots in s
 * are never written out). */
template <typename T, bool VEC_IN, bool HEAD, bool GUARD>
static __device__ __forceinline__ void
tile_in(const T *__restrict__ in, uint4 *s, int rows, int cols, int r0, int c0)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int tile_cols = micro_cols * V;
    constexpr int head_rows = HEAD ? head_chunks * V : 0;
    if constexpr (VEC_IN) {
#pragma unroll
        for (int m = 0; m < micro_rows * micro_cols / vec_threads; m++) {
            /* 8 consecutive lanes take 8 micro-block rows of one micro-block
             * column: their 8 vector stores into s fill one 128-byte group
             * of a tile row, all 32 banks once.  A warp reads 8 input rows x
             * 64 bytes per load. */
            const int u = threadIdx.x + vec_threads * m;
            const int b = (u & 7) + 8 * (u / (8 * micro_cols));
            const int a = (u >> 3) % micro_cols;
            const int c = c0 + a * V;
            pack16<T> blk[V];
#pragma unroll
            for (int k = 0; k < V; k++) {
                const int r = r0 + b * V + k;
                if (!GUARD || (r < rows && c < cols))
                    blk[k].v = __ldcs((const uint4 *)(in + (size_t)r * cols + c));
                else
                    blk[k].v = make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int e = 0; e < V; e++) {
                pack16<T> col;
#pragma unroll
                for (int k = 0; k < V; k++)
                    col.e[k] = blk[k].e[e];
                s[swizzle(a * V + e, b)] = col.v;
            }
        }
        /* The head: one micro-block per thread of the first head_chunks
         * warps' worth of lanes; a store phase covers 8 micro-block columns. */
        if (HEAD && threadIdx.x < head_chunks * micro_cols && (!GUARD || r0 > 0)) {
            const int a = threadIdx.x % micro_cols, p = threadIdx.x / micro_cols;
            const int c = c0 + a * V;
            if (!GUARD || c < cols) {
                pack16<T> blk[V];
#pragma unroll
                for (int k = 0; k < V; k++) {
                    const int r = r0 - head_rows + p * V + k;
                    blk[k].v = __ldcs((const uint4 *)(in + (size_t)r * cols + c));
                }
#pragma unroll
                for (int e = 0; e < V; e++) {
                    pack16<T> col;
#pragma unroll
                    for (int k = 0; k < V; k++)
                        col.e[k] = blk[k].e[e];
                    s[head_slot(a * V + e, p, tile_cols)] = col.v;
                }
            }
        }
    } else {
        /* A warp reads 32 consecutive elements of one input row: one
         * coalesced access however the rows are aligned.  Lanes 8 apart
         * land in the same bank of s (a 4-way conflict for 4-byte
         * elements), which costs less than the extra sectors that any
         * narrower pattern reads when rows straddle sector boundaries. */
        constexpr int rows_per_pass = vec_threads / tile_cols;
        static_assert(vec_threads % tile_cols == 0, "whole input rows per pass");
        const int cl = threadIdx.x % tile_cols;
        const int c = c0 + cl;
        T *se = (T *)s;
#pragma unroll 8
        for (int rl = threadIdx.x / tile_cols - head_rows; rl < micro_rows * V;
             rl += rows_per_pass) {
            const int r = r0 + rl;
            if (!GUARD || (r >= 0 && r < rows && c < cols)) {
                const T x = __ldcs(in + (size_t)r * cols + c);
                if (rl >= 0) {
                    se[swizzle(cl, rl / V) * V + rl % V] = x;
                } else {
                    const int h = rl + head_rows;
                    se[head_slot(cl, h / V, tile_cols) * V + h % V] = x;
                }
            }
        }
    }
}

/* The transposed tile s out to rows c0.. and columns r0.. of `out`, whose
 * rows start 16-byte aligned. */
template <typename T, bool GUARD>
static __device__ __forceinline__ void
tile_out_aligned(const uint4 *s, T *__restrict__ out, int rows, int cols, int r0, int c0)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int tile_cols = micro_cols * V;
#pragma unroll
    for (int m = 0; m < tile_cols * micro_rows / vec_threads; m++) {
        const int g = threadIdx.x + vec_threads * m;
        const int j = g / micro_rows, q = g % micro_rows;
        const int orow = c0 + j, ocol = r0 + q * V;
        if (!GUARD || (orow < cols && ocol < rows))
            __stcs((uint4 *)(out + (size_t)orow * rows + ocol), s[swizzle(j, q)]);
    }
}

/* Output row `row` starts `skew` elements past an out_align boundary, so
 * its aligned windows begin `skew` elements left of each tile: chunk q of
 * the window, from the head-extended tile row j. */
template <typename T>
static __device__ __forceinline__ uint4 window_chunk(const uint4 *s, int j, int skew, int q)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int last = head_chunks + micro_rows - 1;
    const int lead = head_chunks * V - skew;
    const int lo = lead / V + q;
    return shift_pair<T>(s[padded_slot<T>(j, min(lo, last))],
                         s[padded_slot<T>(j, min(lo + 1, last))], lead % V);
}

template <typename T>
static __device__ __forceinline__ int skew_of(const T *row)
{
    return (int)((uintptr_t)row % out_align / sizeof(T));
}

/* The transposed tile s out to rows c0.. of `out`, whose rows are not
 * 16-byte aligned: each row in out_align-aligned 16-byte stores, the window
 * shifted left by the row's skew.  The last tile of a row also writes the
 * row's end; single elements only where a window crosses the row's ends. */
template <typename T, bool GUARD>
static __device__ __forceinline__ void
tile_out_shifted(const uint4 *s, T *__restrict__ out, int rows, int cols, int r0, int c0)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int tile_rows = micro_rows * V;
    constexpr int tile_cols = micro_cols * V;
    if constexpr (!GUARD) {
#pragma unroll
        for (int m = 0; m < tile_cols * micro_rows / vec_threads; m++) {
            const int g = threadIdx.x + vec_threads * m;
            const int j = g / micro_rows, q = g % micro_rows;
            T *row = out + (size_t)(c0 + j) * rows;
            const int skew = skew_of(row);
            __stcs((uint4 *)(row + r0 - skew + q * V), window_chunk<T>(s, j, skew, q));
        }
    } else {
        constexpr int span = micro_rows + head_chunks;
        const int chunks = rows - r0 <= tile_rows ? span : micro_rows;
        for (int g = threadIdx.x; g < tile_cols * span; g += vec_threads) {
            const int j = g / span, q = g % span;
            if (c0 + j >= cols || q >= chunks)
                continue;
            T *row = out + (size_t)(c0 + j) * rows;
            const int skew = skew_of(row);
            const int first = r0 - skew + q * V;
            if (first + V <= 0 || first >= rows)
                continue;
            pack16<T> v;
            v.v = window_chunk<T>(s, j, skew, q);
            if (first >= 0 && first + V <= rows) {
                __stcs((uint4 *)(row + first), v.v);
            } else {
#pragma unroll
                for (int k = 0; k < V; k++)
                    if (first + k >= 0 && first + k < rows)
                        __stcs(row + first + k, v.e[k]);
            }
        }
    }
}

template <typename T, bool VEC_IN, bool VEC_OUT>
__global__ void __launch_bounds__(vec_threads, vec_min_blocks<T>())
vec_kernel(const T *__restrict__ in, T *__restrict__ out, int rows, int cols, int tiles_y,
           long long tiles)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int tile_rows = micro_rows * V;
    constexpr int tile_cols = micro_cols * V;
    __shared__ uint4 s[tile_cols * (micro_rows + (VEC_OUT ? 0 : head_chunks))];

    /* One tile per block; the loop only matters past the grid-size limit. */
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int r0 = (int)(t % tiles_y) * tile_rows;
        const int c0 = (int)(t / tiles_y) * tile_cols;
        if constexpr (VEC_OUT) {
            const bool full = rows - r0 >= tile_rows && cols - c0 >= tile_cols;
            if (full)
                tile_in<T, VEC_IN, false, false>(in, s, rows, cols, r0, c0);
            else
                tile_in<T, VEC_IN, false, true>(in, s, rows, cols, r0, c0);
            __syncthreads();
            if (full)
                tile_out_aligned<T, false>(s, out, rows, cols, r0, c0);
            else
                tile_out_aligned<T, true>(s, out, rows, cols, r0, c0);
        } else {
            /* The first tile of a row has no head, the last writes the
             * row's end: both take the guarded path. */
            const bool full = r0 > 0 && rows - r0 > tile_rows && cols - c0 >= tile_cols;
            if (full)
                tile_in<T, VEC_IN, true, false>(in, s, rows, cols, r0, c0);
            else
                tile_in<T, VEC_IN, true, true>(in, s, rows, cols, r0, c0);
            __syncthreads();
            if (full)
                tile_out_shifted<T, false>(s, out, rows, cols, r0, c0);
            else
                tile_out_shifted<T, true>(s, out, rows, cols, r0, c0);
        }
        __syncthreads();
    }
}

template <typename T, bool VEC_IN, bool VEC_OUT>
static cudaError_t vec_launch(const struct transpose_problem *p, const struct launch_env *env)
{
    constexpr int V = 16 / sizeof(T);
    const int tiles_x = ceil_div(p->cols, micro_cols * V);
    const int tiles_y = ceil_div(p->rows, micro_rows * V);
    const long long tiles = (long long)tiles_x * tiles_y;
    const unsigned grid = (unsigned)(tiles < INT_MAX ? tiles : INT_MAX);
    vec_kernel<T, VEC_IN, VEC_OUT><<<grid, vec_threads, 0, env->stream>>>(
        (const T *)p->in, (T *)p->out, p->rows, p->cols, tiles_y, tiles);
    return launch_result();
}

template <typename T>
static cudaError_t vec_run(const struct transpose_problem *p, const struct launch_env *env)
{
    constexpr int V = 16 / sizeof(T);
    const bool vec_in = p->cols % V == 0 && (uintptr_t)p->in % 16 == 0;
    const bool vec_out = p->rows % V == 0 && (uintptr_t)p->out % 16 == 0;
    if (vec_in)
        return vec_out ? vec_launch<T, true, true>(p, env) : vec_launch<T, true, false>(p, env);
    return vec_out ? vec_launch<T, false, true>(p, env) : vec_launch<T, false, false>(p, env);
}

extern "C" cudaError_t transpose_vec_launch(const struct transpose_problem *p,
                                            const struct launch_env *env)
{
    switch (p->elem_size) {
    case 2: return vec_run<unsigned short>(p, env);
    case 4: return vec_run<unsigned int>(p, env);
    case 8: return vec_run<unsigned long long>(p, env);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t transpose_vec_attr(struct kernel_attr *out)
{
    return kernel_attr_of(vec_kernel<unsigned int, true, true>, vec_threads, 0, out);
}
