/* blocktile_2d: each thread computes an 8x8 tile of C (TM x TN), reading
 * its operands from shared memory inside the innermost loop.
 *
 * Against blocktile_1d: a 128x128 block tile, BK = 8, 256 threads of 64
 * results each, so every byte brought into shared memory is used 128 times
 * instead of 64, and global traffic per FLOP halves.  The loop reads an
 * element of As and one of Bs per FMA, as "SGEMM Optimization" writes it;
 * the next stage caches them in registers by hand.
 *
 * Follows "SGEMM Optimization", section "2D-tile"; "How to optimize SGEMM
 * on NVIDIA GPUs", kernels 7-8 (4x4 and 8x8 micro kernels); "a hgemm tvm
 * schedule", section "Thread Block Tile".
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel blocktile_2d --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { BT2_BM = 128, BT2_BN = 128, BT2_BK = 8, BT2_TM = 8, BT2_TN = 8 };
enum { BT2_THREADS = BT2_BM / BT2_TM * (BT2_BN / BT2_TN) };
enum { BT2_LOADS = BT2_BM * BT2_BK / BT2_THREADS };

static_assert(BT2_BM * BT2_BK == BT2_BK * BT2_BN, "A and B tiles take as many loads");
static_assert(BT2_BM * BT2_BK % BT2_THREADS == 0, "tile loads split evenly over threads");

static __global__ void __launch_bounds__(BT2_THREADS)
sgemm_blocktile_2d_kernel(const struct sgemm_problem p)
{
    __shared__ float as[BT2_BM][BT2_BK];
    __shared__ float bs[BT2_BK][BT2_BN];
    int tid = threadIdx.x;
    int bm0 = blockIdx.y * BT2_BM, bn0 = blockIdx.x * BT2_BN;
    int row0 = tid / (BT2_BN / BT2_TN) * BT2_TM;
    int col0 = tid % (BT2_BN / BT2_TN) * BT2_TN;
    float acc[BT2_TM][BT2_TN] = {};

    for (int k0 = 0; k0 < p.k; k0 += BT2_BK) {
#pragma unroll
        for (int l = 0; l < BT2_LOADS; l++) {
            int e = tid + l * BT2_THREADS;
            as[e / BT2_BK][e % BT2_BK] =
                sgemm_load1(p.a, p.m, p.k, bm0 + e / BT2_BK, k0 + e % BT2_BK);
            bs[e / BT2_BN][e % BT2_BN] =
                sgemm_load1(p.b, p.k, p.n, k0 + e / BT2_BN, bn0 + e % BT2_BN);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BT2_BK; k++)
#pragma unroll
            for (int i = 0; i < BT2_TM; i++)
#pragma unroll
                for (int j = 0; j < BT2_TN; j++)
                    acc[i][j] += as[row0 + i][k] * bs[k][col0 + j];
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < BT2_TM; i++)
#pragma unroll
        for (int j = 0; j < BT2_TN; j++)
            sgemm_store1(p, bm0 + row0 + i, bn0 + col0 + j, acc[i][j]);
}

extern "C" cudaError_t sgemm_blocktile_2d_launch(const struct sgemm_problem *p,
                                                 const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, BT2_BN), ceil_div(p->m, BT2_BM));
    sgemm_blocktile_2d_kernel<<<grid, BT2_THREADS, 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_blocktile_2d_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_blocktile_2d_kernel, BT2_THREADS, 0, out);
}
