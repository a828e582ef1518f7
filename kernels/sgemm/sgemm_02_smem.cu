/* smem: 32x32 tiles of A and B staged through shared memory.
 *
 * Against coalesced: each element of A and B is read from global memory
 * once per 32x32 block of C instead of once per element, cutting global
 * traffic 32-fold; the block still computes one element of C per thread,
 * so shared-memory loads (two per FMA) become the limit.  Tiles that hang
 * over the edge of A or B are filled with zeros, which keeps the inner loop
 * free of bounds checks for any M, N, K.
 *
 * Follows "cuda编程-矩阵乘法优化" ("CUDA programming: optimising matrix
 * multiplication"), section "Tiled Matrix Multiply with Shared Memory";
 * "How to optimize SGEMM on NVIDIA GPUs", kernel 2; "SGEMM Optimization",
 * section "using shared memory".
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel smem --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { SMEM_TILE = 32 };

static __global__ void __launch_bounds__(SMEM_TILE * SMEM_TILE)
sgemm_smem_kernel(const struct sgemm_problem p)
{
    __shared__ float as[SMEM_TILE][SMEM_TILE];
    __shared__ float bs[SMEM_TILE][SMEM_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * SMEM_TILE + ty;
    int col = blockIdx.x * SMEM_TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < p.k; k0 += SMEM_TILE) {
        as[ty][tx] = sgemm_load1(p.a, p.m, p.k, row, k0 + tx);
        bs[ty][tx] = sgemm_load1(p.b, p.k, p.n, k0 + ty, col);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SMEM_TILE; k++)
            acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    sgemm_store1(p, row, col, acc);
}

extern "C" cudaError_t sgemm_smem_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, SMEM_TILE), ceil_div(p->m, SMEM_TILE));
    sgemm_smem_kernel<<<grid, dim3(SMEM_TILE, SMEM_TILE), 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_smem_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_smem_kernel, SMEM_TILE * SMEM_TILE, 0, out);
}
