/* f64_small_k: products with a short K (K <= 32) in FP64: small_k's
 * kernels (kernels/memory_bound/small_k.cuh) with 2 columns per lane where
 * float has 4, so B's K x 2 doubles fit the registers as float's K x 4 do;
 * where K > 16, one column a lane, so that two blocks fit an SM.
 *
 * Against f64_dmma and f64_pipeline, which spend a short K filling and
 * draining their pipelines.  Its launch bounds let ptxas give it more than
 * 64 registers, which pays at K = 32 (the README's table).
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy float64, K at most 32):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_small_k --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/small_k.cuh"

extern "C" int dgemm_small_k_check(const struct gemm_problem *p, char *why, size_t n)
{
    return small_k_check("f64_small_k", p, why, n);
}

extern "C" cudaError_t dgemm_small_k_launch(const struct dgemm_problem *p,
                                            const struct launch_env *env)
{
    return small_k_run_problem<gemv_f64>(p, env);
}

extern "C" cudaError_t dgemm_small_k_attr(struct kernel_attr *out)
{
    return small_k_attr<gemv_f64>(out);
}
