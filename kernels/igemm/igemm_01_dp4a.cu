/* i8_dp4a: int8 operands, int32 C = A * B (or C += A * B, for a product
 * summed in steps of K), the sums exact modulo 2^32; 64x64 block tiles
 * staged in shared memory with k packed four bytes to a word, 4x4 results
 * per thread, each step of four values of k one DP4A; a stack of products
 * in one launch.
 *
 * The integer ladder's CUDA-core rung for 8-bit operands: i64_tiled's
 * tiles (igemm_00_tiled.cu) on bytes, where one instruction (dp4a: a
 * four-way dot product of signed bytes added into an int32) does four
 * multiply-adds.  int32 sums are exact for the product's low 32 bits,
 * which is all a NumPy result of int8, int16, int32 or bool keeps; the
 * exact path applies alpha and beta and truncates afterwards.
 *
 * 256 threads as 16 x 16; thread (ty, tx) owns rows ty + 16 i and columns
 * tx + 16 j (i, j < 4).  A's tile is its rows' bytes as they lie (k
 * contiguous, so a word holds four values of k); B's is turned k-major as
 * it is stored: a thread gathers four bytes down a column of B (four rows,
 * one column: a warp reads 32 adjacent bytes of each row) into one word.
 * The rows of both tiles are 9 words apart, so the 16 columns a half warp
 * reads of B's tile fall in 16 banks.  Tiles are loaded with zeros outside
 * the matrix; the multiply loop has no bounds checks.
 *
 * Blocks: x is the tile, y + 65535 z the product, so any batch fits.
 *
 * gemmcli's own: the tiles of "SGEMM Optimization", section "2D-tile", as
 * i64_tiled has them, with the dp4a instruction of the CUDA C Programming
 * Guide's integer intrinsics (__dp4a).
 *
 * Run and checked by (a.npy and b.npy int8):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel i8_dp4a --verify --repeat 20 */
#include <stdint.h>
#include "kernels/gemm.h"
#include "kernels/common.cuh"
#include "kernels/igemm/igemm_grid.cuh"

enum {
    I8D_BM = 64, I8D_BN = 64, I8D_BK = 32,     /* BK in bytes (values of k) */
    I8D_WORDS = I8D_BK / 4,                    /* words of k a tile row holds */
    I8D_PITCH = I8D_WORDS + 1,                 /* words between tile rows */
    I8D_DIM = 16,
    I8D_THREADS = I8D_DIM * I8D_DIM,
    I8D_TM = I8D_BM / I8D_DIM, I8D_TN = I8D_BN / I8D_DIM,
};
static_assert(I8D_BM * I8D_WORDS == 2 * I8D_THREADS, "two words of A a thread and tile");
static_assert(I8D_BN * I8D_WORDS == 2 * I8D_THREADS, "two words of B a thread and tile");

/* The four bytes at p[0], p[step], p[2 step], p[3 step] of which the first
 * `n` exist, packed low to high (zeros for the rest). */
static __device__ __forceinline__ uint32_t i8d_gather(const int8_t *p, size_t step, int n)
{
    uint32_t w = 0;
#pragma unroll
    for (int i = 0; i < 4; i++)
        if (i < n)
            w |= (uint32_t)(uint8_t)p[i * step] << (8 * i);
    return w;
}

static __global__ void __launch_bounds__(I8D_THREADS, 4)
i8gemm_dp4a_kernel(const struct i8gemm_problem p, int tiles_n)
{
    __shared__ uint32_t as[I8D_BM][I8D_PITCH];
    __shared__ uint32_t bs[I8D_BN][I8D_PITCH];
    long long z = (long long)blockIdx.z * gridDim.y + blockIdx.y;
    if (z >= (p.batch > 1 ? p.batch : 1))
        return;
    int bm0 = (int)(blockIdx.x / tiles_n) * I8D_BM;
    int bn0 = (int)(blockIdx.x % tiles_n) * I8D_BN;
    int rows_left = p.m - bm0, cols_left = p.n - bn0;
    int tid = threadIdx.x, tx = tid % I8D_DIM, ty = tid / I8D_DIM;
    const int8_t *a = p.a + z * p.stride_a + (size_t)bm0 * p.k;
    const int8_t *b = p.b + z * p.stride_b + bn0;

    /* This thread's loads: words w = tid and tid + THREADS of each tile;
     * A's word w is row w / WORDS, bytes 4 (w % WORDS) on; B's is column
     * w % BN, rows 4 (w / BN) on. */
    int32_t acc[I8D_TM][I8D_TN] = {};
    for (int k0 = 0; k0 < p.k; k0 += I8D_BK) {
        int k_left = p.k - k0;
#pragma unroll
        for (int l = 0; l < 2; l++) {
            int w = tid + l * I8D_THREADS;
            int r = w / I8D_WORDS, kb = 4 * (w % I8D_WORDS);
            int n = r < rows_left ? min(4, k_left - kb) : 0;
            as[r][w % I8D_WORDS] = i8d_gather(a + (size_t)r * p.k + k0 + kb, 1, n);
            int c = w % I8D_BN, kr = 4 * (w / I8D_BN);
            int nb = c < cols_left ? min(4, k_left - kr) : 0;
            bs[c][w / I8D_BN] = i8d_gather(b + (size_t)(k0 + kr) * p.n + c, (size_t)p.n, nb);
        }
        __syncthreads();
#pragma unroll
        for (int kw = 0; kw < I8D_WORDS; kw++) {
            int ra[I8D_TM], rb[I8D_TN];
#pragma unroll
            for (int i = 0; i < I8D_TM; i++)
                ra[i] = (int)as[ty + I8D_DIM * i][kw];
#pragma unroll
            for (int j = 0; j < I8D_TN; j++)
                rb[j] = (int)bs[tx + I8D_DIM * j][kw];
#pragma unroll
            for (int i = 0; i < I8D_TM; i++)
#pragma unroll
                for (int j = 0; j < I8D_TN; j++)
                    acc[i][j] = __dp4a(ra[i], rb[j], acc[i][j]);
        }
        __syncthreads();
    }

    int32_t *c = p.c + z * p.stride_c + (size_t)bm0 * p.n + bn0;
#pragma unroll
    for (int i = 0; i < I8D_TM; i++) {
        int r = ty + I8D_DIM * i;
        if (r >= rows_left)
            continue;
#pragma unroll
        for (int j = 0; j < I8D_TN; j++) {
            int col = tx + I8D_DIM * j;
            if (col < cols_left) {
                int32_t *at = c + (size_t)r * p.n + col;
                /* (unsigned: the sum wraps modulo 2^32 by definition) */
                *at = (int32_t)((p.accumulate ? (uint32_t)*at : 0u) + (uint32_t)acc[i][j]);
            }
        }
    }
}

extern "C" cudaError_t i8gemm_dp4a_launch(const struct i8gemm_problem *p,
                                          const struct launch_env *env)
{
    if (p->m <= 0 || p->n <= 0)
        return cudaSuccess;
    dim3 grid;
    int tiles_n;
    cudaError_t err = igemm_grid(p->m, p->n, I8D_BM, I8D_BN, p->batch, &grid, &tiles_n);
    if (err != cudaSuccess)
        return err;
    i8gemm_dp4a_kernel<<<grid, I8D_THREADS, 0, env->stream>>>(*p, tiles_n);
    return launch_result();
}

extern "C" cudaError_t i8gemm_dp4a_attr(struct kernel_attr *out)
{
    return kernel_attr_of(i8gemm_dp4a_kernel, I8D_THREADS, 0, out);
}
