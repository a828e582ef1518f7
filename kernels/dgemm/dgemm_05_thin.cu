/* f64_thin: products with a thin side, M <= 24 or N <= 32, in FP64: the
 * wide operand streamed once, K cut into slices when the blocks are few,
 * the slices' partial sums kept in double and joined in a fixed order.
 * The kernels are kernels/memory_bound/thin.cuh's templates, shared with
 * thin (float) and f16_thin; a thread owns 2 columns (16 bytes of doubles)
 * where the float stage owns 4, so its M x 2 sums fit the registers as
 * float's M x 4 do.
 *
 * Against f64_dmma, whose 128 x 128 tiles are mostly empty on these shapes
 * and which does not cut K, so that a few long dot products (8 x 8 x
 * 4000000) run on one block.  A wide side at M or N of 16-32 is
 * DFMA-bound, where DGEMM runs DMMA at the copy's rate; beyond 24 rows a
 * thread would own one column (thin_cols), 4x slower than f64_dmma, so
 * such products (M of 25-32 over a wide N) are refused (thin_check).
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy float64, one side at most 32):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_thin --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/thin.cuh"

extern "C" int dgemm_thin_check(const struct gemm_problem *p, char *why, size_t n)
{
    return thin_check<gemv_f64>("f64_thin", p, why, n);
}

extern "C" size_t dgemm_thin_workspace(const struct gemm_problem *p)
{
    return thin_workspace<gemv_f64>(p);
}

extern "C" int64_t dgemm_thin_slices(const struct gemm_problem *p, int sm_count,
                                     int *joined, double *busy)
{
    return thin_slices<gemv_f64>(p, sm_count, joined, busy);
}

extern "C" cudaError_t dgemm_thin_launch(const struct dgemm_problem *p,
                                         const struct launch_env *env)
{
    return thin_run_problem<gemv_f64>(p, env);
}

extern "C" cudaError_t dgemm_thin_attr(struct kernel_attr *out)
{
    return thin_attr<gemv_f64>(out);
}
