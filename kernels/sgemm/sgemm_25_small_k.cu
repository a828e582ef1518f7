/* small_k: products with a short K (K <= 32) in float: outer products and
 * their sums, where the work is writing C; C written as a copy writes,
 * B's strip in registers.  The kernels are kernels/memory_bound/small_k.cuh's
 * templates (shared with f16_small_k and f64_small_k); this file names the
 * type.
 *
 * Figures (`gemmcli bench`, NVIDIA H200, 2026-11-22, cuBLAS in the same run; the
 * device copies at 4.2 TB/s read + written): 8192x8192x1 1.83 TFLOP/s
 * (147% of cuBLAS; 3.65 TB/s moved), 8192x8192x8 127%, 100000 x 8x8x8
 * 142%.  At K = 32 it is compute-bound at 11.6 TFLOP/s (8192^2 x 32: 47%;
 * 6.4 before __launch_bounds__(256, 1) let ptxas past 128 registers):
 * four results per lane, each K FMAs from registers, A read as a
 * broadcast per row. */
#include "kernels/gemm.h"
#include "kernels/memory_bound/small_k.cuh"

extern "C" int sgemm_small_k_check(const struct gemm_problem *p, char *why, size_t n)
{
    return small_k_check("small_k", p, why, n);
}

extern "C" cudaError_t sgemm_small_k_launch(const struct sgemm_problem *p,
                                            const struct launch_env *env)
{
    return small_k_run_problem<gemv_f32>(p, env);
}

extern "C" cudaError_t sgemm_small_k_attr(struct kernel_attr *out)
{
    return small_k_attr<gemv_f32>(out);
}
