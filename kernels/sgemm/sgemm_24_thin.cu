/* thin: products with a thin side, M <= 32 or N <= 32, in float: the
 * wide operand streamed once, K cut into slices when the blocks are few.
 * The kernels are kernels/memory_bound/thin.cuh's templates (shared with f16_thin and
 * f64_thin); this file names the type.
 *
 * Figures (`gemmcli bench`, NVIDIA H200, 2026-11-22, cuBLAS in the same run; the
 * device copies at 4.2 TB/s read + written): 32768x16x8192 19.43 TFLOP/s
 * (113%; 2.4 TB/s moved), 16x8192x32768 19.40 (101%), 32x8192x32768
 * 23.41 (61%), 1x8192x8192 1.75 (97%), 8192x1x8192 1.71 (123%); in the
 * sweep (before the register bounds in kernels/memory_bound/thin.cuh), 8x8x4000000 414%,
 * 9x2515x1263 90%, 15x921x967 74%, 30x3512x685 34% and 16x8558x16516 31%
 * (not profiled yet).  With 8 k-lanes a block's A broadcasts miss L1
 * (f64, 16x8192x32768: DRAM 24% busy, 25% occupancy, ncu), hence the
 * k-lanes only where slices cannot fill the GPU.  Stacks of tiny products
 * are not its shapes (100000 x 8x8x8: 21%; small takes them). */
#include "kernels/gemm.h"
#include "kernels/memory_bound/thin.cuh"

extern "C" int sgemm_thin_check(const struct gemm_problem *p, char *why, size_t n)
{
    return thin_check("thin", p, why, n);
}

extern "C" size_t sgemm_thin_workspace(const struct gemm_problem *p)
{
    return thin_workspace<gemv_f32>(p);
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
