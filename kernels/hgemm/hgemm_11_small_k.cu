/* f16_small_k: products with a short K (K <= 32) on float16 or bfloat16
 * operands, FP32 accumulation and float C: small_k's kernels
 * (kernels/memory_bound/small_k.cuh), each value widened to float where it
 * is read; where K > 16, 2 columns a lane where float keeps 4, so that
 * two blocks fit an SM.
 *
 * Against the tensor-core stages, which spend a short K filling and
 * draining their pipelines, and against small_k on float copies of the
 * operands (their own pass first).  At K = 32 its FP32 arithmetic is far
 * below the tensor cores' (the README's table).
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16, K at most 32):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f16_small_k --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/small_k.cuh"

extern "C" int hgemm_small_k_check(const struct gemm_problem *p, char *why, size_t n)
{
    return small_k_check("f16_small_k", p, why, n);
}

extern "C" cudaError_t hgemm_small_k_launch(const struct hgemm_problem *p,
                                            const struct launch_env *env)
{
    return p->bf16 ? small_k_run_problem<gemv_bf16>(p, env)
                   : small_k_run_problem<gemv_f16>(p, env);
}

extern "C" cudaError_t hgemm_small_k_attr(struct kernel_attr *out)
{
    return small_k_attr<gemv_f16>(out);
}
