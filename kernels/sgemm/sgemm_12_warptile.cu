/* warptile: the block tile split explicitly into warp tiles (32x64, 4x2
 * warps), the warp tile into lanes (4x8, z-order), each lane holding a 2x2
 * grid of 4x4 results 16 rows and 32 columns apart inside its warp tile;
 * BK raised to 16.
 *
 * Against zorder: the same per-lane pattern, but anchored to the warp
 * instead of the block, so that a warp's reads per step of k are exactly
 * its own 32 + 64 floats and the block shape follows from the warp grid
 * (later stages reuse it for 64x128 tiles).  With the warp-local layout the
 * tile loads need not match the thread grid, so BK can double: half the
 * barriers per FMA.
 *
 * Follows "How to optimize SGEMM on NVIDIA GPUs", kernel 9 ({Mw, Nw} =
 * {4 x Mr, 8 x Nr}).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel warptile --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { WT_WARPS_M = 4, WT_WARPS_N = 2, WT_BK = 16, WT_PAD = 4 };
enum { WT_BM = WT_WARPS_M * 32, WT_BN = WT_WARPS_N * 64, WT_THREADS = WT_WARPS_M * WT_WARPS_N * 32 };
enum { WT_A_LOADS = WT_BM * WT_BK / 4 / WT_THREADS, WT_B_LOADS = WT_BK * WT_BN / 4 / WT_THREADS };

static_assert(WT_BM * WT_BK % (4 * WT_THREADS) == 0, "A tile splits into whole float4s per thread");
static_assert(WT_BK * WT_BN % (4 * WT_THREADS) == 0, "B tile splits into whole float4s per thread");
static_assert(WT_PAD % 4 == 0, "padded rows of A stay 16-byte aligned");

template <bool VEC>
static __global__ void __launch_bounds__(WT_THREADS)
sgemm_warptile_kernel(const struct sgemm_problem p)
{
    __shared__ __align__(16) float as_t[2][WT_BK][WT_BM + WT_PAD];
    __shared__ __align__(16) float bs[2][WT_BK][WT_BN];
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int bm0 = blockIdx.y * WT_BM, bn0 = blockIdx.x * WT_BN;
    int tm = ((lane >> 1) & 1) | ((lane >> 2) & 2);
    int tn = (lane & 1) | ((lane >> 1) & 2) | ((lane >> 2) & 4);
    int m0 = (warp / WT_WARPS_N) * 32 + tm * 4;   /* rows m0.., m0 + 16.. */
    int n0 = (warp % WT_WARPS_N) * 64 + tn * 4;   /* columns n0.., n0 + 32.. */
    float acc[8][8] = {};
    float4 a[WT_A_LOADS], b[WT_B_LOADS];

    auto fetch = [&](int k0) {
#pragma unroll
        for (int l = 0; l < WT_A_LOADS; l++) {
            int e = tid + l * WT_THREADS;
            a[l] = sgemm_load4<VEC>(p.a, p.m, p.k, bm0 + e / (WT_BK / 4), k0 + e % (WT_BK / 4) * 4);
        }
#pragma unroll
        for (int l = 0; l < WT_B_LOADS; l++) {
            int e = tid + l * WT_THREADS;
            b[l] = sgemm_load4<VEC>(p.b, p.k, p.n, k0 + e / (WT_BN / 4), bn0 + e % (WT_BN / 4) * 4);
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int l = 0; l < WT_A_LOADS; l++) {
            int e = tid + l * WT_THREADS, row = e / (WT_BK / 4), k = e % (WT_BK / 4) * 4;
            as_t[buf][k + 0][row] = a[l].x;
            as_t[buf][k + 1][row] = a[l].y;
            as_t[buf][k + 2][row] = a[l].z;
            as_t[buf][k + 3][row] = a[l].w;
        }
#pragma unroll
        for (int l = 0; l < WT_B_LOADS; l++) {
            int e = tid + l * WT_THREADS;
            *reinterpret_cast<float4 *>(&bs[buf][e / (WT_BN / 4)][e % (WT_BN / 4) * 4]) = b[l];
        }
    };

    fetch(0);
    stash(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += WT_BK) {
        bool more = k0 + WT_BK < p.k;
        if (more)
            fetch(k0 + WT_BK);
#pragma unroll
        for (int k = 0; k < WT_BK; k++) {
            float ra[8], rb[8];
            *reinterpret_cast<float4 *>(&ra[0]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][m0]);
            *reinterpret_cast<float4 *>(&ra[4]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][m0 + 16]);
            *reinterpret_cast<float4 *>(&rb[0]) = *reinterpret_cast<const float4 *>(&bs[buf][k][n0]);
            *reinterpret_cast<float4 *>(&rb[4]) = *reinterpret_cast<const float4 *>(&bs[buf][k][n0 + 32]);
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] += ra[i] * rb[j];
        }
        if (more) {
            buf ^= 1;
            stash(buf);
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int row = bm0 + m0 + (i / 4) * 16 + i % 4;
        sgemm_store4<VEC>(p, row, bn0 + n0, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        sgemm_store4<VEC>(p, row, bn0 + n0 + 32, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}

extern "C" cudaError_t sgemm_warptile_launch(const struct sgemm_problem *p,
                                             const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, WT_BN), ceil_div(p->m, WT_BM));
    SGEMM_LAUNCH_VEC(sgemm_warptile_kernel, grid, WT_THREADS, 0, p, env);
    return launch_result();
}

extern "C" cudaError_t sgemm_warptile_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_warptile_kernel<true>, WT_THREADS, 0, out);
}
