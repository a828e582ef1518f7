/* prefetch: warptile with the operands of step k+1 read from shared memory
 * into a second set of registers while the FMAs of step k run.
 *
 * Against warptile, which fetches the next tile from global memory into
 * registers during the arithmetic: the shared-memory side is
 * software-pipelined too.  The fragments live in frag_a[2][8] /
 * frag_b[2][8]; the loads for the next k, and at the end of a tile those
 * for the first k of the next tile, are issued before the 64 FMAs that do
 * not depend on them, so their ~30-cycle latency never stalls the warp.
 *
 * Follows "How to optimize SGEMM on NVIDIA GPUs", kernel 10 (prefetching,
 * after Huang 2018).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel prefetch --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { PF_WARPS_M = 4, PF_WARPS_N = 2, PF_BK = 16, PF_PAD = 4 };
enum { PF_BM = PF_WARPS_M * 32, PF_BN = PF_WARPS_N * 64, PF_THREADS = PF_WARPS_M * PF_WARPS_N * 32 };
enum { PF_A_LOADS = PF_BM * PF_BK / 4 / PF_THREADS, PF_B_LOADS = PF_BK * PF_BN / 4 / PF_THREADS };

static_assert(PF_BM * PF_BK % (4 * PF_THREADS) == 0, "A tile splits into whole float4s per thread");
static_assert(PF_BK * PF_BN % (4 * PF_THREADS) == 0, "B tile splits into whole float4s per thread");
static_assert(PF_BK % 2 == 0, "the last step of a tile uses fragment set 1, the next tile's first set 0");
static_assert(PF_PAD % 4 == 0, "padded rows of A stay 16-byte aligned");

template <bool VEC>
static __global__ void __launch_bounds__(PF_THREADS)
sgemm_prefetch_kernel(const struct sgemm_problem p)
{
    __shared__ __align__(16) float as_t[2][PF_BK][PF_BM + PF_PAD];
    __shared__ __align__(16) float bs[2][PF_BK][PF_BN];
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int bm0 = blockIdx.y * PF_BM, bn0 = blockIdx.x * PF_BN;
    int tm = ((lane >> 1) & 1) | ((lane >> 2) & 2);
    int tn = (lane & 1) | ((lane >> 1) & 2) | ((lane >> 2) & 4);
    int m0 = (warp / PF_WARPS_N) * 32 + tm * 4;   /* rows m0.., m0 + 16.. */
    int n0 = (warp % PF_WARPS_N) * 64 + tn * 4;   /* columns n0.., n0 + 32.. */
    float acc[8][8] = {};
    float4 a[PF_A_LOADS], b[PF_B_LOADS];

    auto fetch = [&](int k0) {
#pragma unroll
        for (int l = 0; l < PF_A_LOADS; l++) {
            int e = tid + l * PF_THREADS;
            a[l] = sgemm_load4<VEC>(p.a, p.m, p.k, bm0 + e / (PF_BK / 4), k0 + e % (PF_BK / 4) * 4);
        }
#pragma unroll
        for (int l = 0; l < PF_B_LOADS; l++) {
            int e = tid + l * PF_THREADS;
            b[l] = sgemm_load4<VEC>(p.b, p.k, p.n, k0 + e / (PF_BN / 4), bn0 + e % (PF_BN / 4) * 4);
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int l = 0; l < PF_A_LOADS; l++) {
            int e = tid + l * PF_THREADS, row = e / (PF_BK / 4), k = e % (PF_BK / 4) * 4;
            as_t[buf][k + 0][row] = a[l].x;
            as_t[buf][k + 1][row] = a[l].y;
            as_t[buf][k + 2][row] = a[l].z;
            as_t[buf][k + 3][row] = a[l].w;
        }
#pragma unroll
        for (int l = 0; l < PF_B_LOADS; l++) {
            int e = tid + l * PF_THREADS;
            *reinterpret_cast<float4 *>(&bs[buf][e / (PF_BN / 4)][e % (PF_BN / 4) * 4]) = b[l];
        }
    };

    fetch(0);
    stash(0);
    __syncthreads();
    float frag_a[2][8], frag_b[2][8];
    auto read_frag = [&](int buf, int k, int f) {
        *reinterpret_cast<float4 *>(&frag_a[f][0]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][m0]);
        *reinterpret_cast<float4 *>(&frag_a[f][4]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][m0 + 16]);
        *reinterpret_cast<float4 *>(&frag_b[f][0]) = *reinterpret_cast<const float4 *>(&bs[buf][k][n0]);
        *reinterpret_cast<float4 *>(&frag_b[f][4]) = *reinterpret_cast<const float4 *>(&bs[buf][k][n0 + 32]);
    };
    int buf = 0;
    read_frag(0, 0, 0);
    for (int k0 = 0; k0 < p.k; k0 += PF_BK) {
        bool more = k0 + PF_BK < p.k;
        if (more)
            fetch(k0 + PF_BK);
#pragma unroll
        for (int k = 0; k < PF_BK; k++) {
            if (k + 1 < PF_BK) {
                read_frag(buf, k + 1, (k + 1) % 2);
            } else if (more) {
                stash(buf ^ 1);
                __syncthreads();
                read_frag(buf ^ 1, 0, 0);
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] += frag_a[k % 2][i] * frag_b[k % 2][j];
        }
        buf ^= 1;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int row = bm0 + m0 + (i / 4) * 16 + i % 4;
        sgemm_store4<VEC>(p, row, bn0 + n0, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        sgemm_store4<VEC>(p, row, bn0 + n0 + 32, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}

extern "C" cudaError_t sgemm_prefetch_launch(const struct sgemm_problem *p,
                                             const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, PF_BN), ceil_div(p->m, PF_BM));
    SGEMM_LAUNCH_VEC(sgemm_prefetch_kernel, grid, PF_THREADS, 0, p, env);
    return launch_result();
}

extern "C" cudaError_t sgemm_prefetch_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_prefetch_kernel<true>, PF_THREADS, 0, out);
}
