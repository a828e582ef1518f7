/* zorder: padded with each thread's 8x8 results split into four 4x4 tiles
 * 64 rows and 64 columns apart, and the threads of a warp laid out in
 * z-order over a 4x8 patch, so that the LDS.128 reads of the inner loop are
 * free of bank conflicts too.
 *
 * Against padded: there a thread reads bs[k][tc*8] and bs[k][tc*8 + 4]: for
 * 16 threads 32 bytes apart, banks repeat every 4 threads, a 2-way
 * conflict, and the A reads of a warp span two groups of rows.  Here a
 * thread reads as_t[k][ty*4], as_t[k][64+ty*4], bs[k][tx*4] and
 * bs[k][64+tx*4]; a warp covers 4 values of ty and 8 of tx, so each LDS.128
 * touches 4 (A) or 8 (B) adjacent float4s: one pass, no conflict, the rest
 * broadcast.
 *
 * Follows "SGEMM Optimization", section "z-order": the thread layout it
 * credits to Li Shaoxia, which removes load and store conflicts both; and
 * "a hgemm tvm schedule", section "Wrap Tile & Bank Conflict" (the 2x2
 * virtual-thread interleave against read conflicts).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel zorder --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { ZO_BM = 128, ZO_BN = 128, ZO_BK = 8, ZO_PAD = 4 };
enum { ZO_THREADS = 256 };

static_assert(ZO_BM * ZO_BK == 4 * ZO_THREADS, "one float4 of A per thread per tile");
static_assert(ZO_BK * ZO_BN == 4 * ZO_THREADS, "one float4 of B per thread per tile");
static_assert(ZO_BM == 2 * 16 * 4 && ZO_BN == 2 * 16 * 4,
              "16x16 threads, each two 4-row and two 4-column strips");

template <bool VEC>
static __global__ void __launch_bounds__(ZO_THREADS)
sgemm_zorder_kernel(const struct sgemm_problem p)
{
    __shared__ __align__(16) float as_t[2][ZO_BK][ZO_BM + ZO_PAD];
    __shared__ __align__(16) float bs[2][ZO_BK][ZO_BN];
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int bm0 = blockIdx.y * ZO_BM, bn0 = blockIdx.x * ZO_BN;
    /* z-order: lane bits 0, 2, 4 give tx, bits 1, 3 give ty. */
    int tx = (warp % 2) * 8 + ((lane & 1) | ((lane >> 1) & 2) | ((lane >> 2) & 4));
    int ty = (warp / 2) * 4 + (((lane >> 1) & 1) | ((lane >> 2) & 2));
    int a_row = tid / (ZO_BK / 4), a_k = tid % (ZO_BK / 4) * 4;
    int b_k = tid / (ZO_BN / 4), b_col = tid % (ZO_BN / 4) * 4;
    float acc[8][8] = {};

    float4 a = sgemm_load4<VEC>(p.a, p.m, p.k, bm0 + a_row, a_k);
    float4 b = sgemm_load4<VEC>(p.b, p.k, p.n, b_k, bn0 + b_col);
    as_t[0][a_k + 0][a_row] = a.x;
    as_t[0][a_k + 1][a_row] = a.y;
    as_t[0][a_k + 2][a_row] = a.z;
    as_t[0][a_k + 3][a_row] = a.w;
    *reinterpret_cast<float4 *>(&bs[0][b_k][b_col]) = b;
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += ZO_BK) {
        bool more = k0 + ZO_BK < p.k;
        if (more) {
            a = sgemm_load4<VEC>(p.a, p.m, p.k, bm0 + a_row, k0 + ZO_BK + a_k);
            b = sgemm_load4<VEC>(p.b, p.k, p.n, k0 + ZO_BK + b_k, bn0 + b_col);
        }
#pragma unroll
        for (int k = 0; k < ZO_BK; k++) {
            float ra[8], rb[8];
            *reinterpret_cast<float4 *>(&ra[0]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][ty * 4]);
            *reinterpret_cast<float4 *>(&ra[4]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][64 + ty * 4]);
            *reinterpret_cast<float4 *>(&rb[0]) = *reinterpret_cast<const float4 *>(&bs[buf][k][tx * 4]);
            *reinterpret_cast<float4 *>(&rb[4]) = *reinterpret_cast<const float4 *>(&bs[buf][k][64 + tx * 4]);
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] += ra[i] * rb[j];
        }
        if (more) {
            buf ^= 1;
            as_t[buf][a_k + 0][a_row] = a.x;
            as_t[buf][a_k + 1][a_row] = a.y;
            as_t[buf][a_k + 2][a_row] = a.z;
            as_t[buf][a_k + 3][a_row] = a.w;
            *reinterpret_cast<float4 *>(&bs[buf][b_k][b_col]) = b;
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int row = bm0 + (i / 4) * 64 + ty * 4 + i % 4;
        sgemm_store4<VEC>(p, row, bn0 + tx * 4,
                          make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        sgemm_store4<VEC>(p, row, bn0 + 64 + tx * 4,
                          make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}

extern "C" cudaError_t sgemm_zorder_launch(const struct sgemm_problem *p,
                                           const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, ZO_BN), ceil_div(p->m, ZO_BM));
    SGEMM_LAUNCH_VEC(sgemm_zorder_kernel, grid, ZO_THREADS, 0, p, env);
    return launch_result();
}

extern "C" cudaError_t sgemm_zorder_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_zorder_kernel<true>, ZO_THREADS, 0, out);
}
