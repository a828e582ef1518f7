/* contiguous_4x4: strided_4x4 with each thread computing a contiguous 4x4
 * tile of C (rows ty*4.., columns tx*4..).
 *
 * Against strided_4x4, and the answer to the write-up's open question: why
 * is 2_2 so much faster than 2_1 when both do 16 FMAs per 8 floats read
 * from shared memory?  Because the ratio that binds is not bytes but
 * instructions.  A thread's four values of B are adjacent and 16-byte
 * aligned, so the compiler fetches them with one LDS.128 instead of four
 * LDS.32 (the values of A likewise, as a broadcast): per step of k the
 * inner loop issues 2 shared loads for 16 FFMAs instead of 8.  The bytes a
 * warp moves are the same (a 512-byte LDS.128 takes four 128-byte passes,
 * as four LDS.32 do), but the shared-memory pipe takes a new warp
 * instruction far less often than the FMA pipes do, and with 8 loads per
 * 16 FMAs it, not arithmetic, sets the pace.  The padding of 2_1 (TILE + 1)
 * would forbid the wide loads, so 2_2 drops it, as the write-up does.  The
 * SASS of the two builds (cuobjdump, sm_90) shows it: the inner loop of
 * strided_4x4 has 64 LDS.32 per 128 FFMA, this one 16 LDS.128.
 *
 * Follows "Matrix multiplication (RTX 3060 Laptop write-up)", matrixMul_2_2
 * (the section "矩阵乘法", "Matrix multiplication", of a Chinese write-up
 * of transpose and matmul experiments on an RTX 3060 Laptop GPU).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel contiguous_4x4 --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { C44_TILE = 128, C44_TK = 8, C44_NUM = 4, C44_DIM = C44_TILE / C44_NUM };
enum { C44_THREADS = C44_DIM * C44_DIM };

static_assert(C44_TILE * C44_TK == C44_THREADS, "one element of A and of B per thread per tile");

static __global__ void __launch_bounds__(C44_THREADS)
sgemm_contiguous_4x4_kernel(const struct sgemm_problem p)
{
    __shared__ __align__(16) float shmem_a[C44_TK][C44_TILE];
    __shared__ __align__(16) float shmem_b[C44_TK][C44_TILE];
    int tx = threadIdx.x * C44_NUM, ty = threadIdx.y * C44_NUM;
    int tid = threadIdx.y * C44_DIM + threadIdx.x;
    int bm0 = blockIdx.y * C44_TILE, bn0 = blockIdx.x * C44_TILE;
    int shax = tid % C44_TK, shay = tid / C44_TK;
    int shbx = tid % C44_TILE, shby = tid / C44_TILE;
    float reg_a[C44_NUM], reg_b[C44_NUM];
    float acc[C44_NUM][C44_NUM] = {};

    for (int k0 = 0; k0 < p.k; k0 += C44_TK) {
        shmem_a[shax][shay] = sgemm_load1(p.a, p.m, p.k, bm0 + shay, k0 + shax);
        shmem_b[shby][shbx] = sgemm_load1(p.b, p.k, p.n, k0 + shby, bn0 + shbx);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < C44_TK; k++) {
#pragma unroll
            for (int i = 0; i < C44_NUM; i++) {
                reg_a[i] = shmem_a[k][ty + i];
                reg_b[i] = shmem_b[k][tx + i];
            }
#pragma unroll
            for (int i = 0; i < C44_NUM; i++)
#pragma unroll
                for (int j = 0; j < C44_NUM; j++)
                    acc[i][j] += reg_a[i] * reg_b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < C44_NUM; i++)
#pragma unroll
        for (int j = 0; j < C44_NUM; j++)
            sgemm_store1(p, bm0 + ty + i, bn0 + tx + j, acc[i][j]);
}

extern "C" cudaError_t sgemm_contiguous_4x4_launch(const struct sgemm_problem *p,
                                                   const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, C44_TILE), ceil_div(p->m, C44_TILE));
    sgemm_contiguous_4x4_kernel<<<grid, dim3(C44_DIM, C44_DIM), 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t sgemm_contiguous_4x4_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_contiguous_4x4_kernel, C44_THREADS, 0, out);
}
