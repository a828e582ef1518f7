/* outer_product: blocktile_2d with the operands cached in registers, each
 * step of k an outer product of an 8-vector of A and an 8-vector of B.
 *
 * Against blocktile_2d: the source loads TM + TN values from shared memory
 * per step of k, then does TM x TN FMAs from registers.  nvcc 13 finds this
 * itself in blocktile_2d: the SASS of the two (sm_90) is the same, 32
 * LDS.128 per 512 FFMA in the unrolled tile loop, the compiler having both
 * hoisted the repeated loads and merged As[row][k..k+3] into 16-byte loads.
 * The stage is kept because it teaches the step; on older compilers the
 * two differ.
 *
 * Follows "SGEMM Optimization", section "2D-tile register"; the
 * outer-product formulation of "a hgemm tvm schedule".
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel outer_product --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { OP_BM = 128, OP_BN = 128, OP_BK = 8, OP_TM = 8, OP_TN = 8 };
enum { OP_THREADS = OP_BM / OP_TM * (OP_BN / OP_TN) };
enum { OP_LOADS = OP_BM * OP_BK / OP_THREADS };

static_assert(OP_BM * OP_BK == OP_BK * OP_BN, "A and B tiles take as many loads");
static_assert(OP_BM * OP_BK % OP_THREADS == 0, "tile loads split evenly over threads");

static __global__ void __launch_bounds__(OP_THREADS)
sgemm_outer_product_kernel(const struct sgemm_problem p)
{
    __shared__ float as[OP_BM][OP_BK];
    __shared__ float bs[OP_BK][OP_BN];
    int tid = threadIdx.x;
    int bm0 = blockIdx.y * OP_BM, bn0 = blockIdx.x * OP_BN;
    int row0 = tid / (OP_BN / OP_TN) * OP_TM;
    int col0 = tid % (OP_BN / OP_TN) * OP_TN;
    float acc[OP_TM][OP_TN] = {};
    float reg_a[OP_TM], reg_b[OP_TN];

    for (int k0 = 0; k0 < p.k; k0 += OP_BK) {
#pragma unroll
        for (int l = 0; l < OP_LOADS; l++) {
            int e = tid + l * OP_THREADS;
            as[e / OP_BK][e % OP_BK] =
                sgemm_load1(p.a, p.m, p.k, bm0 + e / OP_BK, k0 + e % OP_BK);
            bs[e / OP_BN][e % OP_BN] =
                sgemm_load1(p.b, p.k, p.n, k0 + e / OP_BN, bn0 + e % OP_BN);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < OP_BK; k++) {
#pragma unroll
            for (int i = 0; i < OP_TM; i++)
                reg_a[i] = as[row0 + i][k];
#pragma unroll
            for (int j = 0; j < OP_TN; j++)
                reg_b[j] = bs[k][col0 + j];
#pragma unroll
            for (int i = 0; i < OP_TM; i++)
#pragma unroll
                for (int j = 0; j < OP_TN; j++)
                    acc[i][j] += reg_a[i] * reg_b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < OP_TM; i++)
#pragma unroll
        for (int j = 0; j < OP_TN; j++)
            sgemm_store1(p, bm0 + row0 + i, bn0 + col0 + j, acc[i][j]);
}

extern "C" cudaError_t sgemm_outer_product_launch(const struct sgemm_problem *p,
                                                  const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, OP_BN), ceil_div(p->m, OP_BM));
    sgemm_outer_product_kernel<<<grid, OP_THREADS, 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_outer_product_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_outer_product_kernel, OP_THREADS, 0, out);
}
