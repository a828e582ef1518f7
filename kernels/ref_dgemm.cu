/* An FP64 GEMM on the device, the reference the GPU tests compare every
 * kernel against: FP32 inputs widened to double, products and sums in
 * double.  Not a registered kernel.  A plain 32x32 shared-memory tiling
 * with 2x2 results per thread: simple enough to trust by reading, fast
 * enough for 4097^3 in well under a second. */
#include "common.cuh"
#include "sgemm.h"

enum { REF_TILE = 32, REF_DIM = 16 };

static __global__ void __launch_bounds__(REF_DIM * REF_DIM)
ref_dgemm_kernel(int m, int n, int k, double alpha, const float *a, const float *b,
                 double beta, const float *c0, double *out)
{
    __shared__ double as[REF_TILE][REF_TILE + 1];
    __shared__ double bs[REF_TILE][REF_TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row0 = blockIdx.y * REF_TILE, col0 = blockIdx.x * REF_TILE;
    double acc[2][2] = {};
    for (int k0 = 0; k0 < k; k0 += REF_TILE) {
        for (int i = ty; i < REF_TILE; i += REF_DIM)
            for (int j = tx; j < REF_TILE; j += REF_DIM) {
                int r = row0 + i, kk = k0 + j;
                as[i][j] = r < m && kk < k ? (double)a[(size_t)r * k + kk] : 0.0;
                int kr = k0 + i, c = col0 + j;
                bs[i][j] = kr < k && c < n ? (double)b[(size_t)kr * n + c] : 0.0;
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
                size_t at = (size_t)r * n + c;
                out[at] = beta == 0.0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * c0[at];
            }
        }
}

extern "C" cudaError_t ref_dgemm(int m, int n, int k, double alpha, const float *a,
                                 const float *b, double beta, const float *c0, double *out,
                                 cudaStream_t stream)
{
    dim3 grid(ceil_div(n, REF_TILE), ceil_div(m, REF_TILE));
    ref_dgemm_kernel<<<grid, dim3(REF_DIM, REF_DIM), 0, stream>>>(m, n, k, alpha, a, b, beta,
                                                                   c0, out);
    return launch_result();
}
