/* A reference product more accurate than FP64, for measuring the error of
 * FP64 GEMMs (kernels/reference/ref_ddgemm.cu).  Not a registered kernel. */
#ifndef GC_REF_DDGEMM_H
#define GC_REF_DDGEMM_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out (batch x m x n, dense, double) = alpha * A * B + beta * C0, where the
 * sums of products are carried in double-double (an unevaluated sum hi + lo,
 * about 106 bits) and rounded once to double at the end; A and B double on
 * the device, stride_a/stride_b elements apart (0: one matrix for the whole
 * stack); c0 (double, dense batch x m x n) not read when beta == 0.  Where
 * the plain FP64 result is not finite (an infinite or NaN operand, an
 * overflow), the element is that FP64 result.  k = 0 gives beta * C0 (0
 * where beta == 0), whatever alpha is. */
cudaError_t ref_ddgemm(int m, int n, int k, int batch, long long stride_a, long long stride_b,
                       double alpha, const double *a, const double *b, double beta,
                       const double *c0, double *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
