/* The second half of a product whose K was split: each of S slices of K
 * wrote its own M x N slab of partial sums (float, or double for FP64);
 * one pass adds the slabs in a fixed order, so that the result never
 * depends on scheduling, and applies alpha and beta.  Used by the sgemm
 * splitk stage and by the tensor-core and DMMA stages' split of long K
 * (kernels/gemm_dispatch.c), in float and in double.
 *
 * A block is `lanes` adjacent elements by `groups` groups of slices:
 * group y adds slices y, y + G, y + 2G, ... in turn, REDUCE_LOADS of them
 * loaded before they are added, and the G sums of an element meet in a
 * fixed tree in shared memory.  Where C has many elements, a group is the
 * whole stack of slices (G = 1, a thread an element); where it has few
 * over many slices (a long K over a small C: 64 x 64 from 528 slices),
 * G grows until the threads fill the GPU, up to 32, so that each thread
 * reads a few slices rather than all 528 in one chain (README,
 * "Measurements behind the stages"). */
#include "kernels/gemm.h"
#include "kernels/common.cuh"
#include "kernels/memory_bound/join.cuh"

enum {
    REDUCE_THREADS = 256,       /* a block, where a group is the whole stack */
    REDUCE_MOST_THREADS = 1024, /* a block of 32 lanes by 32 groups */
    REDUCE_MOST_GROUPS = 32,
    REDUCE_LOADS = 4,           /* slices a thread loads before adding them */
    REDUCE_FILL = 1 << 19       /* threads that keep every SM's loads in flight */
};

/* C = alpha * sum of the slabs + beta * C for product blockIdx.y; slab s of
 * product b starts at partial + (s * batch + b) * count. */
template <typename T>
static __global__ void __launch_bounds__(REDUCE_MOST_THREADS)
gemm_split_reduce_kernel(T *c, long long stride_c, const T *partial, size_t count, int splits,
                         T alpha, T beta, int lanes)
{
    __shared__ T part[REDUCE_MOST_THREADS];
    const int x = threadIdx.x % lanes, y = threadIdx.x / lanes, groups = blockDim.x / lanes;
    const size_t total = count * gridDim.y;
    c += (long long)blockIdx.y * stride_c;
    partial += blockIdx.y * count;
    for (size_t e0 = (size_t)blockIdx.x * lanes; e0 < count; e0 += (size_t)gridDim.x * lanes) {
        const size_t e = e0 + x;
        T sum = T(0);
        if (e < count) {
            const T *at = partial + e;
            int s = y;
            for (; s + (REDUCE_LOADS - 1) * groups < splits; s += REDUCE_LOADS * groups) {
                T v[REDUCE_LOADS];
#pragma unroll
                for (int u = 0; u < REDUCE_LOADS; u++)
                    v[u] = at[(size_t)(s + u * groups) * total];
#pragma unroll
                for (int u = 0; u < REDUCE_LOADS; u++)
                    sum += v[u];
            }
            for (; s < splits; s += groups)
                sum += at[(size_t)s * total];
        }
        if (groups > 1) {
            part[threadIdx.x] = sum;
            __syncthreads();
            join_tree(part, lanes, groups, y);
            sum = part[x];
            __syncthreads();
        }
        if (y == 0 && e < count)
            c[e] = beta == T(0) ? alpha * sum : alpha * sum + beta * c[e];
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
    /* Groups of slices while the elements leave threads to spare, each
     * group REDUCE_LOADS slices at least. */
    size_t elements = count * (size_t)batch;
    int groups = 1;
    while (groups < REDUCE_MOST_GROUPS && 2 * groups * REDUCE_LOADS <= splits &&
           elements * 2 * groups <= REDUCE_FILL)
        groups *= 2;
    int threads = groups > REDUCE_THREADS / 32 ? REDUCE_MOST_THREADS : REDUCE_THREADS;
    int lanes = threads / groups;
    size_t blocks = (count + lanes - 1) / lanes;
    if (blocks > 65535)
        blocks = 65535;
    dim3 grid((unsigned)blocks, (unsigned)batch);
    gemm_split_reduce_kernel<T><<<grid, threads, 0, stream>>>(c, stride_c, partial, count, splits,
                                                             alpha, beta, lanes);
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
