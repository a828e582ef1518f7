/* f64_gemv: a vector times a matrix (M = 1) or a matrix times a vector
 * (N = 1) in FP64, double C; a stack of them in one launch.
 *
 * The float stage's kernels (sgemm_22_gemv.cu), shared with it as
 * templates in kernels/memory_bound/gemv.cuh.  Against f64_dmma, whose
 * 128x128 tiles are 127/128 empty on these shapes: the matrix is read
 * once, 16 bytes (2 doubles) per load and several loads per thread in
 * flight, DFMA into double accumulators; the sums are split over lanes,
 * rows or slices of K, the slices' partial sums kept in double and joined
 * in a fixed order, so a result never depends on scheduling.  Rows that
 * are not whole 16-byte units (an odd K or N) take 8-byte loads.
 *
 * auto takes it for float64 products with M = 1 or N = 1 (its row is
 * KERNEL_VECTOR; src/plan/select.c).
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy float64, one of them a vector):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_gemv --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/gemv.cuh"

extern "C" size_t dgemm_gemv_workspace(const struct gemm_problem *p)
{
    return gemv_workspace<gemv_f64>(p);
}

extern "C" int64_t dgemm_gemv_slices(const struct gemm_problem *p, int sm_count,
                                     int *joined, double *busy)
{
    return gemv_slices<gemv_f64>(p, sm_count, joined, busy);
}

extern "C" int dgemm_gemv_check(const struct gemm_problem *p, char *why, size_t n)
{
    return gemv_check("f64_gemv", p, why, n);
}

extern "C" cudaError_t dgemm_gemv_launch(const struct dgemm_problem *p,
                                         const struct launch_env *env)
{
    return gemv_run_problem<gemv_f64>(p, p->k, p->n, env);
}

extern "C" cudaError_t dgemm_gemv_attr(struct kernel_attr *out)
{
    return gemv_attr<gemv_f64>(out);
}
