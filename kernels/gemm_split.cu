/* The second half of a product whose K was split: each of S slices of K
 * wrote its own M x N slab of FP32 partial sums; one pass adds the slabs in
 * slice order (a fixed order, so the result never depends on scheduling)
 * and applies alpha and beta.  Used by the sgemm splitk stage and by the
 * tensor-core stages' split of long K (kernels/gemm_dispatch.c). */
#include "gemm.h"
#include "common.cuh"

enum { SPLIT_THREADS = 256 };

/* C = alpha * sum of the slabs + beta * C for product blockIdx.y; slab s of
 * product b starts at partial + (s * batch + b) * count. */
static __global__ void gemm_split_reduce_kernel(float *c, long long stride_c,
                                                const float *partial, size_t count, int splits,
                                                float alpha, float beta)
{
    size_t total = count * gridDim.y;
    c += (long long)blockIdx.y * stride_c;
    partial += blockIdx.y * count;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        float sum = 0.0f;
        for (int s = 0; s < splits; s++)
            sum += partial[s * total + i];
        c[i] = beta == 0.0f ? alpha * sum : alpha * sum + beta * c[i];
    }
}

extern "C" cudaError_t gemm_split_reduce(float *c, long long stride_c, const float *partial,
                                         size_t count, int batch, int splits, float alpha,
                                         float beta, cudaStream_t stream)
{
    if (count == 0 || batch < 1)
        return cudaSuccess;
    if (batch > 65535)
        return cudaErrorInvalidConfiguration;
    size_t blocks = (count + SPLIT_THREADS - 1) / SPLIT_THREADS;
    if (blocks > 65535)
        blocks = 65535;
    dim3 grid((unsigned)blocks, (unsigned)batch);
    gemm_split_reduce_kernel<<<grid, SPLIT_THREADS, 0, stream>>>(c, stride_c, partial, count,
                                                                 splits, alpha, beta);
    return launch_result();
}
