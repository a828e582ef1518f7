/* igemm tiled: exact int64 C = A * B (or C += A * B, for a product summed
 * in steps of K), wrapping modulo 2^64 like NumPy's integer matmul; 64x64
 * block tiles staged in shared memory, 4x4 results per thread; a stack of
 * products in one launch.
 *
 * The first stage of the integer ladder: the shared-memory tiling of
 * sgemm_02_smem.cu with the several results per thread of
 * sgemm_04_blocktile_2d.cu.  NumPy converts every integer dtype to int64
 * for this kernel and truncates the result afterwards, so one exact ring
 * serves them all.  The arithmetic is unsigned: a uint64 product and sum
 * wrap modulo 2^64 by definition, giving the two's complement bits NumPy
 * gets, where signed overflow would be undefined.  The GPU has no 64-bit
 * multiplier: a step of k is three 32-bit IMADs (see below), so the
 * integer pipe, not memory, bounds this kernel once the tiles are in
 * shared memory.
 *
 * 256 threads as 16 x 16; thread (ty, tx) owns rows ty + 16 i and columns
 * tx + 16 j (i, j < 4) of the tile.  Per step of k a warp (two values of
 * ty) reads 2 distinct elements of A (broadcasts) and 16 adjacent of B
 * (128 bytes): one wavefront each.  Tiles are loaded coalesced along rows,
 * zeros outside the matrix, so the multiply loop has no bounds checks; C
 * is written 16 adjacent elements per half warp.
 *
 * Blocks: x is the tile, y + 65535 z the product, so any batch fits.
 *
 * ptxas (CUDA 13.0, sm_90): 128 registers (held there by __launch_bounds__
 * for two blocks per SM; 130 without), no spills, 16 KiB of shared memory.
 * The SASS of 16 steps of k (256 multiply-adds): 513 IMAD, 257
 * IMAD.WIDE.U32, 266 IADD3(.X), 96 LDS in 1195 instructions.
 *
 * Follows "SGEMM Optimization", section "2D-tile", with the shared-memory
 * tiles of "cuda编程-矩阵乘法优化" ("CUDA programming: optimising matrix
 * multiplication"), in exact int64.
 *
 * Run and checked by (a.npy and b.npy int64, or any integer dtype):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel i64_tiled --verify --repeat 20 */
#include <stdint.h>
#include "kernels/gemm.h"
#include "kernels/common.cuh"
#include "kernels/igemm/igemm_grid.cuh"

enum {
    IGEMM_BM = 64, IGEMM_BN = 64, IGEMM_BK = 16,
    IGEMM_DIM = 16,                        /* threads per side */
    IGEMM_THREADS = IGEMM_DIM * IGEMM_DIM,
    IGEMM_TM = IGEMM_BM / IGEMM_DIM, IGEMM_TN = IGEMM_BN / IGEMM_DIM,
};
static_assert(IGEMM_BM % IGEMM_DIM == 0 && IGEMM_BN % IGEMM_DIM == 0,
              "results per thread tile the block evenly");
static_assert(IGEMM_THREADS % IGEMM_BK == 0 && IGEMM_BM % (IGEMM_THREADS / IGEMM_BK) == 0,
              "A tile loads split evenly over threads");
static_assert(IGEMM_THREADS % IGEMM_BN == 0 && IGEMM_BK % (IGEMM_THREADS / IGEMM_BN) == 0,
              "B tile loads split evenly over threads");

/* acc += a * b, the 64-bit product of two 32-bit values; and the 32-bit
 * multiply-add.  In PTX because the compiler otherwise regroups the sums
 * into trees of IADD3 and spends more instructions than one IMAD a term. */
static __device__ __forceinline__ void igemm_mad_wide(uint64_t &acc, uint32_t a, uint32_t b)
{
    asm("mad.wide.u32 %0, %1, %2, %0;" : "+l"(acc) : "r"(a), "r"(b));
}

static __device__ __forceinline__ void igemm_mad(uint32_t &acc, uint32_t a, uint32_t b)
{
    asm("mad.lo.u32 %0, %1, %2, %0;" : "+r"(acc) : "r"(a), "r"(b));
}

/* Block (x, y, z) computes tile x of product z * gridDim.y + y. */
static __global__ void __launch_bounds__(IGEMM_THREADS, 2)
igemm_tiled_kernel(const struct igemm_problem p, int tiles_n)
{
    __shared__ uint64_t as[IGEMM_BM][IGEMM_BK];
    __shared__ uint64_t bs[IGEMM_BK][IGEMM_BN];
    long long z = (long long)blockIdx.z * gridDim.y + blockIdx.y;
    if (z >= (p.batch > 1 ? p.batch : 1))
        return;
    int bm0 = (int)(blockIdx.x / tiles_n) * IGEMM_BM;
    int bn0 = (int)(blockIdx.x % tiles_n) * IGEMM_BN;
    int rows_left = p.m - bm0, cols_left = p.n - bn0;
    int tid = threadIdx.x, tx = tid % IGEMM_DIM, ty = tid / IGEMM_DIM;

    /* This thread's loads: A rows a_r + (THREADS / BK) l at k a_k, B rows
     * b_k + (THREADS / BN) l at column b_c. */
    const int a_rstep = IGEMM_THREADS / IGEMM_BK, b_kstep = IGEMM_THREADS / IGEMM_BN;
    int a_r = tid / IGEMM_BK, a_k = tid % IGEMM_BK;
    int b_k = tid / IGEMM_BN, b_c = tid % IGEMM_BN;
    const uint64_t *a = (const uint64_t *)p.a + z * p.stride_a + ((size_t)bm0 + a_r) * p.k + a_k;
    const uint64_t *b = (const uint64_t *)p.b + z * p.stride_b + (size_t)b_k * p.n + bn0 + b_c;
    size_t a_step = (size_t)a_rstep * p.k, b_step = (size_t)b_kstep * p.n;
    size_t b_tile = (size_t)IGEMM_BK * p.n;
    bool b_col_ok = b_c < cols_left;

    /* A product modulo 2^64 is lo(a) lo(b) + 2^32 (lo(a) hi(b) + hi(a) lo(b)):
     * the first term is summed in 64 bits, the cross terms, which only
     * count modulo 2^32, in 32, and joined at the end.  Three IMADs a
     * step; ptxas adds two 64-bit terms at a time with IADD3 + IADD3.X,
     * about 4.05 instructions a step in all, against 4.5 for a plain
     * uint64 multiply-add. */
    uint64_t acc[IGEMM_TM][IGEMM_TN] = {};
    uint32_t cross[IGEMM_TM][IGEMM_TN] = {};
    for (int k_left = p.k; k_left > 0; k_left -= IGEMM_BK) {
#pragma unroll
        for (int l = 0; l < IGEMM_BM / a_rstep; l++)
            as[a_r + l * a_rstep][a_k] =
                a_r + l * a_rstep < rows_left && a_k < k_left ? a[l * a_step] : 0;
#pragma unroll
        for (int l = 0; l < IGEMM_BK / b_kstep; l++)
            bs[b_k + l * b_kstep][b_c] =
                b_col_ok && b_k + l * b_kstep < k_left ? b[l * b_step] : 0;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < IGEMM_BK; kk++) {
            uint64_t ra[IGEMM_TM], rb[IGEMM_TN];
#pragma unroll
            for (int i = 0; i < IGEMM_TM; i++)
                ra[i] = as[ty + IGEMM_DIM * i][kk];
#pragma unroll
            for (int j = 0; j < IGEMM_TN; j++)
                rb[j] = bs[kk][tx + IGEMM_DIM * j];
#pragma unroll
            for (int i = 0; i < IGEMM_TM; i++)
#pragma unroll
                for (int j = 0; j < IGEMM_TN; j++) {
                    uint32_t a_lo = (uint32_t)ra[i], a_hi = (uint32_t)(ra[i] >> 32);
                    uint32_t b_lo = (uint32_t)rb[j], b_hi = (uint32_t)(rb[j] >> 32);
                    igemm_mad_wide(acc[i][j], a_lo, b_lo);
                    igemm_mad(cross[i][j], a_lo, b_hi);
                    igemm_mad(cross[i][j], a_hi, b_lo);
                }
        }
        __syncthreads();
        a += IGEMM_BK;
        b += b_tile;
    }

    uint64_t *c = (uint64_t *)p.c + z * p.stride_c + (size_t)bm0 * p.n + bn0;
#pragma unroll
    for (int i = 0; i < IGEMM_TM; i++) {
        int r = ty + IGEMM_DIM * i;
        if (r >= rows_left)
            continue;
#pragma unroll
        for (int j = 0; j < IGEMM_TN; j++) {
            int col = tx + IGEMM_DIM * j;
            if (col < cols_left)
                c[(size_t)r * p.n + col] = (p.accumulate ? c[(size_t)r * p.n + col] : 0) +
                                           acc[i][j] + ((uint64_t)cross[i][j] << 32);
        }
    }
}

extern "C" cudaError_t igemm_tiled_launch(const struct igemm_problem *p,
                                          const struct launch_env *env)
{
    if (p->m <= 0 || p->n <= 0)
        return cudaSuccess;
    dim3 grid;
    int tiles_n;
    cudaError_t err = igemm_grid(p->m, p->n, IGEMM_BM, IGEMM_BN, p->batch, &grid, &tiles_n);
    if (err != cudaSuccess)
        return err;
    igemm_tiled_kernel<<<grid, IGEMM_THREADS, 0, env->stream>>>(*p, tiles_n);
    return launch_result();
}

extern "C" cudaError_t igemm_tiled_attr(struct kernel_attr *out)
{
    return kernel_attr_of(igemm_tiled_kernel, IGEMM_THREADS, 0, out);
}
