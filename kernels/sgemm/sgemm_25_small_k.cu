/* small_k: products with a short K (K <= 32) in float: outer products and
 * their sums, where the work is writing C; C written as a copy writes, B's
 * strip in registers.  The kernels are kernels/memory_bound/small_k.cuh's
 * templates (shared with f16_small_k and f64_small_k); this file names the
 * type.
 *
 * Against the tile stages, which spend a short K filling and draining
 * their pipelines.  At K = 32 it is compute-bound: four results per lane,
 * each K FMAs from registers, A's row read from shared memory as a
 * broadcast; its launch bounds let ptxas take more than 128 registers
 * for K over 16 (one block an SM) and hold K <= 16 to 128 (two).
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy with at most 32 columns):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel small_k --verify --repeat 20 */
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
