/* vec4: float4 global loads, A stored transposed in shared memory, and
 * 16-byte shared loads in the inner loop.
 *
 * Against outer_product, the 256-thread 8x8 tile it builds on: each thread
 * fetches its share of the A and B tiles as one float4 each (LDG.128)
 * instead of four floats; A is written into shared memory transposed
 * (as_t[k][m]), so that a thread's 8 values of A for one k are contiguous
 * and come in two LDS.128, like its 8 values of B.  Where a row of A or B
 * does not start on a 16-byte boundary (K or N not a multiple of 4), the
 * same kernel loads the four floats one by one.
 *
 * Follows "SGEMM Optimization", section "float4" (with its "why transpose
 * As"); "How to optimize SGEMM on NVIDIA GPUs", kernel 6; "Matrix
 * multiplication (RTX 3060 Laptop write-up)", matrixMul_3 and matrixMul_4
 * (A transposed, float4); the "vectorize" step of "a hgemm tvm schedule".
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel vec4 --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { V4_BM = 128, V4_BN = 128, V4_BK = 8, V4_TM = 8, V4_TN = 8 };
enum { V4_THREADS = V4_BM / V4_TM * (V4_BN / V4_TN) };

static_assert(V4_BM * V4_BK == 4 * V4_THREADS, "one float4 of A per thread per tile");
static_assert(V4_BK * V4_BN == 4 * V4_THREADS, "one float4 of B per thread per tile");

template <bool VEC>
static __global__ void __launch_bounds__(V4_THREADS)
sgemm_vec4_kernel(const struct sgemm_problem p)
{
    __shared__ __align__(16) float as_t[V4_BK][V4_BM];
    __shared__ __align__(16) float bs[V4_BK][V4_BN];
    int tid = threadIdx.x;
    int bm0 = blockIdx.y * V4_BM, bn0 = blockIdx.x * V4_BN;
    int row0 = tid / (V4_BN / V4_TN) * V4_TM;
    int col0 = tid % (V4_BN / V4_TN) * V4_TN;
    int a_row = tid / (V4_BK / 4), a_k = tid % (V4_BK / 4) * 4;
    int b_k = tid / (V4_BN / 4), b_col = tid % (V4_BN / 4) * 4;
    float acc[V4_TM][V4_TN] = {};

    for (int k0 = 0; k0 < p.k; k0 += V4_BK) {
        float4 a = sgemm_load4<VEC>(p.a, p.m, p.k, bm0 + a_row, k0 + a_k);
        as_t[a_k + 0][a_row] = a.x;
        as_t[a_k + 1][a_row] = a.y;
        as_t[a_k + 2][a_row] = a.z;
        as_t[a_k + 3][a_row] = a.w;
        *reinterpret_cast<float4 *>(&bs[b_k][b_col]) =
            sgemm_load4<VEC>(p.b, p.k, p.n, k0 + b_k, bn0 + b_col);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < V4_BK; k++) {
            float ra[V4_TM], rb[V4_TN];
            *reinterpret_cast<float4 *>(&ra[0]) = *reinterpret_cast<const float4 *>(&as_t[k][row0]);
            *reinterpret_cast<float4 *>(&ra[4]) = *reinterpret_cast<const float4 *>(&as_t[k][row0 + 4]);
            *reinterpret_cast<float4 *>(&rb[0]) = *reinterpret_cast<const float4 *>(&bs[k][col0]);
            *reinterpret_cast<float4 *>(&rb[4]) = *reinterpret_cast<const float4 *>(&bs[k][col0 + 4]);
#pragma unroll
            for (int i = 0; i < V4_TM; i++)
#pragma unroll
                for (int j = 0; j < V4_TN; j++)
                    acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < V4_TM; i++) {
        sgemm_store4<VEC>(p, bm0 + row0 + i, bn0 + col0,
                          make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        sgemm_store4<VEC>(p, bm0 + row0 + i, bn0 + col0 + 4,
                          make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}

extern "C" cudaError_t sgemm_vec4_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, V4_BN), ceil_div(p->m, V4_BM));
    SGEMM_LAUNCH_VEC(sgemm_vec4_kernel, grid, V4_THREADS, 0, p, env);
    return launch_result();
}

extern "C" cudaError_t sgemm_vec4_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_vec4_kernel<true>, V4_THREADS, 0, out);
}
