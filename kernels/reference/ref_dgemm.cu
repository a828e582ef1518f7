/* An FP64 GEMM on the device, the reference the GPU tests compare every
 * kernel against: double operands (any operand type widened to double
 * first, exactly), products and sums in double, over a stack with the
 * registry's strides.  Not a registered kernel.  A plain 32x32
 * shared-memory tiling with 2x2 results per thread: simple enough to trust
 * by reading, fast enough for 4097^3 in well under a second. */
#include "kernels/common.cuh"
#include "kernels/gemm.h"
#include "kernels/reference/ref_dgemm.h"

enum { REF_TILE = 32, REF_DIM = 16 };

static __global__ void __launch_bounds__(REF_DIM * REF_DIM)
ref_dgemm_kernel(int m, int n, int k, double alpha, const double *a, const double *b,
                 double beta, const double *c0, double *out, long long sa, long long sb)
{
    __shared__ double as[REF_TILE][REF_TILE + 1];
    __shared__ double bs[REF_TILE][REF_TILE + 1];
    a += blockIdx.z * sa;
    b += blockIdx.z * sb;
    size_t c_off = (size_t)blockIdx.z * m * n;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row0 = blockIdx.y * REF_TILE, col0 = blockIdx.x * REF_TILE;
    double acc[2][2] = {};
    for (int k0 = 0; k0 < k; k0 += REF_TILE) {
        for (int i = ty; i < REF_TILE; i += REF_DIM)
            for (int j = tx; j < REF_TILE; j += REF_DIM) {
                int r = row0 + i, kk = k0 + j;
                as[i][j] = r < m && kk < k ? a[(size_t)r * k + kk] : 0.0;
                int kr = k0 + i, c = col0 + j;
                bs[i][j] = kr < k && c < n ? b[(size_t)kr * n + c] : 0.0;
            }
        __syncthreads();
        for (int kk = 0; kk < REF_TILE; kk++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    acc[i][j] += as[ty + i * REF_DIM][kk] * bs[kk][tx + j * REF_DIM];
        __syncthreads();
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            int r = row0 + ty + i * REF_DIM, c = col0 + tx + j * REF_DIM;
            if (r < m && c < n) {
                size_t at = c_off + (size_t)r * n + c;
                out[at] = beta == 0.0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * c0[at];
            }
        }
}

extern "C" cudaError_t ref_dgemm(int m, int n, int k, int batch, long long stride_a,
                                 long long stride_b, double alpha, const double *a,
                                 const double *b, double beta, const double *c0, double *out,
                                 cudaStream_t stream)
{
    for (int b0 = 0; b0 < batch; b0 += 65535) {
        int nb = batch - b0 < 65535 ? batch - b0 : 65535;
        dim3 grid(ceil_div(n, REF_TILE), ceil_div(m, REF_TILE), nb);
        size_t c_off = (size_t)b0 * m * n;
        ref_dgemm_kernel<<<grid, dim3(REF_DIM, REF_DIM), 0, stream>>>(
            m, n, k, alpha, a + b0 * stride_a, b + b0 * stride_b, beta, c0 ? c0 + c_off : NULL,
            out + c_off, stride_a, stride_b);
        cudaError_t err = launch_result();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
