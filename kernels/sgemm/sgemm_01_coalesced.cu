/* coalesced: the naive kernel with the thread-to-element map swapped, so
 * that consecutive threads of a warp take consecutive COLUMNS of C.
 *
 * Against naive: at each k the warp reads one element of A (a broadcast)
 * and 32 adjacent elements of B (one 128-byte transaction), and writes C
 * rows contiguously.  Same arithmetic, a fraction of the memory traffic.
 *
 * Follows "cuda编程-矩阵乘法优化" ("CUDA programming: optimising matrix
 * multiplication"), section "Memory Coalescing" (kernel 2 of Simon Boehm's
 * worklog, which it reproduces); "SGEMM Optimization" makes the same
 * remark on the x/y mapping under "naive gemm".
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel coalesced --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { COALESCED_TILE = 32 };

static __global__ void sgemm_coalesced_kernel(const struct sgemm_problem p)
{
    int col = blockIdx.x * COALESCED_TILE + threadIdx.x;
    int row = blockIdx.y * COALESCED_TILE + threadIdx.y;
    if (row >= p.m || col >= p.n)
        return;
    const float *a = p.a + (size_t)row * p.k;
    float acc = 0.0f;
    for (int k = 0; k < p.k; k++)
        acc += a[k] * p.b[(size_t)k * p.n + col];
    sgemm_store1(p, row, col, acc);
}

extern "C" cudaError_t sgemm_coalesced_launch(const struct sgemm_problem *p,
                                              const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, COALESCED_TILE), ceil_div(p->m, COALESCED_TILE));
    sgemm_coalesced_kernel<<<grid, dim3(COALESCED_TILE, COALESCED_TILE), 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_coalesced_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_coalesced_kernel, COALESCED_TILE * COALESCED_TILE, 0, out);
}
