/* cublas: the reference every stage is measured against, in each
 * signature cuBLAS has: SGEMM with CUBLAS_COMPUTE_32F (FP32 on the CUDA
 * cores, no TF32, whatever the handle's math mode), GemmEx with f16 or
 * bf16 operands and FP32 compute (tensor cores), TF32 (float operands,
 * CUBLAS_COMPUTE_32F_FAST_TF32: tensor cores), DGEMM, and GemmEx with int8
 * operands and int32 sums (CUBLAS_COMPUTE_32I: the integer tensor cores),
 * one product at a time, on the shapes where it was seen to run
 * (gemm_cublas_check: sides multiples of 256; on the H200 it refused
 * 130x136x72 and 200x260x72 as not supported, and computed 129x264x72
 * wrongly), the bench's sizes among them.  cuBLAS has no 3xTF32
 * on Hopper (its BF16x9 emulation runs as plain FP32 there), so tf32x3 has
 * no cuBLAS row; --verify sets it beside SGEMM.  cuBLAS is column-major; a row-major
 * C = A * B is the column-major C^T = B^T * A^T, which is what cuBLAS
 * computes when handed B as its first operand and A as its second, no
 * transposes.  Stacks go through the strided-batched call (a stride of 0
 * repeats one matrix), at most INT_MAX products at a time.
 *
 * NVIDIA's cuBLAS, loaded at run time (kernels/reference/cublas_lazy.c).
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel cublas --verify --repeat 20 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/registry.h"

static cudaError_t cublas_status(cublasStatus_t st)
{
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

int gemm_cublas_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->sig != GEMM_I8)
        return 1;
    if (p->m % 256 || p->n % 256 || p->k % 256 || p->lda != p->k || p->ldb != p->n ||
        p->ldc != p->n || p->alpha != (double)(int32_t)p->alpha ||
        p->beta != (double)(int32_t)p->beta) {
        snprintf(why, n, "cuBLAS's int8 reference takes M, N and K multiples of 256, rows "
                 "packed, integral alpha and beta");
        return 0;
    }
    return 1;
}

cudaError_t gemm_cublas_run(const struct gemm_kernel *k, const struct gemm_problem *p,
                            const struct launch_env *env)
{
    (void)k;
    if (cublasSetStream(env->cublas, env->stream) != CUBLAS_STATUS_SUCCESS)
        return cudaErrorInvalidResourceHandle;
    int i8 = p->sig == GEMM_I8;
    cudaDataType in = p->sig == GEMM_F16 ? CUDA_R_16F : p->sig == GEMM_BF16 ? CUDA_R_16BF
                    : p->sig == GEMM_F64 ? CUDA_R_64F : i8 ? CUDA_R_8I : CUDA_R_32F;
    cudaDataType out = p->sig == GEMM_F64 ? CUDA_R_64F : i8 ? CUDA_R_32I : CUDA_R_32F;
    cublasComputeType_t compute = p->sig == GEMM_F64    ? CUBLAS_COMPUTE_64F
                                : p->sig == GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                : i8                  ? CUBLAS_COMPUTE_32I
                                                      : CUBLAS_COMPUTE_32F;
    float alpha_f = (float)p->alpha, beta_f = (float)p->beta;
    int32_t alpha_i = (int32_t)p->alpha, beta_i = (int32_t)p->beta;
    const void *alpha = p->sig == GEMM_F64 ? (const void *)&p->alpha
                      : i8                 ? (const void *)&alpha_i
                                           : (const void *)&alpha_f;
    const void *beta = p->sig == GEMM_F64 ? (const void *)&p->beta
                     : i8                 ? (const void *)&beta_i
                                          : (const void *)&beta_f;
    size_t es_in = p->sig == GEMM_F16 || p->sig == GEMM_BF16 ? 2 : p->sig == GEMM_F64 ? 8
                 : i8                                         ? 1
                                                              : 4;
    size_t es_out = p->sig == GEMM_F64 ? 8 : 4;
    /* With K = 0, A (K x M column-major to cuBLAS) has leading dimension
     * K = 0, which cuBLAS refuses although it reads nothing. */
    int lda = p->lda > 0 ? (int)p->lda : 1;
    int64_t most = i8 ? 1 : INT_MAX;
    for (int64_t b0 = 0; b0 < p->batch; b0 += most) {
        int64_t nb = p->batch - b0 < most ? p->batch - b0 : most;
        const char *a = (const char *)p->a + (size_t)(b0 * p->stride_a) * es_in;
        const char *b = (const char *)p->b + (size_t)(b0 * p->stride_b) * es_in;
        char *c = (char *)p->c + (size_t)(b0 * p->stride_c) * es_out;
        cublasStatus_t st =
            i8 ? cublasGemmEx(env->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)p->n, (int)p->m,
                              (int)p->k, alpha, b, in, (int)p->ldb, a, in, lda, beta, c, out,
                              (int)p->ldc, compute, CUBLAS_GEMM_DEFAULT)
               : cublasGemmStridedBatchedEx(
                     env->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)p->n, (int)p->m, (int)p->k,
                     alpha, b, in, (int)p->ldb, p->stride_b, a, in, lda, p->stride_a, beta, c,
                     out, (int)p->ldc, p->stride_c, (int)nb, compute, CUBLAS_GEMM_DEFAULT);
        cudaError_t err = cublas_status(st);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
