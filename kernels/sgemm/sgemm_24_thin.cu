/* thin: products with a thin side, M <= 32 or N <= 32, in float: the wide
 * operand streamed once, K cut into slices when the blocks are few.  The
 * kernels are kernels/memory_bound/thin.cuh's templates (shared with
 * f16_thin and f64_thin); this file names the type.
 *
 * Against the tile stages, whose 128 x 128 tiles are mostly empty on these
 * shapes, and against gemv, which takes M = 1 and N = 1 only.  With 8
 * k-lanes a block's A broadcasts miss L1 (README, "Measurements behind the
 * stages"), hence the k-lanes only where slices cannot fill the GPU.
 * Stacks of tiny products are not its shapes: small takes them.
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy with at most 32 rows, or b.npy with at most 32
 * columns):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel thin --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/thin.cuh"

extern "C" int sgemm_thin_check(const struct gemm_problem *p, char *why, size_t n)
{
    return thin_check<gemv_f32>("thin", p, why, n);
}

extern "C" size_t sgemm_thin_workspace(const struct gemm_problem *p)
{
    return thin_workspace<gemv_f32>(p);
}

extern "C" int64_t sgemm_thin_slices(const struct gemm_problem *p, int sm_count,
                                     int *joined, double *busy)
{
    return thin_slices<gemv_f32>(p, sm_count, joined, busy);
}

extern "C" cudaError_t sgemm_thin_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    return thin_run_problem<gemv_f32>(p, env);
}

extern "C" cudaError_t sgemm_thin_attr(struct kernel_attr *out)
{
    return thin_attr<gemv_f32>(out);
}
