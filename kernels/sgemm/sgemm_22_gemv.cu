/* gemv: the products the tile ladder is not made for, a row vector times a
 * matrix (m = 1) and a matrix times a column vector (n = 1).  Both are
 * memory-bound: the matrix is read once, and the figure of merit is its
 * bytes per second against the copy kernel's.  The kernels are templates
 * in kernels/memory_bound/gemv.cuh, shared with f16_gemv (hgemm_08_gemv.cu) and
 * f64_gemv (dgemm_03_gemv.cu); this file is their float instance.
 *
 * Beyond the seeds.  A 128 x 128 tile ladder computes a 1 x n product on
 * tiles that are 127/128 empty and reads B through a handful of blocks;
 * here:
 *   - n = 1 (C = A b): a warp per row of A, its lanes walking the row in
 *     16-byte loads, b from L1/L2, the lanes' sums joined by shuffles in a
 *     fixed order.  8192 rows are 8192 warps: enough to fill 132 SMs.
 *   - m = 1 (C = a B): a thread per 4 adjacent columns of B (16-byte loads
 *     along B's rows); n = 8192 alone makes few blocks, so K is cut into S
 *     slices, one per blockIdx.y, each into its own row of partial sums,
 *     with at least 64 values of k per slice; a second kernel adds the S
 *     rows in a fixed order and applies alpha and beta.
 *
 * The first version (figures below) kept one to three 16-byte loads in
 * flight per lane, ran one product per launch, and gave a matrix with few
 * rows one warp per row whatever K (a dot product: one warp).  Since:
 *   - more bytes in flight: each lane loads 4 units of A and 4 of b
 *     (rows), or each thread 8 rows of B (columns), before its FFMAs.  The
 *     main loops' SASS: rows 8 LDG.128, then 16 FFMA, in 35 instructions
 *     (before: 2 or 3 LDG.128 between chains of 4 FFMA); columns 8 LDG.128
 *     of B and 8 LDG of a, then 32 FFMA, in 85 (before: 4 and 4, then 16
 *     FFMA, in 41); 76 and 60 registers (38 and 32 before), no spills;
 *   - few rows with a long K (64 x 1 x 10^6, a dot product of 10^6): K is
 *     cut into slices too, a warp per slice of a row, until a wave of
 *     warps is busy;
 *   - a stack of products is one launch (the row is KERNEL_BATCHED): the
 *     products' rows, or their blocks of columns, form one index, with A
 *     or B shared where their stride is 0;
 *   - the slices are summed by gemv.cuh's reduce, groups of slices per
 *     element met in a fixed tree (kernels/gemm_split.cu's reduce, which
 *     this stage used before, sums an element's slices in one thread);
 *   - loads narrow to 8 or 4 bytes where rows are not 16-byte aligned,
 *     and a ragged K on an aligned row keeps 16-byte loads for all but
 *     its last K mod 4 values.
 *
 * auto takes it for every float32 product with M = 1 or N = 1 (its row is
 * KERNEL_VECTOR; src/plan/select.c).
 *
 * Figures, first version (`gemmcli bench --sizes ...`, NVIDIA H200,
 * 2026-11-22, cuBLAS SGEMM in the same run): 1x8192x8192 1.80 TFLOP/s
 * (100%; the 256 MiB of B in 75 us, 3.6 TB/s, 92% of the copy kernel's
 * 3.92), 8192x1x8192 1.73 (124%), 1x65536x4096 2.18 (101%), 4096x1x65536
 * 1.90 (97%); edge_peel, auto's pick before, 0.31-0.38 TFLOP/s at all
 * four.  This version, same bench and device: 1x8192x8192 1.89 TFLOP/s
 * (100%; 3.78 TB/s moved), 8192x1x8192 2.00 (144%; 4.00 TB/s). */
#include "kernels/gemm.h"
#include "kernels/memory_bound/gemv.cuh"

extern "C" size_t sgemm_gemv_workspace(const struct gemm_problem *p)
{
    return gemv_workspace<gemv_f32>(p);
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
