/* f64_small_k: products with a short K (K <= 32) in FP64: small_k's
 * kernels (kernels/memory_bound/small_k.cuh) with 2 columns per lane where float has 4,
 * so B's K x 2 doubles fit the registers as float's K x 4 do.
 *
 * Beyond the seeds.  Against f64_dmma and f64_pipeline, which spend a
 * short K filling and draining their pipelines (1920 x 18169 x 2 went to
 * f64_naive, the fastest of them there).
 *
 * Figures (`gemmcli bench --dtype f64`, NVIDIA H200, 2026-11-22, DGEMM in
 * the same run): 8192x8192x1 0.99 TFLOP/s (91%), 8192x8192x8 4.25 (62%;
 * 2.2 TB/s moved), 8192x8192x32 5.85 (25%; 1.96 before its launch bounds
 * let it take more than 64 registers).  auto's rates for it predate that
 * change. */
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
