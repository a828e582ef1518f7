/* The second half of a product whose K was split: each of S slices of K
 * wrote its own M x N slab of FP32 partial sums; one pass adds the slabs in
 * slice order (a fixed order, so the result never depends on scheduling)
 * and applies alpha and beta.  Used by the sgemm splitk stage and by the
 * tensor-core and DMMA stages' split of long K (kernels/gemm_dispatch.c),
 * in float and in double. */
#include "kernels/gemm.h"
#include "kernels/common.cuh"

enum { SPLIT_THREADS = 256 };

/* C = alpha * sum of the slabs + beta * C for product blockIdx.y; slab s of
 * product b starts at partial + (s * batch + b) * count. */
template <typename T>
static __global__ void gemm_split_reduce_kernel(T *c, long long stride_c, const T *partial,
                                                size_t count, int splits, T alpha, T beta)
{
    size_t total = count * gridDim.y;
    c += (long long)blockIdx.y * stride_c;
    partial += blockIdx.y * count;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        T sum = T(0);
        for (int s = 0; s < splits; s++)
            sum += partial[s * total + i];
        c[i] = beta == T(0) ? alpha * sum : alpha * sum + beta * c[i];
    }
}

template <typename T>
static cudaError_t split_reduce(T *c, long long stride_c, const T *partial, size_t count,
                                int batch, int splits, T alpha, T beta, cudaStream_t stream)
{
    if (count == 0 || batch < 1)
        return cudaSuccess;
    if (batch > 65535)
        return cudaErrorInvalidConfiguration;
    size_t blocks = (count + SPLIT_THREADS - 1) / SPLIT_THREADS;
    if (blocks > 65535)
        blocks = 65535;
    dim3 grid((unsigned)blocks, (unsigned)batch);
    gemm_split_reduce_kernel<T><<<grid, SPLIT_THREADS, 0, stream>>>(c, stride_c, partial, count,
                                                                    splits, alpha, beta);
    return launch_result();
}

extern "C" cudaError_t gemm_split_reduce(float *c, long long stride_c, const float *partial,
                                         size_t count, int batch, int splits, float alpha,
                                         float beta, cudaStream_t stream)
{
    return split_reduce(c, stride_c, partial, count, batch, splits, alpha, beta, stream);
}

extern "C" cudaError_t gemm_split_reduce_f64(double *c, long long stride_c,
                                             const double *partial, size_t count, int batch,
                                             int splits, double alpha, double beta,
                                             cudaStream_t stream)
{
    return split_reduce(c, stride_c, partial, count, batch, splits, alpha, beta, stream);
}
