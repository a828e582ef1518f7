/* geam: cuBLAS's transpose, the reference the own kernels race.
 *
 * cublasSgeam / cublasDgeam compute C = alpha op(A) + beta op(B); with
 * op(A) = A^T, alpha = 1, beta = 0 and no B, that is a transpose.  cuBLAS is
 * column-major: the row-major rows x cols input is a column-major
 * cols x rows matrix (lda = cols), and the row-major cols x rows output is a
 * column-major rows x cols matrix (ldc = rows), which is exactly A^T.
 *
 * Element sizes 4 and 8 only.  cuBLAS has no 2-byte geam, and no trick
 * through a wider type is a transpose: Sgeam on pairs of halves would keep
 * each pair together.  The values pass through floating-point arithmetic
 * (1 * a), so not every bit pattern survives: some NaN encodings of
 * random bit patterns come back changed (README, "Measurements behind the
 * stages"); finite values come back unchanged.  That is one reason it is
 * a reference and never chosen by auto.
 *
 * NVIDIA's cuBLAS.  Run and checked by (x.npy float32 or float64):
 *   gemmcli transpose x.npy -o y.npy --kernel geam --verify --repeat 20 */
#include <stddef.h>
#include "kernels/transpose.h"

cudaError_t transpose_geam_launch(const struct transpose_problem *p,
                                  const struct launch_env *env)
{
    cublasStatus_t st;
    if (cublasSetStream(env->cublas, env->stream) != CUBLAS_STATUS_SUCCESS)
        return cudaErrorUnknown;
    if (p->elem_size == 4) {
        const float one = 1.0f, zero = 0.0f;
        st = cublasSgeam(env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, p->rows, p->cols,
                         &one, (const float *)p->in, p->cols, &zero, NULL, p->rows,
                         (float *)p->out, p->rows);
    } else if (p->elem_size == 8) {
        const double one = 1.0, zero = 0.0;
        st = cublasDgeam(env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, p->rows, p->cols,
                         &one, (const double *)p->in, p->cols, &zero, NULL, p->rows,
                         (double *)p->out, p->rows);
    } else {
        return cudaErrorInvalidValue;
    }
    if (st != CUBLAS_STATUS_SUCCESS)
        return st == CUBLAS_STATUS_ALLOC_FAILED ? cudaErrorMemoryAllocation : cudaErrorUnknown;
    return cudaGetLastError();
}
