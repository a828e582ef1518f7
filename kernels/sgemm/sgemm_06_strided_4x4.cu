/* strided_4x4: a 128x128 block tile on 32x32 threads, each thread computing
 * 16 elements of C spread 32 apart in both directions.
 *
 * Against outer_product: the same 128x128x8 tiles, but 1024 threads of 16
 * results rather than 256 of 64; A is stored transposed (shmem_a[k][m]) and
 * both tiles are padded by one column, as in the write-up.  Each step of k
 * loads 4 + 4 single floats for 16 FMAs: threads of a warp share ty, so the
 * loads of A are broadcasts and those of B hit 32 consecutive banks.
 *
 * Its partner, contiguous_4x4 (matrixMul_2_2), gives each thread a
 * contiguous 4x4 tile instead; the write-up finds 2_2 much faster "at the
 * same compute-to-memory ratio" and leaves the reason open.  The header of
 * sgemm_07_contiguous_4x4.cu answers it.
 *
 * Follows "Matrix multiplication (RTX 3060 Laptop write-up)", matrixMul_2_1:
 * the section "矩阵乘法" ("Matrix multiplication") of a Chinese write-up of
 * transpose and matmul experiments on an RTX 3060 Laptop GPU, whose first
 * heading is "实验环境" ("Experimental setup").
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel strided_4x4 --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { S44_TILE = 128, S44_TK = 8, S44_STRIDE = 32, S44_NUM = S44_TILE / S44_STRIDE };
enum { S44_THREADS = S44_STRIDE * S44_STRIDE };

static_assert(S44_TILE * S44_TK == S44_THREADS, "one element of A and of B per thread per tile");

static __global__ void __launch_bounds__(S44_THREADS)
sgemm_strided_4x4_kernel(const struct sgemm_problem p)
{
    __shared__ float shmem_a[S44_TK][S44_TILE + 1];
    __shared__ float shmem_b[S44_TK][S44_TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * S44_STRIDE + tx;
    int bm0 = blockIdx.y * S44_TILE, bn0 = blockIdx.x * S44_TILE;
    int shax = tid % S44_TK, shay = tid / S44_TK;
    int shbx = tid % S44_TILE, shby = tid / S44_TILE;
    float reg_a[S44_NUM], reg_b[S44_NUM];
    float acc[S44_NUM][S44_NUM] = {};

    for (int k0 = 0; k0 < p.k; k0 += S44_TK) {
        shmem_a[shax][shay] = sgemm_load1(p.a, p.m, p.k, bm0 + shay, k0 + shax);
        shmem_b[shby][shbx] = sgemm_load1(p.b, p.k, p.n, k0 + shby, bn0 + shbx);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S44_TK; k++) {
#pragma unroll
            for (int i = 0; i < S44_NUM; i++) {
                reg_a[i] = shmem_a[k][ty + i * S44_STRIDE];
                reg_b[i] = shmem_b[k][tx + i * S44_STRIDE];
            }
#pragma unroll
            for (int i = 0; i < S44_NUM; i++)
#pragma unroll
                for (int j = 0; j < S44_NUM; j++)
                    acc[i][j] += reg_a[i] * reg_b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < S44_NUM; i++)
#pragma unroll
        for (int j = 0; j < S44_NUM; j++)
            sgemm_store1(p, bm0 + ty + i * S44_STRIDE, bn0 + tx + j * S44_STRIDE, acc[i][j]);
}

extern "C" cudaError_t sgemm_strided_4x4_launch(const struct sgemm_problem *p,
                                                const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, S44_TILE), ceil_div(p->m, S44_TILE));
    sgemm_strided_4x4_kernel<<<grid, dim3(S44_STRIDE, S44_STRIDE), 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_strided_4x4_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_strided_4x4_kernel, S44_THREADS, 0, out);
}
