/* What the DMMA stages share (dgemm_02_dmma.cu, 128 x 128 tiles;
 * dgemm_07_dmma_small.cu, 64 x 64): FP64 on the tensor cores by the
 * warp-level mma.sync.m16n8k4 with double operands, warps of 64 x 32 of C
 * fed from a ring of cp.async stages, templated on the block tile, the
 * stages and the blocks an SM holds.  dgemm_02_dmma.cu's header says how
 * the fragments, banks, copies and barriers are laid out; a smaller tile
 * keeps every one of those rules, with fewer warps: each thread then
 * copies more rows of a k-group of B per chunk (b16_rows, b8_rows).
 *
 * gemmcli's own.  Run through its stages, e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_dmma_small --verify --repeat 20 */
#ifndef GC_KERNELS_DMMA_CUH
#define GC_KERNELS_DMMA_CUH

#include <stdint.h>
#include "kernels/gemm.h"
#include "kernels/common.cuh"

/* A block tile of BM x BN doubles from warps of 64 x 32 (the fragment
 * layout below), bk = 16 values of k a stage, `STAGES` stages, and
 * MIN_BLOCKS blocks an SM at least (__launch_bounds__). */
template <int BM, int BN, int STAGES, int MIN_BLOCKS>
struct dmma_cfg {
    static constexpr int bm = BM, bn = BN, bk = 16, stages = STAGES, group = 8;
    static constexpr int min_blocks = MIN_BLOCKS;
    static constexpr int warps_m = bm / 64, warps_n = bn / 32, warps = warps_m * warps_n;
    static constexpr int threads = warps * 32;
    /* A warp's piece of C, in m16n8 tiles; k-steps of 4 in a tile. */
    static constexpr int wm = bm / warps_m, wn = bn / warps_n;
    static constexpr int mt = wm / 16, nt = wn / 8, ksteps = bk / 4;
    static constexpr int a_ld = bm + 4, b_ld = bn + 4;
    static constexpr int a_stage = bk * a_ld, b_stage = bk * b_ld;
    static constexpr size_t smem = (size_t)stages * (a_stage + b_stage) * sizeof(double);
    /* A: a warp's copy instruction takes 32 / a_kw rows x a_kw values of
     * k, two whole 32-byte sectors of each row; the stage's 16 values of
     * k are a_bands bands of a_kw, each copied in ksteps / a_bands chunks
     * of a_chunk_rows rows, a_per copies a thread and chunk, rows
     * a_row_step apart.  (One sector a row, as 8 rows x 4 values of k
     * took, kept the L2 busy with requests: at 4096^3 Nsight Compute put a
     * 128 x 64 tile whose copies took one sector a row at 93% of the L2's
     * throughput, the same tile with whole rows a copy at 54%, cuBLAS's
     * DGEMM on 128 x 64 tiles at 55%; NVIDIA H100, 2026-11-27.) */
    static constexpr int a_kw = 8, a_bands = bk / a_kw, a_band_chunks = ksteps / a_bands;
    static constexpr int a_chunk_rows = bm * 4 / a_kw;
    static constexpr int a_row_step = threads / a_kw, a_per = bm * 4 / threads;
    /* B: a chunk is one k-group, 4 rows of the tile; 16-byte copies take
     * b16_lanes threads a row, rows b16_row_step apart, b16_rows of them
     * a thread and chunk; 8-byte copies likewise. */
    static constexpr int b16_lanes = bn / 2, b16_row_step = threads / b16_lanes;
    static constexpr int b16_rows = 4 / b16_row_step;
    static constexpr int b8_lanes = bn, b8_row_step = threads / b8_lanes;
    static constexpr int b8_rows = 4 / b8_row_step;

    static_assert(bm % 64 == 0 && bn % 32 == 0 && warps_m >= 1 && warps_n >= 1,
                  "whole warps of 64 x 32");
    static_assert(wm == 64 && wn == 32, "fragment layout: 4 m16 tiles x 4 n8 tiles per warp");
    static_assert(a_ld % 16 == 4 && b_ld % 16 == 4,
                  "rows 2 (mod 8) units of 16 bytes apart: conflict-free LDS.128, two A copies "
                  "a bank pair");
    static_assert(bk % 4 == 0 && ksteps % 2 == 0, "k-steps of 4; fragments alternate, step 0 in set 0");
    static_assert(bk % a_kw == 0 && ksteps % a_bands == 0 && threads % a_kw == 0 &&
                      bm * 4 % threads == 0 && a_band_chunks * a_per <= 32,
                  "A copies: split evenly, a bit a row");
    static_assert(threads % b16_lanes == 0 && b16_row_step <= 4 && 4 % b16_row_step == 0,
                  "16-byte B copies: whole rows of a k-group per thread and chunk");
    static_assert(threads % b8_lanes == 0 && b8_row_step <= 4 && 4 % b8_row_step == 0,
                  "8-byte B copies: whole rows of a k-group per thread and chunk");
    static_assert((a_stage * sizeof(double)) % 16 == 0 && (b_stage * sizeof(double)) % 16 == 0,
                  "stage buffers stay 16-byte aligned");
    static_assert(stages >= 2, "a pipeline needs at least two stages");
    static_assert(smem <= 227 * 1024, "fits the opt-in shared memory of one block");
};

static __device__ __forceinline__ unsigned dmma_smem_addr(const void *ptr)
{
    return (unsigned)__cvta_generic_to_shared(ptr);
}

/* 8 bytes, or 8 zeros when !ok (nothing is read from src then). */
static __device__ __forceinline__ void dmma_copy8(double *dst, const double *src, bool ok)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dmma_smem_addr(dst)),
                 "l"(src), "r"(ok ? 8 : 0));
}

/* 16 bytes (two doubles), or 16 zeros when !ok. */
static __device__ __forceinline__ void dmma_copy16(double *dst, const double *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dmma_smem_addr(dst)),
                 "l"(src), "r"(ok ? 16 : 0));
}

static __device__ __forceinline__ void dmma_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void dmma_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* d += a * b for one m16n8k4 tile: a = (a0, a1), b = b0.  The m16 shapes
 * of .f64 are sm_90; a build for an older target (ARCH=80) does the same
 * product as two m8n8k4 (sm_80), rows g and g + 8, with the same lanes'
 * registers. */
static __device__ __forceinline__ void dmma_mma(double (&d)[4], double2 a, double b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                 "{%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a.x), "d"(b));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                 "{%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[2]), "+d"(d[3])
                 : "d"(a.y), "d"(b));
#else
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a.x), "d"(a.y), "d"(b));
#endif
}

/* One thread's copies of each k-tile of A and B, tile after tile, a chunk
 * (one k-group of A, one or two rows of B) at a time. */
template <typename DM, bool VEC>
struct dmma_loader {
    const double *a, *b;      /* this thread's first element of the next tile */
    size_t a_step;            /* one row of A */
    size_t b_row;             /* one row of B */
    unsigned a_rows_ok;       /* bit c a_per + r: its r-th row of a band's chunk c lies inside A */
    bool b_col_ok;            /* its piece of B lies inside B */
    int a_k_left, b_k_left;   /* values of k left from its first one */
    int a_dst, b_dst;         /* offsets in a stage buffer */

    __device__ __forceinline__ dmma_loader(const double *a0, const double *b0, int m, int n,
                                           int k, long long lda, int bm0, int bn0)
    {
        int tid = threadIdx.x;
        int a_row = tid / DM::a_kw, a_kk = tid % DM::a_kw;
        a = a0 + ((size_t)bm0 + a_row) * lda + a_kk;
        a_step = (size_t)lda;
        a_rows_ok = 0;
#pragma unroll
        for (int c = 0; c < DM::a_band_chunks; c++)
#pragma unroll
            for (int r = 0; r < DM::a_per; r++)
                a_rows_ok |= (unsigned)(a_row + c * DM::a_chunk_rows + r * DM::a_row_step < m - bm0)
                             << (c * DM::a_per + r);
        a_k_left = k - a_kk;
        a_dst = a_kk * DM::a_ld + a_row;

        int b_kk, b_col;
        if (VEC) {
            b_kk = tid / DM::b16_lanes;
            b_col = tid % DM::b16_lanes * 2;
        } else {
            b_kk = tid / DM::b8_lanes;
            b_col = tid % DM::b8_lanes;
        }
        b = b0 + (size_t)b_kk * n + bn0 + b_col;
        b_row = (size_t)n;
        b_col_ok = b_col < n - bn0;
        b_k_left = k - b_kk;
        b_dst = b_kk * DM::b_ld + b_col;
    }

    /* Issues chunk s of the next tile into the stage buffers as, bs. */
    __device__ __forceinline__ void load(int s, double *as, double *bs)
    {
        const int band = s / DM::a_band_chunks, c = s % DM::a_band_chunks;
        bool a_k_ok = a_k_left > band * DM::a_kw;
#pragma unroll
        for (int r = 0; r < DM::a_per; r++) {
            int row = c * DM::a_chunk_rows + r * DM::a_row_step;
            dmma_copy8(as + a_dst + band * DM::a_kw * DM::a_ld + row,
                       a + row * a_step + band * DM::a_kw,
                       a_k_ok && (a_rows_ok >> (c * DM::a_per + r) & 1));
        }
        if (VEC) {
#pragma unroll
            for (int j = 0; j < DM::b16_rows; j++) {
                int kk = 4 * s + j * DM::b16_row_step;
                dmma_copy16(bs + b_dst + kk * DM::b_ld, b + kk * b_row,
                            b_col_ok && b_k_left > kk);
            }
        } else {
#pragma unroll
            for (int j = 0; j < DM::b8_rows; j++) {
                int kk = 4 * s + j * DM::b8_row_step;
                dmma_copy8(bs + b_dst + kk * DM::b_ld, b + kk * b_row, b_col_ok && b_k_left > kk);
            }
        }
    }

    /* The next tile: after all its chunks. */
    __device__ __forceinline__ void advance(void)
    {
        a += DM::bk;
        a_k_left -= DM::bk;
        b += DM::bk * b_row;
        b_k_left -= DM::bk;
    }
};

/* The fragments of one k-step: A of the warp's 4 m16 tiles, B of its 4 n8
 * tiles (b[0]: tiles 0, 1; b[1]: tiles 2, 3). */
template <typename DM>
struct dmma_frags {
    double2 a[DM::mt];
    double2 b[DM::nt / 2];

    /* k-step s of the stage at as, bs (already offset by the lane's). */
    __device__ __forceinline__ void load(const double *as, const double *bs, int s)
    {
#pragma unroll
        for (int i = 0; i < DM::mt; i++)
            a[i] = *reinterpret_cast<const double2 *>(as + 4 * s * DM::a_ld + 16 * i);
#pragma unroll
        for (int h = 0; h < DM::nt / 2; h++)
            b[h] = *reinterpret_cast<const double2 *>(bs + 4 * s * DM::b_ld + 16 * h);
    }
};

template <typename DM>
static __device__ __forceinline__ void dmma_step(double (&acc)[DM::mt][DM::nt][4],
                                                 const dmma_frags<DM> &f)
{
#pragma unroll
    for (int i = 0; i < DM::mt; i++)
#pragma unroll
        for (int j = 0; j < DM::nt; j++)
            dmma_mma(acc[i][j], f.a[i], j % 2 ? f.b[j / 2].y : f.b[j / 2].x);
}

/* Tile (tm, tn) of block `id` among tiles_m x tiles_n: down bands of
 * DM::group tile rows, then right. */
template <typename DM>
static __device__ __forceinline__ void dmma_tile_of(int id, int tiles_m, int tiles_n, int *tm,
                                                    int *tn)
{
    int band_tiles = DM::group * tiles_n;
    int band = id / band_tiles;
    int in_band = id - band * band_tiles;
    int first = band * DM::group;
    int rows = min(tiles_m - first, (int)DM::group);
    *tm = first + in_band % rows;
    *tn = in_band / rows;
}

/* Block (x, y, z) computes tile x of product z * gridDim.y + y. */
template <typename DM, bool VEC>
static __global__ void __launch_bounds__(DM::threads, DM::min_blocks)
dgemm_dmma_kernel(const struct dgemm_problem p, int tiles_m, int tiles_n)
{
    extern __shared__ __align__(16) double dmma_smem[];
    long long z = (long long)blockIdx.z * gridDim.y + blockIdx.y;
    long long batch = p.batch > 1 ? p.batch : 1;
    if (z >= batch)
        return;
    /* (a split's shorter last slice: kernels/gemm_dispatch.c) */
    const int k = p.k_last > 0 && z == batch - 1 ? p.k_last : p.k;
    int tm, tn;
    dmma_tile_of<DM>(blockIdx.x, tiles_m, tiles_n, &tm, &tn);
    int bm0 = tm * DM::bm, bn0 = tn * DM::bn;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int g = lane / 4, t = lane % 4;
    int wm0 = warp / DM::warps_n * DM::wm, wn0 = warp % DM::warps_n * DM::wn;
    int ktiles = k > 0 ? (k - 1) / DM::bk + 1 : 0;
    double *as0 = dmma_smem;
    double *bs0 = dmma_smem + DM::stages * DM::a_stage;
    /* The lane's fragments at k-step 0: A rows wm0 + 2g, +1; B columns
     * wn0 + 2g, +1 (and 16 further), both at row t of k. */
    const int a_lane = t * DM::a_ld + wm0 + 2 * g;
    const int b_lane = t * DM::b_ld + wn0 + 2 * g;

    double acc[DM::mt][DM::nt][4];
#pragma unroll
    for (int i = 0; i < DM::mt; i++)
#pragma unroll
        for (int j = 0; j < DM::nt; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0;

    dmma_loader<DM, VEC> loader(p.a + z * p.stride_a, p.b + z * p.stride_b, p.m, p.n, k, p.lda,
                            bm0, bn0);
    /* Tiles 0 .. stages - 2, one commit group each. */
#pragma unroll
    for (int s = 0; s < DM::stages - 1; s++) {
        if (s < ktiles) {
#pragma unroll
            for (int c = 0; c < DM::ksteps; c++)
                loader.load(c, as0 + s * DM::a_stage, bs0 + s * DM::b_stage);
            loader.advance();
        }
        dmma_commit();
    }

    dmma_frags<DM> f[2];
    if (ktiles > 0) {
        dmma_wait<DM::stages - 2>();
        __syncthreads();
        f[0].load(as0 + a_lane, bs0 + b_lane, 0);
    }
    int rd = 0;                   /* slot of tile t */
    int wr = DM::stages - 1;      /* slot of tile t + stages - 1 */
    for (int kt = 0; kt < ktiles; kt++) {
        const double *as = as0 + rd * DM::a_stage + a_lane;
        const double *bs = bs0 + rd * DM::b_stage + b_lane;
        double *as_w = as0 + wr * DM::a_stage;
        double *bs_w = bs0 + wr * DM::b_stage;
        bool fill = kt + DM::stages - 1 < ktiles;
        rd = rd + 1 == DM::stages ? 0 : rd + 1;
#pragma unroll
        for (int s = 0; s < DM::ksteps; s++) {
            /* Chunk s of tile kt + stages - 1, into the slot that tile
             * kt - 1 left at the last barrier. */
            if (fill)
                loader.load(s, as_w, bs_w);
            if (s + 1 < DM::ksteps) {
                f[(s + 1) % 2].load(as, bs, s + 1);
            } else {
                /* Every warp has read this tile (its last fragments are in
                 * registers): tile kt + 1 lands, its slot is read next. */
                dmma_commit();
                dmma_wait<DM::stages - 2>();
                __syncthreads();
                if (kt + 1 < ktiles)
                    f[0].load(as0 + rd * DM::a_stage + a_lane, bs0 + rd * DM::b_stage + b_lane,
                              0);
            }
            dmma_step<DM>(acc, f[s % 2]);
        }
        if (fill)
            loader.advance();
        wr = wr + 1 == DM::stages ? 0 : wr + 1;
    }
    dmma_wait<0>();
    /* Every warp's last fragments are read and every copy has landed: the
     * ring holds the tile's C now. */
    __syncthreads();

    /* Lane (g, t): rows wm0 + 16 i + 2 g + v of the tile hold acc[i][j][2 v
     * + e]; column 4 t + q (and 16 + 4 t + q) of the warp's piece is
     * n8 tile j = q % 2 (2 + q % 2), element e = q / 2. */
    double *cs = dmma_smem;
#pragma unroll
    for (int i = 0; i < DM::mt; i++)
#pragma unroll
        for (int v = 0; v < 2; v++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    int r = wm0 + 16 * i + 2 * g + v, col = wn0 + 16 * h + 4 * t + 2 * e;
                    *reinterpret_cast<double2 *>(cs + r * DM::bn + col) =
                        make_double2(acc[i][2 * h][2 * v + e], acc[i][2 * h + 1][2 * v + e]);
                }
    __syncthreads();
    /* A row at a time (kernels/common.cuh): from the fragments a lane's
     * pair of a row is 16 bytes in 32, the halves of each sector in two
     * stores, and where N is odd one value at a time. */
    static_assert((size_t)DM::bm * DM::bn * sizeof(double) <= DM::smem,
                  "the ring holds the tile of C");
    tile_store_rows<double, DM::bm, DM::bn, DM::warps>(
        cs, p.c + z * p.stride_c + (size_t)bm0 * p.n + bn0, p.n, p.m - bm0, p.n - bn0, p.alpha,
        p.beta);
}

/* Rows of B start 16-byte aligned in every product (C is written a row
 * at a time, tile_store_rows, whatever its alignment). */
static bool dmma_vec_ok(const struct dgemm_problem *p)
{
    bool strides_even = p->batch <= 1 || p->stride_b % 2 == 0;
    return p->n % 2 == 0 && (uintptr_t)p->b % 16 == 0 && strides_even;
}

enum { DMMA_GRID_YZ = 65535 };

template <typename DM, bool VEC>
static cudaError_t dmma_launch_vec(const struct dgemm_problem *p, const struct launch_env *env)
{
    long long tiles_m = (p->m - 1LL) / DM::bm + 1, tiles_n = (p->n - 1LL) / DM::bn + 1;
    long long batch = p->batch > 1 ? p->batch : 1;
    if (tiles_m * tiles_n > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    /* Products in y, in chunks of 65535 along z. */
    long long per_z = batch < DMMA_GRID_YZ ? batch : (long long)DMMA_GRID_YZ;
    dim3 grid((unsigned)(tiles_m * tiles_n), (unsigned)per_z,
              (unsigned)((batch - 1) / per_z + 1));
    cudaError_t err = cudaFuncSetAttribute(dgemm_dmma_kernel<DM, VEC>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)DM::smem);
    if (err != cudaSuccess)
        return err;
    dgemm_dmma_kernel<DM, VEC><<<grid, DM::threads, DM::smem, env->stream>>>(*p, (int)tiles_m,
                                                                            (int)tiles_n);
    return launch_result();
}


/* Product p (a stack, or one) on tiles of DM. */
template <typename DM>
static cudaError_t dmma_launch(const struct dgemm_problem *p, const struct launch_env *env)
{
    if (p->m <= 0 || p->n <= 0)
        return cudaSuccess;
    return dmma_vec_ok(p) ? dmma_launch_vec<DM, true>(p, env) : dmma_launch_vec<DM, false>(p, env);
}

template <typename DM>
static cudaError_t dmma_attr(struct kernel_attr *out)
{
    return kernel_attr_of(dgemm_dmma_kernel<DM, true>, DM::threads, DM::smem, out);
}

/* A stage on this template: its registry entry points, dgemm_NAME_launch
 * and dgemm_NAME_attr, for the configuration CFG (a dmma_cfg). */
#define DMMA_STAGE(name, CFG)                                                                      \
    extern "C" cudaError_t dgemm_##name##_launch(const struct dgemm_problem *p,                    \
                                                 const struct launch_env *env)                     \
    {                                                                                              \
        return dmma_launch<CFG>(p, env);                                                           \
    }                                                                                              \
                                                                                                   \
    extern "C" cudaError_t dgemm_##name##_attr(struct kernel_attr *out)                            \
    {                                                                                              \
        return dmma_attr<CFG>(out);                                                                \
    }

#endif
