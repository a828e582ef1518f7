/* double_buffer: two shared-memory buffers per operand, so that the next
 * tile is written into one while the current is read from the other, with
 * one __syncthreads per tile instead of two.
 *
 * Against vec4: the global loads of tile t+1 are issued into registers
 * before the FMAs of tile t, so their latency hides behind the arithmetic;
 * after the FMAs they are stored into the other buffer.  vec4's second
 * barrier, which keeps a single buffer from being overwritten while it is
 * still being read (write-after-read), is not needed: the reads and writes
 * of one step go to different buffers.
 *
 * Follows "SGEMM Optimization", section "double buffer"; "How to optimize
 * SGEMM on NVIDIA GPUs", kernel 11; the "double buffer" step of "a hgemm
 * tvm schedule".
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel double_buffer --verify --repeat 20 */
#include "kernels/sgemm/sgemm_tile.cuh"

enum { DB_BM = 128, DB_BN = 128, DB_BK = 8, DB_TM = 8, DB_TN = 8 };
enum { DB_THREADS = DB_BM / DB_TM * (DB_BN / DB_TN) };

static_assert(DB_BM * DB_BK == 4 * DB_THREADS, "one float4 of A per thread per tile");
static_assert(DB_BK * DB_BN == 4 * DB_THREADS, "one float4 of B per thread per tile");

template <bool VEC>
static __global__ void __launch_bounds__(DB_THREADS)
sgemm_double_buffer_kernel(const struct sgemm_problem p)
{
    __shared__ __align__(16) float as_t[2][DB_BK][DB_BM];
    __shared__ __align__(16) float bs[2][DB_BK][DB_BN];
    int tid = threadIdx.x;
    int bm0 = blockIdx.y * DB_BM, bn0 = blockIdx.x * DB_BN;
    int row0 = tid / (DB_BN / DB_TN) * DB_TM;
    int col0 = tid % (DB_BN / DB_TN) * DB_TN;
    int a_row = tid / (DB_BK / 4), a_k = tid % (DB_BK / 4) * 4;
    int b_k = tid / (DB_BN / 4), b_col = tid % (DB_BN / 4) * 4;
    float acc[DB_TM][DB_TN] = {};

    float4 a = sgemm_load4<VEC>(p.a, p.m, p.k, bm0 + a_row, a_k);
    float4 b = sgemm_load4<VEC>(p.b, p.k, p.n, b_k, bn0 + b_col);
    as_t[0][a_k + 0][a_row] = a.x;
    as_t[0][a_k + 1][a_row] = a.y;
    as_t[0][a_k + 2][a_row] = a.z;
    as_t[0][a_k + 3][a_row] = a.w;
    *reinterpret_cast<float4 *>(&bs[0][b_k][b_col]) = b;
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += DB_BK) {
        bool more = k0 + DB_BK < p.k;
        if (more) {
            a = sgemm_load4<VEC>(p.a, p.m, p.k, bm0 + a_row, k0 + DB_BK + a_k);
            b = sgemm_load4<VEC>(p.b, p.k, p.n, k0 + DB_BK + b_k, bn0 + b_col);
        }
#pragma unroll
        for (int k = 0; k < DB_BK; k++) {
            float ra[DB_TM], rb[DB_TN];
            *reinterpret_cast<float4 *>(&ra[0]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][row0]);
            *reinterpret_cast<float4 *>(&ra[4]) = *reinterpret_cast<const float4 *>(&as_t[buf][k][row0 + 4]);
            *reinterpret_cast<float4 *>(&rb[0]) = *reinterpret_cast<const float4 *>(&bs[buf][k][col0]);
            *reinterpret_cast<float4 *>(&rb[4]) = *reinterpret_cast<const float4 *>(&bs[buf][k][col0 + 4]);
#pragma unroll
            for (int i = 0; i < DB_TM; i++)
#pragma unroll
                for (int j = 0; j < DB_TN; j++)
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
    for (int i = 0; i < DB_TM; i++) {
        sgemm_store4<VEC>(p, bm0 + row0 + i, bn0 + col0,
                          make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        sgemm_store4<VEC>(p, bm0 + row0 + i, bn0 + col0 + 4,
                          make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}

extern "C" cudaError_t sgemm_double_buffer_launch(const struct sgemm_problem *p,
                                                  const struct launch_env *env)
{
    dim3 grid(ceil_div(p->n, DB_BN), ceil_div(p->m, DB_BM));
    SGEMM_LAUNCH_VEC(sgemm_double_buffer_kernel, grid, DB_THREADS, 0, p, env);
    return launch_result();
}

extern "C" cudaError_t sgemm_double_buffer_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_double_buffer_kernel<true>, DB_THREADS, 0, out);
}
