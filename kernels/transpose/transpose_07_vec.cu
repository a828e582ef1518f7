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
 *    thread instead of 4.  One such tile per block: with more tiles per
 *    block in turn it measured slower, while with one tile per block the
 *    blocks start in tile order and those in flight share a compact stretch
 *    of both matrices.  Tiles are numbered down the input's columns, so
 *    consecutive blocks write consecutive pieces of the same output rows,
 *    which measured faster than numbering along input rows.
 *  - An XOR swizzle instead of padding: padding would break the 16-byte
 *    alignment the vector accesses need, so 16-byte chunk q of tile row j
 *    is stored at chunk q ^ (j mod 8).  Vector stores of a micro-block
 *    column and vector or scalar reads along a tile row all spread over the
 *    32 banks without conflict.
 *  - Streaming cache hints (ld.global.cs / st.global.cs): every byte is
 *    touched once, so nothing is worth keeping in the caches.
 *  - Rows that do not start on 16-byte boundaries: the input side is
 *    vectorised only when cols is a multiple of V and `in` is 16-byte
 *    aligned, and otherwise moves single elements, a warp along 32
 *    consecutive elements of an input row (so at 3000 x 7001, whose
 *    7001-element input rows are not 16-byte aligned, geam is a little
 *    faster).  For 4-byte elements the output side stays vectorised whatever
 *    rows and `out` are: each output row leaves in 16-byte stores on the
 *    row's own 16-byte boundaries, shifted across two chunks of the tile,
 *    with only the V elements that straddle the boundaries between tiles
 *    stored singly (tile_out).  That measured faster than single 4-byte
 *    stores, which leave each 256-byte output piece in 4-byte stores
 *    straddling a sector boundary at both ends, and than windows aligned
 *    to 16, 32 or 64 bytes that load extra input rows so that every store
 *    is whole.  2- and 8-byte elements store single elements there, a warp
 *    along 32 consecutive elements of an output row: shifted stores
 *    measured slower for them.
 *  - 1-byte elements (int8, uint8, bool) take a path of their own: a 16 x 16
 *    micro-block of bytes would need a 64 KB tile and a 16-way turn in
 *    registers.  A thread loads 4 input rows of 16 bytes (LDG.E.128), turns
 *    its four 4 x 4 blocks of bytes around with 8 byte permutes each
 *    (PRMT), and stores the 16 words, 4 bytes of 16 output rows, into a
 *    128 x 128-byte transposed tile: one tile per block, 16 KB, 64 bytes
 *    per thread, as for 4-byte elements.  The tile is swizzled by 16-byte
 *    chunks, so that these 4-byte stores and the 16-byte reads of tile rows
 *    on the way out are both free of bank conflicts; it leaves in 16-byte
 *    stores (STG.E.128).  Rows that do not start on 16-byte boundaries move
 *    single bytes, a warp along 32 consecutive bytes of a row.
 * The README ("Measurements behind the stages") has the figures behind
 * each choice.
 *
 * Follows no published write-up: gemmcli's own, past the write-up's last
 * stage (diagonal), with the 16-byte accesses of "CUDA Pro Tip: Increase
 * Performance with Vectorized Memory Access".
 *
 * Run and checked by:
 *   gemmcli transpose x.npy -o y.npy --kernel vec --verify --repeat 20 */
#include <limits.h>
#include <stdint.h>
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int vec_threads = 256;
/* A tile is micro_rows x micro_cols micro-blocks: micro_rows * V input rows
 * (an output row piece of 16 * micro_rows bytes) by micro_cols * V input
 * columns (an input row piece of 16 * micro_cols bytes). */
static constexpr int micro_rows = 16;
static constexpr int micro_cols = 16;
static_assert(micro_rows % 8 == 0,
              "the swizzle permutes groups of 8 chunks (128 bytes, all 32 banks) of a tile row");
static_assert(micro_cols % 4 == 0, "a warp loads 4 micro-block columns of 8 micro-block rows");
static_assert((micro_rows * micro_cols) % vec_threads == 0, "each thread takes whole micro-blocks");

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

/* Words d .. d + 3 of the 8 words of a followed by b, d in 0..3: a barrel
 * shift by two words, then by one. */
static __device__ __forceinline__ uint4 shift_words(uint4 a, uint4 b, int d)
{
    const unsigned x[8] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w };
    unsigned y[5];
#pragma unroll
    for (int i = 0; i < 5; i++)
        y[i] = (d & 2) ? x[i + 2] : x[i];
    return (d & 1) ? make_uint4(y[1], y[2], y[3], y[4]) : make_uint4(y[0], y[1], y[2], y[3]);
}

/* Input tile (r0, c0) into the transposed tile s.  GUARD: the tile crosses
 * the matrix's edge; elements outside are skipped (their slots in s are
 * never written out). */
template <typename T, bool VEC_IN, bool GUARD>
static __device__ __forceinline__ void
tile_in(const T *__restrict__ in, uint4 *s, int rows, int cols, int r0, int c0)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int tile_cols = micro_cols * V;
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
        for (int rl = threadIdx.x / tile_cols; rl < micro_rows * V; rl += rows_per_pass) {
            const int r = r0 + rl;
            if (!GUARD || (r < rows && c < cols))
                se[swizzle(cl, rl / V) * V + rl % V] = __ldcs(in + (size_t)r * cols + c);
        }
    }
}

/* The transposed tile s out to rows c0.. and columns r0.. of `out`.
 * VEC_OUT: every output row starts 16-byte aligned, and so does each
 * tile's piece of it.  Otherwise, for 4-byte elements, row j starts `skew`
 * elements past a 16-byte boundary: its piece, from the first boundary on
 * (`lead` elements in), leaves as 16-byte stores of elements shifted across
 * two chunks of s, and the lead plus the last `skew` elements (4 elements
 * together, both inside the tile) as single stores by the thread that
 * would have taken the last chunk.  No store straddles a 16-byte boundary,
 * and the tile reads nothing beyond its own input.  2- and 8-byte elements
 * measured slower that way (below) and keep single stores, a warp along 32
 * consecutive elements of an output row. */
template <typename T, bool VEC_OUT, bool GUARD>
static __device__ __forceinline__ void
tile_out(const uint4 *s, T *__restrict__ out, int rows, int cols, int r0, int c0)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int tile_rows = micro_rows * V;
    constexpr int tile_cols = micro_cols * V;
    if constexpr (VEC_OUT) {
#pragma unroll
        for (int m = 0; m < tile_cols * micro_rows / vec_threads; m++) {
            const int g = threadIdx.x + vec_threads * m;
            const int j = g / micro_rows, q = g % micro_rows;
            const int orow = c0 + j, ocol = r0 + q * V;
            if (!GUARD || (orow < cols && ocol < rows))
                __stcs((uint4 *)(out + (size_t)orow * rows + ocol), s[swizzle(j, q)]);
        }
    } else if constexpr (sizeof(T) == 4) {
#pragma unroll
        for (int m = 0; m < tile_cols * micro_rows / vec_threads; m++) {
            const int g = threadIdx.x + vec_threads * m;
            const int j = g / micro_rows, q = g % micro_rows;
            const int orow = c0 + j;
            if (GUARD && orow >= cols)
                continue;
            T *row = out + (size_t)orow * rows;
            const int lead = (V - (int)((uintptr_t)row / sizeof(T) % V)) % V;
            if (lead != 0 && q == micro_rows - 1) {
                pack16<T> first, last;
                first.v = s[swizzle(j, 0)];
                last.v = s[swizzle(j, micro_rows - 1)];
#pragma unroll
                for (int k = 0; k < V; k++) {
                    const int ocol = r0 + (k < lead ? k : tile_rows - V + k);
                    if (!GUARD || ocol < rows)
                        __stcs(row + ocol, k < lead ? first.e[k] : last.e[k]);
                }
                continue;
            }
            pack16<T> v;
            v.v = shift_words(s[swizzle(j, q)], s[swizzle(j, min(q + 1, micro_rows - 1))], lead);
            const int ocol = r0 + lead + q * V;
            if (!GUARD || ocol + V <= rows) {
                __stcs((uint4 *)(row + ocol), v.v);
            } else {
#pragma unroll
                for (int k = 0; k < V; k++)
                    if (ocol + k < rows)
                        __stcs(row + ocol + k, v.e[k]);
            }
        }
    } else {
        constexpr int rows_per_pass = vec_threads / tile_rows;
        static_assert(vec_threads % tile_rows == 0, "whole output rows per pass");
        const int i = threadIdx.x % tile_rows;
        const int ocol = r0 + i;
        const T *se = (const T *)s;
#pragma unroll 8
        for (int j = threadIdx.x / tile_rows; j < tile_cols; j += rows_per_pass) {
            const int orow = c0 + j;
            if (!GUARD || (orow < cols && ocol < rows))
                __stcs(out + (size_t)orow * rows + ocol, se[swizzle(j, i / V) * V + i % V]);
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
    __shared__ uint4 s[tile_cols * micro_rows];

    /* One tile per block; the loop only matters past the grid-size limit. */
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int r0 = (int)(t % tiles_y) * tile_rows;
        const int c0 = (int)(t / tiles_y) * tile_cols;
        const bool full = rows - r0 >= tile_rows && cols - c0 >= tile_cols;
        if (full)
            tile_in<T, VEC_IN, false>(in, s, rows, cols, r0, c0);
        else
            tile_in<T, VEC_IN, true>(in, s, rows, cols, r0, c0);
        __syncthreads();
        if (full)
            tile_out<T, VEC_OUT, false>(s, out, rows, cols, r0, c0);
        else
            tile_out<T, VEC_OUT, true>(s, out, rows, cols, r0, c0);
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

/* 1-byte elements.  A 16 x 16 micro-block of bytes would make a
 * 256 x 256-byte tile (64 KB of shared memory) and a 16-way turn in
 * registers; instead a thread turns four 4 x 4-byte blocks around with
 * byte permutes and writes them to the transposed tile as 4-byte words. */
static constexpr int byte_tile = 128;                  /* 128 x 128 bytes, 16 KB */
static constexpr int byte_chunks = byte_tile / 16;     /* 16-byte chunks per tile row */
static_assert(byte_tile * byte_tile == vec_threads * 4 * 16,
              "each thread loads 4 input rows of 16 bytes");
static_assert(byte_chunks == 8, "the swizzle permutes the 8 chunks (all 32 banks) of a tile row");
static_assert(vec_threads % byte_tile == 0, "the byte paths move whole tile rows per pass");

/* Where chunk `chunk` of transposed-tile row `row` lives, in 16-byte units.
 * The XOR mixes the row's low three bits with the three above bit 4, so
 * that 8 lanes storing to rows 16 apart (byte_tile_in's vector path) land
 * in 8 different chunks, and so do 8 consecutive rows (its byte path). */
static __device__ __forceinline__ int byte_swizzle(int row, int chunk)
{
    return row * byte_chunks + (chunk ^ ((row ^ (row >> 4)) & 7));
}

/* Rows a[0..3] of a 4 x 4 block of bytes (byte e of word k: row k,
 * column e) turned around: byte k of o[e] is row k of column e. */
static __device__ __forceinline__ void turn_4x4_bytes(const unsigned a[4], unsigned o[4])
{
    const unsigned lo01 = __byte_perm(a[0], a[1], 0x5140);   /* a0.0 a1.0 a0.1 a1.1 */
    const unsigned hi01 = __byte_perm(a[0], a[1], 0x7362);   /* a0.2 a1.2 a0.3 a1.3 */
    const unsigned lo23 = __byte_perm(a[2], a[3], 0x5140);   /* a2.0 a3.0 a2.1 a3.1 */
    const unsigned hi23 = __byte_perm(a[2], a[3], 0x7362);   /* a2.2 a3.2 a2.3 a3.3 */
    o[0] = __byte_perm(lo01, lo23, 0x5410);                  /* a0.0 a1.0 a2.0 a3.0 */
    o[1] = __byte_perm(lo01, lo23, 0x7632);                  /* a0.1 a1.1 a2.1 a3.1 */
    o[2] = __byte_perm(hi01, hi23, 0x5410);                  /* a0.2 a1.2 a2.2 a3.2 */
    o[3] = __byte_perm(hi01, hi23, 0x7632);                  /* a0.3 a1.3 a2.3 a3.3 */
}

/* Input tile (r0, c0) of bytes into the transposed tile s.  VEC_IN: thread
 * (g, q) loads input rows 4g .. 4g + 3 of the tile, 16 bytes each from
 * column 16q (8 lanes take a 128-byte piece of a row, a warp 4 rows per
 * load), turns the four 4 x 4 blocks around, and stores each of the 16
 * resulting words, 4 bytes of one transposed row, as word g of that row.
 * Otherwise a warp reads 32 consecutive bytes of an input row (their
 * stores into s meet a 4-way bank conflict, as the wider elements' do).
 * GUARD: the tile crosses the matrix's edge; rows past it load zeros whose
 * slots are never written out, and cols % 16 == 0 keeps every chunk
 * inside or outside. */
template <bool VEC_IN, bool GUARD>
static __device__ __forceinline__ void
byte_tile_in(const uint8_t *__restrict__ in, uint4 *s, int rows, int cols, int r0, int c0)
{
    if constexpr (VEC_IN) {
        const int q = threadIdx.x % byte_chunks, g = threadIdx.x / byte_chunks;
        const int c = c0 + 16 * q;
        unsigned w[4][4];   /* w[x][k]: bytes 4x .. 4x + 3 of the chunk of row 4g + k */
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const int r = r0 + 4 * g + k;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (!GUARD || (r < rows && c < cols))
                v = __ldcs((const uint4 *)(in + (size_t)r * cols + c));
            w[0][k] = v.x;
            w[1][k] = v.y;
            w[2][k] = v.z;
            w[3][k] = v.w;
        }
        unsigned *sw = (unsigned *)s;
#pragma unroll
        for (int x = 0; x < 4; x++) {
            unsigned o[4];
            turn_4x4_bytes(w[x], o);
#pragma unroll
            for (int e = 0; e < 4; e++)
                sw[byte_swizzle(16 * q + 4 * x + e, g / 4) * 4 + g % 4] = o[e];
        }
    } else {
        constexpr int rows_per_pass = vec_threads / byte_tile;
        const int cl = threadIdx.x % byte_tile;
        const int c = c0 + cl;
        uint8_t *sb = (uint8_t *)s;
#pragma unroll 8
        for (int rl = threadIdx.x / byte_tile; rl < byte_tile; rl += rows_per_pass) {
            const int r = r0 + rl;
            if (!GUARD || (r < rows && c < cols))
                sb[byte_swizzle(cl, rl / 16) * 16 + rl % 16] = __ldcs(in + (size_t)r * cols + c);
        }
    }
}

/* The transposed tile s out to rows c0.. and columns r0.. of `out`.
 * VEC_OUT: every output row starts 16-byte aligned; 8 lanes store a
 * 128-byte piece of one output row, one chunk each (rows % 16 == 0 keeps
 * every chunk inside or outside).  Otherwise a warp writes 32 consecutive
 * bytes of an output row. */
template <bool VEC_OUT, bool GUARD>
static __device__ __forceinline__ void
byte_tile_out(const uint4 *s, uint8_t *__restrict__ out, int rows, int cols, int r0, int c0)
{
    if constexpr (VEC_OUT) {
#pragma unroll
        for (int m = 0; m < byte_tile * byte_chunks / vec_threads; m++) {
            const int v = threadIdx.x + vec_threads * m;
            const int j = v / byte_chunks, p = v % byte_chunks;
            const int orow = c0 + j, ocol = r0 + 16 * p;
            if (!GUARD || (orow < cols && ocol < rows))
                __stcs((uint4 *)(out + (size_t)orow * rows + ocol), s[byte_swizzle(j, p)]);
        }
    } else {
        constexpr int rows_per_pass = vec_threads / byte_tile;
        const int i = threadIdx.x % byte_tile;
        const int ocol = r0 + i;
        const uint8_t *sb = (const uint8_t *)s;
#pragma unroll 8
        for (int j = threadIdx.x / byte_tile; j < byte_tile; j += rows_per_pass) {
            const int orow = c0 + j;
            if (!GUARD || (orow < cols && ocol < rows))
                __stcs(out + (size_t)orow * rows + ocol, sb[byte_swizzle(j, i / 16) * 16 + i % 16]);
        }
    }
}

template <bool VEC_IN, bool VEC_OUT>
__global__ void __launch_bounds__(vec_threads, vec_min_blocks<uint8_t>())
vec_bytes_kernel(const uint8_t *__restrict__ in, uint8_t *__restrict__ out, int rows, int cols,
                 int tiles_y, long long tiles)
{
    __shared__ uint4 s[byte_tile * byte_chunks];

    /* One tile per block, numbered down the input's columns, as above. */
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int r0 = (int)(t % tiles_y) * byte_tile;
        const int c0 = (int)(t / tiles_y) * byte_tile;
        const bool full = rows - r0 >= byte_tile && cols - c0 >= byte_tile;
        if (full)
            byte_tile_in<VEC_IN, false>(in, s, rows, cols, r0, c0);
        else
            byte_tile_in<VEC_IN, true>(in, s, rows, cols, r0, c0);
        __syncthreads();
        if (full)
            byte_tile_out<VEC_OUT, false>(s, out, rows, cols, r0, c0);
        else
            byte_tile_out<VEC_OUT, true>(s, out, rows, cols, r0, c0);
        __syncthreads();
    }
}

template <bool VEC_IN, bool VEC_OUT>
static cudaError_t vec_bytes_launch(const struct transpose_problem *p,
                                    const struct launch_env *env)
{
    const int tiles_x = ceil_div(p->cols, byte_tile);
    const int tiles_y = ceil_div(p->rows, byte_tile);
    const long long tiles = (long long)tiles_x * tiles_y;
    const unsigned grid = (unsigned)(tiles < INT_MAX ? tiles : INT_MAX);
    vec_bytes_kernel<VEC_IN, VEC_OUT><<<grid, vec_threads, 0, env->stream>>>(
        (const uint8_t *)p->in, (uint8_t *)p->out, p->rows, p->cols, tiles_y, tiles);
    return launch_result();
}

static cudaError_t vec_bytes_run(const struct transpose_problem *p, const struct launch_env *env)
{
    const bool vec_in = p->cols % 16 == 0 && (uintptr_t)p->in % 16 == 0;
    const bool vec_out = p->rows % 16 == 0 && (uintptr_t)p->out % 16 == 0;
    if (vec_in)
        return vec_out ? vec_bytes_launch<true, true>(p, env)
                       : vec_bytes_launch<true, false>(p, env);
    return vec_out ? vec_bytes_launch<false, true>(p, env)
                   : vec_bytes_launch<false, false>(p, env);
}

extern "C" cudaError_t transpose_vec_launch(const struct transpose_problem *p,
                                            const struct launch_env *env)
{
    switch (p->elem_size) {
    case 1: return vec_bytes_run(p, env);
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
