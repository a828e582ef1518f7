/* cublas: the reference every stage is measured against.  cuBLAS is
 * column-major; a row-major C = A * B is the column-major C^T = B^T * A^T,
 * which is what cuBLAS computes when handed B as its first operand and A as
 * its second, no transposes.  CUBLAS_COMPUTE_32F keeps the arithmetic in
 * FP32 on the CUDA cores (no TF32), whatever the handle's math mode. */
#include "sgemm.h"

cudaError_t sgemm_cublas_launch(const struct sgemm_problem *p, const struct launch_env *env)
{
    if (cublasSetStream(env->cublas, env->stream) != CUBLAS_STATUS_SUCCESS)
        return cudaErrorInvalidResourceHandle;
    cublasStatus_t st = cublasGemmEx(env->cublas, CUBLAS_OP_N, CUBLAS_OP_N, p->n, p->m, p->k,
                                     &p->alpha, p->b, CUDA_R_32F, p->n, p->a, CUDA_R_32F, p->k,
                                     &p->beta, p->c, CUDA_R_32F, p->n, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT);
    switch (st) {
    case CUBLAS_STATUS_SUCCESS:
        return cudaGetLastError();
    case CUBLAS_STATUS_ALLOC_FAILED:
        return cudaErrorMemoryAllocation;
    case CUBLAS_STATUS_INVALID_VALUE:
        return cudaErrorInvalidValue;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return cudaErrorNotSupported;
    default:
        return cudaErrorLaunchFailure;
    }
}
