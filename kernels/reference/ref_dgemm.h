/* The FP64 reference product the GPU tests compare the kernels with
 * (kernels/reference/ref_dgemm.cu).  Not a registered kernel. */
#ifndef GC_REF_DGEMM_H
#define GC_REF_DGEMM_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out (batch x m x n, dense) = alpha * A * B + beta * C0 in FP64 from double
 * operands on the device, A and B stride_a and stride_b elements apart (0:
 * one matrix for the whole stack); c0 is not read when beta == 0. */
cudaError_t ref_dgemm(int m, int n, int k, int batch, long long stride_a, long long stride_b,
                      double alpha, const double *a, const double *b, double beta,
                      const double *c0, double *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
