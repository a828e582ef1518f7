/* dgemm pipeline: FP64 on the CUDA cores (DFMA), 128x128 block tiles, 8x8
 * doubles of C per thread, a 4-stage cp.async pipeline from global to
 * shared memory; a stack of products in one launch.
 *
 * Against f64_naive: A and B pass through shared memory once per block
 * instead of once per element of C, and each thread keeps 64 accumulators
 * in registers.
 *
 * The budget.  A Hopper SM retires 64 DFMA per clock: two warp
 * instructions, half the four schedulers' issue slots, so the other
 * instructions of the main loop have the other half.  Per step of k a
 * thread loads 8 doubles of A and 8 of B (4 + 4 LDS.128) for 64 DFMA.
 * Shared memory delivers one 128-byte wavefront per clock per SM; the DFMA
 * of one warp's step take 32 SM clocks, so its 8 LDS.128 must stay near one
 * wavefront each.  64 accumulators are 128 registers, so one block of 8
 * warps fills an SM (__launch_bounds__(256, 1), up to 255 registers each).
 *
 * Lanes and loads.  8 warps as 4 (M) x 2 (N), each owning 32 x 64 of C.
 * Lane (lm, ln) = (lane / 8, lane % 8) holds rows 2 lm + {0, 1} + 8 q and
 * columns 2 ln + {0, 1} + 16 q of its warp's piece, q < 4: pairs of
 * adjacent doubles, one LDS.128 each.  For one q, the 32 lanes read A at
 * only 4 distinct 16-byte chunks (lm = 0..3), adjacent: 64 bytes, every
 * lane of a row a broadcast; and B at 8 distinct adjacent chunks (ln =
 * 0..7): 128 bytes over all 32 banks.  One wavefront per LDS.128, no
 * conflict.  With 8 contiguous rows per lane instead, the 4 chunks of A
 * would lie 64 bytes apart and two of them share banks.
 *
 * Copies.  A is stored transposed (as[k][m]) so that the lanes above read
 * it along m; the transpose is done by the copies themselves, one 8-byte
 * cp.async per element.  One copy instruction of a warp takes 4 rows x 8
 * values of k (64 contiguous bytes of each row).  Rows of as are BM + 2
 * doubles: even, so LDS.128 stays aligned, and 2 (mod 16), so that
 * element (k, r) sits at bank 4 k + 2 r (mod 32) and the 16 copies of half
 * a warp (8 values of k, two rows) cover the 32 banks once.  B keeps its
 * layout and moves in 16-byte pieces where its rows are 16-byte aligned
 * (even n, aligned bases and batch strides), in 8-byte pieces otherwise;
 * 16 threads share a row of the tile.  A thread's copies of one tile
 * differ by constant offsets (the two halves of k of a row of A, the
 * pieces of its row of B), so they need 4 + 1 source pointers rather than
 * 8 + 4: with one pointer per copy the kernel spills.  Outside A or B a
 * copy reads nothing and fills zeros (src-size 0), so the main loop has no
 * bounds checks: the zeros along k meet zeros, those beyond m or n land in
 * results never stored.
 *
 * Blocks.  x is the tile, walked down bands of 8 tile rows so that the
 * blocks resident at one time share their A rows and B columns in L2;
 * y + 65535 z is the product, so any batch fits one launch.
 *
 * ptxas (CUDA 13.0, sm_90): 234 registers (226 with 8-byte copies of B),
 * no spills, 129 KiB of shared memory; the main loop's SASS holds 1024
 * DFMA in 1229 instructions per 16 steps of k (128 LDS.128, 12 LDGSTS).
 *
 * Follows no published write-up: gemmcli's own, the cp_async pipeline
 * on doubles (the layout of the SGEMM ladder's top, sgemm_pipeline.cuh,
 * rethought for 8-byte elements).  Nsight Compute's view of what holds it
 * below the FP64 CUDA-core peak is in the README ("Measurements behind
 * the stages").
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_pipeline --verify --repeat 20 */
#include <stdint.h>
#include "kernels/gemm.h"
#include "kernels/common.cuh"

struct dpipe_cfg {
    static constexpr int bm = 128, bn = 128, bk = 16, stages = 4, group = 8;
    static constexpr int warps_m = 4, warps_n = 2, warps = warps_m * warps_n;
    static constexpr int threads = warps * 32;
    static constexpr int lanes_m = 4, lanes_n = 8;
    /* A thread's 8x8: 4 pairs of rows 8 apart, 4 pairs of columns 16 apart. */
    static constexpr int wm = lanes_m * 2 * 4, wn = lanes_n * 2 * 4;
    static constexpr int a_ld = bm + 2;
    static constexpr int a_stage = bk * a_ld, b_stage = bk * bn;
    static constexpr size_t smem = (size_t)stages * (a_stage + b_stage) * sizeof(double);
    /* A: a warp copies 4 rows x 8 values of k per instruction; a thread's
     * copies are bk / 8 groups of k (constant offsets) in a_groups rows
     * a_row_step apart. */
    static constexpr int a_khalves = bk / 8;
    static constexpr int a_row_step = warps * 4;
    static constexpr int a_groups = bm / a_row_step;
    /* B: b_lanes threads share a row of the tile, each copying pieces
     * b_lanes pieces apart (constant offsets). */
    static constexpr int b_lanes = threads / bk;
    static_assert(lanes_m * lanes_n == 32, "a warp is lanes_m x lanes_n lanes");
    static_assert(warps_m * wm == bm && warps_n * wn == bn, "warp pieces tile the block");
    static_assert(a_ld % 2 == 0, "rows of as must keep LDS.128 16-byte aligned");
    static_assert(a_ld % 16 == 2, "rows of as 2 (mod 16) doubles apart: conflict-free copies of A");
    static_assert(bn % 2 == 0 && (a_stage * sizeof(double)) % 16 == 0 &&
                  (b_stage * sizeof(double)) % 16 == 0, "stage buffers stay 16-byte aligned");
    static_assert(bk % 8 == 0 && bm % a_row_step == 0, "A copies: groups of 8 values of k, rows split evenly");
    static_assert(threads % bk == 0 && bn % (2 * b_lanes) == 0, "B copies split evenly over threads");
    static_assert(a_groups <= 32 && bn / b_lanes <= 32, "one bit per copy in a 32-bit mask");
    static_assert(stages >= 2, "a pipeline needs at least two stages");
    static_assert(smem <= 227 * 1024, "fits the opt-in shared memory of one block");
};
typedef dpipe_cfg DP;

static __device__ __forceinline__ unsigned dpipe_smem_addr(const void *ptr)
{
    return (unsigned)__cvta_generic_to_shared(ptr);
}

/* 8 bytes, or 8 zeros when !ok (nothing is read from src then). */
static __device__ __forceinline__ void dpipe_copy8(double *dst, const double *src, bool ok)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dpipe_smem_addr(dst)),
                 "l"(src), "r"(ok ? 8 : 0));
}

/* 16 bytes (two doubles), or 16 zeros when !ok. */
static __device__ __forceinline__ void dpipe_copy16(double *dst, const double *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dpipe_smem_addr(dst)),
                 "l"(src), "r"(ok ? 16 : 0));
}

static __device__ __forceinline__ void dpipe_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void dpipe_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* One thread's copies of each k-tile of A and B, tile after tile. */
template <bool VEC>
struct dpipe_loader {
    static constexpr int b_vec = VEC ? 2 : 1;                   /* doubles per copy */
    static constexpr int b_copies = DP::bn / (DP::b_lanes * b_vec);

    const double *a, *b;      /* this thread's first element of the next tile */
    size_t a_step;            /* between its rows of A */
    size_t b_tile;            /* bk rows of B */
    unsigned a_rows_ok;       /* bit g: its g-th row of A lies inside A */
    unsigned b_cols_ok;       /* bit l: its l-th piece of B lies inside B */
    int a_k_left, b_k_left;   /* values of k left from its first one */
    int a_dst, b_dst;         /* offsets in a stage buffer */

    __device__ __forceinline__ dpipe_loader(const double *a0, const double *b0, int m, int n,
                                            int k, int bm0, int bn0)
    {
        int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
        int a_row = warp * 4 + lane / 8, a_kk = lane % 8;
        a = a0 + ((size_t)bm0 + a_row) * k + a_kk;
        a_step = (size_t)DP::a_row_step * k;
        a_rows_ok = 0;
#pragma unroll
        for (int g = 0; g < DP::a_groups; g++)
            a_rows_ok |= (unsigned)(a_row + g * DP::a_row_step < m - bm0) << g;
        a_k_left = k - a_kk;
        a_dst = a_kk * DP::a_ld + a_row;

        int b_kk = tid / DP::b_lanes, b_col = tid % DP::b_lanes * b_vec;
        b = b0 + (size_t)b_kk * n + bn0 + b_col;
        b_tile = (size_t)DP::bk * n;
        b_cols_ok = 0;
#pragma unroll
        for (int l = 0; l < b_copies; l++)
            b_cols_ok |= (unsigned)(b_col + l * DP::b_lanes * b_vec < n - bn0) << l;
        b_k_left = k - b_kk;
        b_dst = b_kk * DP::bn + b_col;
    }

    /* Issues the copies of the next k-tile into the stage buffers as, bs. */
    __device__ __forceinline__ void load(double *as, double *bs)
    {
#pragma unroll
        for (int g = 0; g < DP::a_groups; g++) {
            const double *src = a + g * a_step;
            bool row_ok = a_rows_ok >> g & 1;
#pragma unroll
            for (int h = 0; h < DP::a_khalves; h++)
                dpipe_copy8(as + a_dst + h * 8 * DP::a_ld + g * DP::a_row_step, src + h * 8,
                            row_ok && a_k_left > h * 8);
        }
        bool b_k_ok = b_k_left > 0;
#pragma unroll
        for (int l = 0; l < b_copies; l++) {
            int off = l * DP::b_lanes * b_vec;
            if (VEC)
                dpipe_copy16(bs + b_dst + off, b + off, b_k_ok && (b_cols_ok >> l & 1));
            else
                dpipe_copy8(bs + b_dst + off, b + off, b_k_ok && (b_cols_ok >> l & 1));
        }
        a += DP::bk;
        a_k_left -= DP::bk;
        b += b_tile;
        b_k_left -= DP::bk;
    }
};

/* Tile (tm, tn) of block `id` among tiles_m x tiles_n: down bands of
 * DP::group tile rows, then right. */
static __device__ __forceinline__ void dpipe_tile_of(int id, int tiles_m, int tiles_n, int *tm,
                                                     int *tn)
{
    int band_tiles = DP::group * tiles_n;
    int band = id / band_tiles;
    int in_band = id - band * band_tiles;
    int first = band * DP::group;
    int rows = min(tiles_m - first, (int)DP::group);
    *tm = first + in_band % rows;
    *tn = in_band / rows;
}

/* alpha * acc + beta * C, C unread when beta == 0. */
static __device__ __forceinline__ double dpipe_out(const struct dgemm_problem &p, double acc,
                                                   const double *c)
{
    return p.beta == 0.0 ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

/* Block (x, y, z) computes tile x of product z * gridDim.y + y. */
template <bool VEC>
static __global__ void __launch_bounds__(DP::threads, 1)
dgemm_pipeline_kernel(const struct dgemm_problem p, int tiles_m, int tiles_n)
{
    extern __shared__ __align__(16) double dpipe_smem[];
    long long z = (long long)blockIdx.z * gridDim.y + blockIdx.y;
    if (z >= (p.batch > 1 ? p.batch : 1))
        return;
    int tm, tn;
    dpipe_tile_of(blockIdx.x, tiles_m, tiles_n, &tm, &tn);
    int bm0 = tm * DP::bm, bn0 = tn * DP::bn;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int m0 = warp / DP::warps_n * DP::wm + lane / DP::lanes_n * 2;
    int n0 = warp % DP::warps_n * DP::wn + lane % DP::lanes_n * 2;
    int ktiles = p.k > 0 ? (p.k - 1) / DP::bk + 1 : 0;
    double *as0 = dpipe_smem;
    double *bs0 = dpipe_smem + DP::stages * DP::a_stage;

    double acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0.0;

    dpipe_loader<VEC> loader(p.a + z * p.stride_a, p.b + z * p.stride_b, p.m, p.n, p.k, bm0, bn0);
#pragma unroll
    for (int s = 0; s < DP::stages - 1; s++) {
        if (s < ktiles)
            loader.load(as0 + s * DP::a_stage, bs0 + s * DP::b_stage);
        dpipe_commit();
    }
    for (int t = 0; t < ktiles; t++) {
        /* Tile t has landed (this thread's copies), and after the barrier
         * everyone's; the slot of tile t - 1 is free again. */
        dpipe_wait<DP::stages - 2>();
        __syncthreads();
        int next = t + DP::stages - 1;
        if (next < ktiles) {
            int s = next % DP::stages;
            loader.load(as0 + s * DP::a_stage, bs0 + s * DP::b_stage);
        }
        dpipe_commit();
        const double *as = as0 + (t % DP::stages) * DP::a_stage + m0;
        const double *bs = bs0 + (t % DP::stages) * DP::b_stage + n0;
#pragma unroll
        for (int kk = 0; kk < DP::bk; kk++) {
            double ra[8], rb[8];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                double2 va = *reinterpret_cast<const double2 *>(as + kk * DP::a_ld + 8 * q);
                double2 vb = *reinterpret_cast<const double2 *>(bs + kk * DP::bn + 16 * q);
                ra[2 * q] = va.x;
                ra[2 * q + 1] = va.y;
                rb[2 * q] = vb.x;
                rb[2 * q + 1] = vb.y;
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = fma(ra[i], rb[j], acc[i][j]);
        }
    }
    dpipe_wait<0>();

    int rows_left = p.m - bm0, cols_left = p.n - bn0;
    double *c = p.c + z * p.stride_c + (size_t)bm0 * p.n + bn0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int r = m0 + 8 * (i / 2) + i % 2;
        if (r >= rows_left)
            continue;
        double *crow = c + (size_t)r * p.n;
#pragma unroll
        for (int q = 0; q < 4; q++) {
            int col = n0 + 16 * q;
            if (col >= cols_left)
                continue;
            double *cp = crow + col;
            if (VEC) {
                /* n is even: the pair lies wholly inside C. */
                double2 out = make_double2(p.alpha * acc[i][2 * q], p.alpha * acc[i][2 * q + 1]);
                if (p.beta != 0.0) {
                    double2 old = *reinterpret_cast<const double2 *>(cp);
                    out.x += p.beta * old.x;
                    out.y += p.beta * old.y;
                }
                *reinterpret_cast<double2 *>(cp) = out;
            } else {
                cp[0] = dpipe_out(p, acc[i][2 * q], cp);
                if (col + 1 < cols_left)
                    cp[1] = dpipe_out(p, acc[i][2 * q + 1], cp + 1);
            }
        }
    }
}

/* Rows of B and C start 16-byte aligned in every product. */
static bool dpipe_vec_ok(const struct dgemm_problem *p)
{
    uintptr_t bases = (uintptr_t)p->b | (uintptr_t)p->c;
    bool strides_even = p->batch <= 1 || (p->stride_b % 2 == 0 && p->stride_c % 2 == 0);
    return p->n % 2 == 0 && bases % 16 == 0 && strides_even;
}

enum { DPIPE_GRID_YZ = 65535 };

template <bool VEC>
static cudaError_t dpipe_launch(const struct dgemm_problem *p, const struct launch_env *env)
{
    long long tiles_m = (p->m - 1LL) / DP::bm + 1, tiles_n = (p->n - 1LL) / DP::bn + 1;
    long long batch = p->batch > 1 ? p->batch : 1;
    if (tiles_m * tiles_n > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    /* Products in y, in chunks of 65535 along z. */
    long long per_z = batch < DPIPE_GRID_YZ ? batch : (long long)DPIPE_GRID_YZ;
    dim3 grid((unsigned)(tiles_m * tiles_n), (unsigned)per_z,
              (unsigned)((batch - 1) / per_z + 1));
    cudaError_t err = cudaFuncSetAttribute(dgemm_pipeline_kernel<VEC>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)DP::smem);
    if (err != cudaSuccess)
        return err;
    dgemm_pipeline_kernel<VEC><<<grid, DP::threads, DP::smem, env->stream>>>(*p, (int)tiles_m,
                                                                            (int)tiles_n);
    return launch_result();
}

extern "C" cudaError_t dgemm_pipeline_launch(const struct dgemm_problem *p,
                                             const struct launch_env *env)
{
    if (p->m <= 0 || p->n <= 0)
        return cudaSuccess;
    return dpipe_vec_ok(p) ? dpipe_launch<true>(p, env) : dpipe_launch<false>(p, env);
}

extern "C" cudaError_t dgemm_pipeline_attr(struct kernel_attr *out)
{
    return kernel_attr_of(dgemm_pipeline_kernel<true>, DP::threads, DP::smem, out);
}
