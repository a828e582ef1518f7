/* f16_thin: products with a thin side, M <= 32 or N <= 32, on float16 or
 * bfloat16 operands, FP32 accumulation and float C: the wide operand
 * streamed once at 2 bytes a value, K cut into slices when the blocks are
 * few.  The kernels are kernels/memory_bound/thin.cuh's templates, shared
 * with thin (float) and f64_thin; each value is widened to float before
 * it is multiplied (held as read until then, so that the conversion does
 * not wait for the load), and a product of two 16-bit values is exact in
 * float.
 *
 * Against the tensor-core stages, whose tiles of 128 or more rows and
 * columns are mostly empty on these shapes, and against thin on float
 * copies of the operands (3 times the bytes read, plus the copies' own
 * pass).  cuBLAS reads the wide thin shapes at the copy's rate on its
 * tensor cores; this stage's FP32 arithmetic keeps up only where the thin
 * side is a few values, and auto's model gives it those.
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy float16 or bfloat16, one side at
 * most 32):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f16_thin --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/memory_bound/thin.cuh"

extern "C" int hgemm_thin_check(const struct gemm_problem *p, char *why, size_t n)
{
    return thin_check<gemv_f16>("f16_thin", p, why, n);
}

extern "C" size_t hgemm_thin_workspace(const struct gemm_problem *p)
{
    return thin_workspace<gemv_f16>(p);   /* the same plan for bf16 */
}

extern "C" int64_t hgemm_thin_slices(const struct gemm_problem *p, int sm_count,
                                     int *joined, double *busy)
{
    return thin_slices<gemv_f16>(p, sm_count, joined, busy);
}

extern "C" cudaError_t hgemm_thin_launch(const struct hgemm_problem *p,
                                         const struct launch_env *env)
{
    return p->bf16 ? thin_run_problem<gemv_bf16>(p, env) : thin_run_problem<gemv_f16>(p, env);
}

extern "C" cudaError_t hgemm_thin_attr(struct kernel_attr *out)
{
    return thin_attr<gemv_f16>(out);
}
