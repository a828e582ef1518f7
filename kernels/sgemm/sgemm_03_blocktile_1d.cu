/* blocktile_1d: each thread computes TM = 8 elements of one column of C.
 *
 * Against smem: a 64x64 block tile with 512 threads, each accumulating 8
 * results, so one element of B loaded from shared memory feeds 8 FMAs
 * instead of 1.  The loads of A are warp-wide broadcasts (all 32 threads of
 * a warp share the same 8 rows), so shared-memory traffic per FMA falls
 * from 2 loads to 9/8.
 *
 * Follows "SGEMM Optimization", section "1D-tile"; "How to optimize SGEMM
 * on NVIDIA GPUs", kernel 5 (its 4x1 micro kernel).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel blocktile_1d --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { BT1_BM = 64, BT1_BN = 64, BT1_BK = 8, BT1_TM = 8 };
enum { BT1_THREADS = BT1_BM * BT1_BN / BT1_TM };

static_assert(BT1_BM * BT1_BK == BT1_THREADS, "one A element per thread per tile");
static_assert(BT1_BK * BT1_BN == BT1_THREADS, "one B element per thread per tile");

static __global__ void __launch_bounds__(BT1_THREADS)
sgemm_blocktile_1d_kernel(const struct sgemm_problem p)
{
    __shared__ float as[BT1_BM][BT1_BK];
    __shared__ float bs[BT1_BK][BT1_BN];
    int tid = threadIdx.x;
    int bm0 = blockIdx.y * BT1_BM, bn0 = blockIdx.x * BT1_BN;
    int col = tid % BT1_BN;          /* this thread's column of the tile */
    int row0 = tid / BT1_BN * BT1_TM;
    float acc[BT1_TM] = {};

    for (int k0 = 0; k0 < p.k; k0 += BT1_BK) {
        as[tid / BT1_BK][tid % BT1_BK] =
            sgemm_load1(p.a, p.m, p.k, bm0 + tid / BT1_BK, k0 + tid % BT1_BK);
        bs[tid / BT1_BN][tid % BT1_BN] =
            sgemm_load1(p.b, p.k, p.n, k0 + tid / BT1_BN, bn0 + tid % BT1_BN);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BT1_BK; k++) {
            float b = bs[k][col];
#pragma unroll
            for (int i = 0; i < BT1_TM; i++)
                acc[i] += as[row0 + i][k] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < BT1_TM; i++)
        sgemm_store1(p, bm0 + row0 + i, bn0 + col, acc[i]);
}

extern "C" cudaError_t sgemm_blocktile_1d_launch(const struct sgemm_problem *p,
                                                 const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, BT1_BN), ceil_div(p->m, BT1_BM));
    sgemm_blocktile_1d_kernel<<<grid, BT1_THREADS, 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_blocktile_1d_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_blocktile_1d_kernel, BT1_THREADS, 0, out);
}
