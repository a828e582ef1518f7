/* f16_gemv: a vector times a matrix (M = 1) or a matrix times a vector
 * (N = 1) with float16 or bfloat16 operands, FP32 accumulation and float
 * C; a stack of them in one launch.
 *
 * The float stage's kernels (sgemm_22_gemv.cu), shared with it as
 * templates in kernels/memory_bound/gemv.cuh.  Against the tensor-core
 * stages, which run these shapes on tiles of 128 or more rows and columns
 * with one row (M = 1) or column (N = 1) in use, and sum a vector's K in
 * one chain whose accumulator does not round to nearest: the matrix is
 * read once, 16 bytes (8 values) per load and several loads per thread in
 * flight, each value widened to float (HADD2.F32 for float16, a shift or a
 * mask for bfloat16) and multiplied exactly, the sums split over lanes,
 * rows or slices of K and joined in a fixed order.  Rows of A or B that
 * are not whole 16-byte units take 8-, 4- or 2-byte loads.  lda, and ldb
 * where M = 1, are honoured (the row is not KERNEL_ANY_LD: they are K and
 * N); a column vector b (N = 1) must be dense.
 *
 * auto takes it for float16 and bfloat16 products with M = 1 or N = 1 (its
 * row is KERNEL_VECTOR; src/plan/select.c).
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16, one of them a
 * vector):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f16_gemv --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/gemv.cuh"

extern "C" size_t hgemm_gemv_workspace(const struct gemm_problem *p)
{
    return gemv_workspace<gemv_f16>(p);   /* the same plan for bf16 */
}

extern "C" int64_t hgemm_gemv_slices(const struct gemm_problem *p, int sm_count,
                                     int *joined, double *busy)
{
    return gemv_slices<gemv_f16>(p, sm_count, joined, busy);
}

extern "C" int hgemm_gemv_check(const struct gemm_problem *p, char *why, size_t n)
{
    return gemv_check("f16_gemv", p, why, n);
}

extern "C" cudaError_t hgemm_gemv_launch(const struct hgemm_problem *p,
                                         const struct launch_env *env)
{
    return p->bf16 ? gemv_run_problem<gemv_bf16>(p, p->lda, p->ldb, env)
                   : gemv_run_problem<gemv_f16>(p, p->lda, p->ldb, env);
}

extern "C" cudaError_t hgemm_gemv_attr(struct kernel_attr *out)
{
    return gemv_attr<gemv_f16>(out);
}
