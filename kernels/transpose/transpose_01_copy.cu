/* copy: the ceiling every transpose is measured against.
 *
 * Idea: read each byte once and write it once, in order, 16 bytes per
 * access, with four independent loads in flight per thread before the
 * first store.  A transpose moves the same bytes, so no transpose can beat
 * this by more than noise.  It copies, it does not transpose: the bench
 * uses it as the 100% mark.  A flat vector copy rather than a tiled one,
 * so that the reference is the device's own limit, not that of one access
 * pattern.
 *
 * Follows "Matrix transpose (RTX 3060 Laptop write-up)", matrixCopy_1 (the
 * section "矩阵转置", "Matrix transpose", of a Chinese write-up of
 * transpose and matmul experiments on an RTX 3060 Laptop GPU), which times
 * a copy for the same purpose, here as a flat 16-byte copy: the vector
 * accesses of "CUDA Pro Tip: Increase Performance with Vectorized Memory
 * Access".
 *
 * A bandwidth reference that only the bench runs (`gemmcli transpose`
 * refuses it, as it does not transpose):
 *   gemmcli bench --op transpose --sizes 8192 */
#include <limits.h>
#include <stdint.h>
#include "kernels/common.cuh"
#include "kernels/transpose.h"

static constexpr int copy_threads = 256;
static constexpr int copy_unroll = 4;

/* Copies n elements of type V, copy_unroll per thread with all loads
 * outstanding before the first store.  The grid covers the whole buffer, so
 * blocks start in address order and the blocks in flight at any moment
 * work on one compact stretch of memory (a grid of long-lived blocks
 * striding over the buffer measured slower: README, "Measurements behind
 * the stages"); the loop only matters past the grid-size limit. */
template <typename V>
__global__ void __launch_bounds__(copy_threads)
copy_kernel(const V *__restrict__ in, V *__restrict__ out, size_t n)
{
    const size_t stride = (size_t)gridDim.x * copy_threads * copy_unroll;
    size_t base = (size_t)blockIdx.x * copy_threads * copy_unroll + threadIdx.x;
    for (; base + (copy_unroll - 1) * copy_threads < n; base += stride) {
        V v[copy_unroll];
#pragma unroll
        for (int u = 0; u < copy_unroll; u++)
            v[u] = in[base + u * copy_threads];
#pragma unroll
        for (int u = 0; u < copy_unroll; u++)
            out[base + u * copy_threads] = v[u];
    }
#pragma unroll
    for (int u = 0; u < copy_unroll; u++)
        if (base + u * copy_threads < n)
            out[base + u * copy_threads] = in[base + u * copy_threads];
}

template <typename V>
static cudaError_t copy_run(const void *in, void *out, size_t n, const struct launch_env *env)
{
    if (n == 0)
        return cudaSuccess;
    size_t per_block = (size_t)copy_threads * copy_unroll;
    size_t want = (n + per_block - 1) / per_block;
    unsigned grid = (unsigned)(want < INT_MAX ? want : INT_MAX);
    copy_kernel<V><<<grid, copy_threads, 0, env->stream>>>((const V *)in, (V *)out, n);
    return launch_result();
}

extern "C" cudaError_t transpose_copy_launch(const struct transpose_problem *p,
                                             const struct launch_env *env)
{
    size_t es = p->elem_size;
    if (es != 1 && es != 2 && es != 4 && es != 8)
        return cudaErrorInvalidValue;
    size_t bytes = (size_t)p->rows * (size_t)p->cols * es;
    /* 16-byte vectors over the aligned bulk, then the few trailing elements
     * (fewer than 16 bytes) in their own type. */
    if (((uintptr_t)p->in | (uintptr_t)p->out) % 16 == 0) {
        size_t vecs = bytes / 16;
        cudaError_t err = copy_run<uint4>(p->in, p->out, vecs, env);
        if (err != cudaSuccess)
            return err;
        size_t done = vecs * 16;
        const char *in = (const char *)p->in + done;
        char *out = (char *)p->out + done;
        size_t rest = (bytes - done) / es;
        switch (es) {
        case 1: return copy_run<unsigned char>(in, out, rest, env);
        case 2: return copy_run<unsigned short>(in, out, rest, env);
        case 4: return copy_run<unsigned int>(in, out, rest, env);
        default: return copy_run<unsigned long long>(in, out, rest, env);
        }
    }
    switch (es) {
    case 1: return copy_run<unsigned char>(p->in, p->out, bytes, env);
    case 2: return copy_run<unsigned short>(p->in, p->out, bytes / 2, env);
    case 4: return copy_run<unsigned int>(p->in, p->out, bytes / 4, env);
    default: return copy_run<unsigned long long>(p->in, p->out, bytes / 8, env);
    }
}

extern "C" cudaError_t transpose_copy_attr(struct kernel_attr *out)
{
    return kernel_attr_of(copy_kernel<uint4>, copy_threads, 0, out);
}
