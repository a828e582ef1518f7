/* dgemm naive: FP64, one thread per element of C, the threads of a warp
 * along a row of C; a stack of products in one launch.
 *
 * The first stage of the DGEMM ladder: the FP64 twin of
 * sgemm_01_coalesced.cu, the baseline the later DGEMM stages are checked
 * and timed against.  At each step of k a warp reads one element of A (a
 * broadcast) and 32 adjacent doubles of B (two 128-byte lines), and writes
 * 32 adjacent doubles of C.  Every operand comes from L1/L2 once per use,
 * so memory sets the pace, not the DFMA units.
 *
 * The grid covers columns in x, rows in y and products in z.  y and z are
 * capped at 65535 and each block walks on over further rows and products
 * in steps of the grid, so any m and any batch fit one launch; indices past
 * 2^31 are 64-bit.
 *
 * Follows "cuda编程-矩阵乘法优化" ("CUDA programming: optimising matrix
 * multiplication"), section "Memory Coalescing", in FP64.
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_naive --verify --repeat 20 */
#include "kernels/gemm.h"
#include "kernels/common.cuh"

enum { DNAIVE_COLS = 32, DNAIVE_ROWS = 8, DNAIVE_GRID_MAX = 65535 };

static __global__ void __launch_bounds__(DNAIVE_COLS * DNAIVE_ROWS)
dgemm_naive_kernel(const struct dgemm_problem p)
{
    long long col = (long long)blockIdx.x * DNAIVE_COLS + threadIdx.x;
    if (col >= p.n)
        return;
    long long batch = p.batch > 1 ? p.batch : 1;
    long long row_step = (long long)gridDim.y * DNAIVE_ROWS;
    for (long long z = blockIdx.z; z < batch; z += gridDim.z) {
        const double *a = p.a + z * p.stride_a;
        const double *b = p.b + z * p.stride_b + col;
        double *c = p.c + z * p.stride_c + col;
        for (long long row = (long long)blockIdx.y * DNAIVE_ROWS + threadIdx.y; row < p.m;
             row += row_step) {
            const double *ar = a + row * p.k;
            double acc = 0.0;
            for (int kk = 0; kk < p.k; kk++)
                acc = fma(ar[kk], b[(size_t)kk * p.n], acc);
            double *out = c + row * p.n;
            *out = p.beta == 0.0 ? p.alpha * acc : p.alpha * acc + p.beta * *out;
        }
    }
}

extern "C" cudaError_t dgemm_naive_launch(const struct dgemm_problem *p,
                                          const struct launch_env *env)
{
    if (p->m <= 0 || p->n <= 0)
        return cudaSuccess;
    const long long cap = DNAIVE_GRID_MAX;
    long long rows = (p->m - 1LL) / DNAIVE_ROWS + 1;
    long long batch = p->batch > 1 ? p->batch : 1;
    dim3 grid((unsigned)((p->n - 1LL) / DNAIVE_COLS + 1), (unsigned)(rows < cap ? rows : cap),
              (unsigned)(batch < cap ? batch : cap));
    dgemm_naive_kernel<<<grid, dim3(DNAIVE_COLS, DNAIVE_ROWS), 0, env->stream>>>(*p);
    return launch_result();
}

extern "C" cudaError_t dgemm_naive_attr(struct kernel_attr *out)
{
    return kernel_attr_of(dgemm_naive_kernel, DNAIVE_COLS * DNAIVE_ROWS, 0, out);
}
