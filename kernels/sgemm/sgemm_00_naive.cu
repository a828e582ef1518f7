/* naive: one thread per element of C, each a K-long dot product read
 * straight from global memory.
 *
 * The first stage of the float32 ladder, and the start of every ladder
 * after it.  Consecutive threads of a warp (threadIdx.x) take consecutive
 * ROWS of C, so at each step of k the warp reads 32 elements of A that are
 * K floats apart: 32 separate memory transactions where one would do.  The
 * next stage, coalesced, swaps the map.
 *
 * Follows "How to optimize SGEMM on NVIDIA GPUs" (Yujia Zhai), kernel 1, and
 * "cuda编程-矩阵乘法优化" ("CUDA programming: optimising matrix
 * multiplication"), section "Naive vs cuBLAS", a reproduction of Simon
 * Boehm's "How to Optimize a CUDA Matmul Kernel for cuBLAS-like
 * Performance: a Worklog".  The cost of the row-wise thread map is the
 * finding that "SGEMM Optimization" reports under "naive gemm".
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel naive --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { NAIVE_TILE = 32 };

static __global__ void sgemm_naive_kernel(const struct sgemm_problem p)
{
    int row = blockIdx.x * NAIVE_TILE + threadIdx.x;
    int col = blockIdx.y * NAIVE_TILE + threadIdx.y;
    if (row >= p.m || col >= p.n)
        return;
    const float *a = p.a + (size_t)row * p.k;
    float acc = 0.0f;
    for (int k = 0; k < p.k; k++)
        acc += a[k] * p.b[(size_t)k * p.n + col];
    sgemm_store1(p, row, col, acc);
}

extern "C" cudaError_t sgemm_naive_launch(const struct sgemm_problem *p,
                                          const struct launch_env *env)
{
    dim3 grid(ceil_div(p->m, NAIVE_TILE), ceil_div(p->n, NAIVE_TILE));
    sgemm_naive_kernel<<<grid, dim3(NAIVE_TILE, NAIVE_TILE), 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_naive_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_naive_kernel, NAIVE_TILE * NAIVE_TILE, 0, out);
}
