/* naive: one thread per element of C, each a K-long dot product read
 * straight from global memory.
 *
 * The starting point of every ladder: seed 004 ("naive"), seed 003 kernel 1,
 * seed 000 (gemm_2).  Consecutive threads of a warp (threadIdx.x) take
 * consecutive ROWS of C, so at each step of k the warp reads 32 elements of A
 * that are K floats apart: 32 separate memory transactions where one would
 * do.  That is seed 000's "a finding" and the reason for the next stage.
 *
 * Figure (NVIDIA H200, 2026-11-21, cuBLAS FP32 in the same run): 4096^3 0.50 TFLOP/s
 * (1.0% of cuBLAS), 8192^3 0.50 TFLOP/s (1.0%). */
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
