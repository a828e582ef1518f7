/* gemv: the products the tile ladder is not made for, a row vector times a
 * matrix (m = 1) and a matrix times a column vector (n = 1).  Both are
 * memory-bound: the matrix is read once, and the figure of merit is its
 * bytes per second against the copy kernel's.  The kernels are templates
 * in kernels/memory_bound/gemv.cuh, shared with f16_gemv (hgemm_08_gemv.cu)
 * and f64_gemv (dgemm_03_gemv.cu); this file is their float instance.
 *
 * Against the tile ladder, which computes a 1 x n product on 128 x 128
 * tiles that are 127/128 empty and reads B through a handful of blocks:
 *   - n = 1 (C = A b): a warp per row of A, its lanes walking the row in
 *     16-byte loads, 4 units of A and 4 of b each before its FFMAs, b from
 *     L1/L2, the lanes' sums joined by shuffles in a fixed order.  8192
 *     rows are 8192 warps: enough to fill 132 SMs.  A few rows with a long
 *     K (64 x 1 x 10^6, a dot product of 10^6) are cut into slices of K
 *     too, a warp per slice of a row, until a wave of warps is busy.
 *   - m = 1 (C = a B): a thread per 4 adjacent columns of B (16-byte loads
 *     along B's rows), 8 rows of B loaded before its FFMAs; n = 8192 alone
 *     makes few blocks, so K is cut into S slices, one per blockIdx.y, each
 *     into its own row of partial sums, with at least 64 values of k per
 *     slice.
 *   - the slices are summed by gemv.cuh's reduce, groups of slices per
 *     element met in a fixed tree, which applies alpha and beta;
 *   - a stack of products is one launch (the row is KERNEL_BATCHED): the
 *     products' rows, or their blocks of columns, form one index, with A or
 *     B shared where their stride is 0;
 *   - loads narrow to 8 or 4 bytes where rows are not 16-byte aligned, and
 *     a ragged K on an aligned row keeps 16-byte loads for all but its last
 *     K mod 4 values.
 * The main loops' SASS: rows 8 LDG.128, then 16 FFMA, in 35 instructions;
 * columns 8 LDG.128 of B and 8 LDG of a, then 32 FFMA, in 85; 76 and 60
 * registers, no spills.
 *
 * auto takes it for every float32 product with M = 1 or N = 1 (its row is
 * KERNEL_VECTOR; src/plan/select.c).
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy a row vector, or b.npy a column vector):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel gemv --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/gemv.cuh"

extern "C" size_t sgemm_gemv_workspace(const struct gemm_problem *p)
{
    return gemv_workspace<gemv_f32>(p);
}

extern "C" int64_t sgemm_gemv_slices(const struct gemm_problem *p, int sm_count,
                                     int *joined, double *busy)
{
    return gemv_slices<gemv_f32>(p, sm_count, joined, busy);
}

extern "C" int sgemm_gemv_check(const struct gemm_problem *p, char *why, size_t n)
{
    return gemv_check("gemv", p, why, n);
}

extern "C" cudaError_t sgemm_gemv_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    return gemv_run_problem<gemv_f32>(p, p->k, p->n, env);
}

extern "C" cudaError_t sgemm_gemv_attr(struct kernel_attr *out)
{
    return gemv_attr<gemv_f32>(out);
}
