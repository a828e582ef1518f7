/* The problems the mul kernels take, one struct per family of operand and
 * arithmetic types.  kernels/registry.h describes a product once, in
 * `struct gemm_problem`; the dispatcher (kernels/gemm_dispatch.c) turns it
 * into the family's struct below and calls the stage's launcher.
 *
 * Every matrix is row-major on the device: A is m x k, B k x n, C m x n,
 * dense, except that the 16-bit family takes rows of A and B further apart
 * (lda, ldb): the dispatcher hands it slices of a long K that way.  A
 * stack of `batch` products (batch >= 1) has its matrices
 * stride_a, stride_b, stride_c elements apart; a stride of 0 for A or B
 * uses the same matrix in every product (NumPy's broadcasting).  A
 * launcher whose row is not KERNEL_BATCHED is only ever called with batch
 * == 1.  When beta == 0, C is not read (it may hold garbage or NaN);
 * otherwise it holds C0 on entry.  Launchers return the launch's error, if
 * any, without synchronising. */
#ifndef GC_GEMM_H
#define GC_GEMM_H

#include <stdint.h>
#include "kernels/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* float operands, FP32 arithmetic, float C. */
struct sgemm_problem {
    int m, n, k;
    float alpha, beta;
    const float *a, *b;
    float *c;
    int batch;
    long long stride_a, stride_b, stride_c;
};

/* double operands, FP64 arithmetic, double C. */
struct dgemm_problem {
    int m, n, k;
    double alpha, beta;
    const double *a, *b;
    double *c;
    int batch;
    long long stride_a, stride_b, stride_c;
    long long lda;          /* between rows of A: K, but for a split of K (f64_dmma) */
    int k_last;             /* > 0: the stack's last product's K, shorter than k (a split's
                               last slice; KERNEL_K_LAST stages); 0: every product's is k */
};

/* 16-bit float operands (bits, as uint16_t): IEEE binary16, or bfloat16
 * when `bf16`; FP32 accumulation, float C. */
struct hgemm_problem {
    int m, n, k;
    int lda, ldb;             /* elements between rows of A (>= k) and of B (>= n);
                                 C is dense (n) */
    float alpha, beta;
    const uint16_t *a, *b;
    float *c;
    int batch;
    long long stride_a, stride_b, stride_c;
    int bf16;
    int k_last;               /* > 0: the stack's last product's K (dgemm_problem's) */
};

/* int64 operands, exact integer arithmetic modulo 2^64 (two's complement
 * wrap-around, as NumPy's integer matmul), int64 C = A * B: no alpha or
 * beta (the dispatcher applies them afterwards, in the result's type). */
struct igemm_problem {
    int m, n, k;
    const int64_t *a, *b;
    int64_t *c;
    int batch;
    long long stride_a, stride_b, stride_c;
    int accumulate;            /* C += A B (a product in steps of K), else C = A B */
};

/* int8 operands, exact int32 sums modulo 2^32 (the low 32 bits of the
 * exact product: NumPy's result for any integer dtype of 32 bits or
 * fewer), int32 C = A * B, or C += A * B when `accumulate`; no alpha or
 * beta (the exact path applies them afterwards). */
struct i8gemm_problem {
    int m, n, k;
    const int8_t *a, *b;
    int32_t *c;
    int batch;
    long long stride_a, stride_b, stride_c;
    int accumulate;
};

/* int16 or int32 operands (`bytes` 2 or 4) of an integer product wanted
 * modulo 2^(8 bytes), computed from their byte limbs on the int8 tensor
 * cores: int32 C whose low 8 x `bytes` bits are the sums, C = A * B or
 * C += A * B when `accumulate`; no alpha or beta. */
struct limbgemm_problem {
    int m, n, k;
    const void *a, *b;
    int32_t *c;
    int batch;
    long long stride_a, stride_b, stride_c;
    int accumulate;
    int bytes;
};

/* double operands and C, FP64 results from int8 products (Ozaki scheme
 * II), or with `fp32` float ones, FP32-class from fewer of them:
 * C = alpha A B + beta C (kernels/igemm/igemm_05_ozaki.cu). */
struct ozgemm_problem {
    int m, n, k;
    double alpha, beta;
    const void *a, *b;
    void *c;
    int batch;
    long long stride_a, stride_b, stride_c;
    int fp32;
};

typedef cudaError_t (*sgemm_launch_fn)(const struct sgemm_problem *p, const struct launch_env *env);
typedef cudaError_t (*dgemm_launch_fn)(const struct dgemm_problem *p, const struct launch_env *env);
typedef cudaError_t (*hgemm_launch_fn)(const struct hgemm_problem *p, const struct launch_env *env);
typedef cudaError_t (*igemm_launch_fn)(const struct igemm_problem *p, const struct launch_env *env);
typedef cudaError_t (*i8gemm_launch_fn)(const struct i8gemm_problem *p, const struct launch_env *env);
typedef cudaError_t (*limbgemm_launch_fn)(const struct limbgemm_problem *p,
                                          const struct launch_env *env);
typedef cudaError_t (*ozgemm_launch_fn)(const struct ozgemm_problem *p,
                                        const struct launch_env *env);

/* The slabs of the dispatcher's split of K for a KERNEL_SPLIT_K row (an
 * upper bound, 0 when it does not split; kernels/gemm_dispatch.c). */
size_t gemm_split_workspace(const struct gemm_kernel *k, const struct gemm_problem *p);

/* C = alpha * (the sum of `splits` FP32 slabs of M x N partial products) +
 * beta * C, for each of `batch` products; slab s of product b starts at
 * partial + (s * batch + b) * count (kernels/gemm_split.cu). */
cudaError_t gemm_split_reduce(float *c, long long stride_c, const float *partial, size_t count,
                              int batch, int splits, float alpha, float beta,
                              cudaStream_t stream);
cudaError_t gemm_split_reduce_f64(double *c, long long stride_c, const double *partial,
                                  size_t count, int batch, int splits, double alpha, double beta,
                                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
