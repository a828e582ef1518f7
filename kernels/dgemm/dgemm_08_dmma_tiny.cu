/* f64_dmma_tiny: float64 products too small to fill the GPU with the
 * other DMMA stages' tiles, on the FP64 tensor cores by the warp-level
 * mma.sync.m8n8k4 (DMMA), FP64 accumulation; mma_tiny's plan
 * (kernels/hgemm/hgemm_12_mma_tiny.cu) in double.
 *
 * A product of 127 x 129 x 255 is 2 of f64_dmma's 128 x 128 tiles and 6
 * of f64_dmma_small's 64 x 64, each warp walking the whole of K behind a
 * cp.async ring: the product waits on each warp's chain of steps, not on
 * the arithmetic or the memory.  Here:
 *
 *   - a block owns 32 x 32 of C and its 4 warps split K among them, warp w
 *     taking the steps of 8 values w, w + 4, w + 8, ...; each warp holds
 *     the whole tile, 4 x 4 mma tiles of m8n8, 32 double accumulators a
 *     lane;
 *   - the fragments come straight from global memory into registers: for
 *     lane l (g = l / 4, t = l % 4) of the 4 values of k at k, A's
 *     fragment is row g of each m8 tile at k + t, B's column g of each n8
 *     tile at k + t, one 8-byte load each; the loads of the warp's next
 *     step are issued before this step's 32 DMMA;
 *   - the 4 partial tiles meet in shared memory (4 x 32 rows of 34
 *     doubles), each thread sums 8 outputs of a column (lane l of warp w:
 *     column l of rows w, w + 4, ...) over the warps in warp order and
 *     stores alpha sum + beta C under a bounds check; a warp's store is a
 *     row's 32 adjacent doubles.
 * Values outside A or B load as zeros, so any shape runs; a stack takes
 * blockIdx.y, in launches of at most 65535; a single product with a long K
 * over few tiles is split into slices of K by the dispatcher
 * (kernels/gemm_dispatch.c), from 128 values a slice.
 *
 * gemmcli's own; the PTX ISA gives the fragment layouts of mma.m8n8k4.f64.
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_dmma_tiny --verify --repeat 20 */
#include "kernels/tiny.cuh"

enum {
    DTINY_WARPS = 4,           /* warps a block, each a share of K */
    DTINY_THREADS = DTINY_WARPS * 32,
    DTINY_STEP = 8,            /* values of k a warp's step */
    DTINY_ROW = TINY_BN + 2    /* doubles a row of a warp's tile in shared memory */
};

/* One step's fragments of a lane: for each 4 values of k (h), A's for the
 * 4 m8 tiles (row g at k + t), B's for the 4 n8 tiles (column g at k + t). */
struct dtiny_frag {
    double a[DTINY_STEP / 4][4];
    double b[DTINY_STEP / 4][4];
};

static __device__ __forceinline__ void dtiny_load(dtiny_frag &f, const double *__restrict__ a,
                                                  const double *__restrict__ b,
                                                  const struct dgemm_problem &p, int kk_end,
                                                  int row0, int col0, int k, int g, int t)
{
#pragma unroll
    for (int h = 0; h < DTINY_STEP / 4; h++) {
        int kk = k + 4 * h + t;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int r = row0 + 8 * i + g, c = col0 + 8 * i + g;
            f.a[h][i] = r < p.m && kk < kk_end ? __ldg(a + r * p.lda + kk) : 0.0;
            f.b[h][i] = kk < kk_end && c < p.n ? __ldg(b + (long long)kk * p.n + c) : 0.0;
        }
    }
}

static __device__ __forceinline__ void dtiny_mma(double (&d)[2], double a, double b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

static __global__ void __launch_bounds__(DTINY_THREADS, 3) dgemm_dmma_tiny_kernel(tiny_args<dgemm_problem> args)
{
    __shared__ __align__(16) double part[DTINY_WARPS][TINY_BM][DTINY_ROW];
    const struct dgemm_problem &p = args.p;
    const int prod = args.batch0 + blockIdx.y;
    const double *a = p.a + prod * p.stride_a;
    const double *b = p.b + prod * p.stride_b;
    double *c = p.c + prod * p.stride_c;
    const int row0 = (int)(blockIdx.x / args.tiles_n) * TINY_BM;
    const int col0 = (int)(blockIdx.x % args.tiles_n) * TINY_BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

    double acc[4][4][2];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc[i][j][0] = acc[i][j][1] = 0.0;

    /* (a split's shorter last slice: kernels/gemm_dispatch.c) */
    const int k = p.k_last > 0 && prod == p.batch - 1 ? p.k_last : p.k;
    const int steps = (k + DTINY_STEP - 1) / DTINY_STEP;
    dtiny_frag cur, next;
    if (warp < steps)
        dtiny_load(cur, a, b, p, k, row0, col0, DTINY_STEP * warp, g, t);
    for (int s = warp; s < steps; s += DTINY_WARPS) {
        if (s + DTINY_WARPS < steps)
            dtiny_load(next, a, b, p, k, row0, col0, DTINY_STEP * (s + DTINY_WARPS), g, t);
#pragma unroll
        for (int h = 0; h < DTINY_STEP / 4; h++)
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    dtiny_mma(acc[i][j], cur.a[h][i], cur.b[h][j]);
        cur = next;
    }

    /* The warps' tiles into shared memory: lane (g, t) holds row g of each
     * m8 tile at columns 2t, 2t + 1 of each n8 tile. */
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            *(double2 *)&part[warp][8 * i + g][8 * j + 2 * t] = make_double2(acc[i][j][0],
                                                                             acc[i][j][1]);
    __syncthreads();

    tiny_sum_store<DTINY_WARPS>(part, p, c, row0, col0, warp, lane);
}

extern "C" cudaError_t dgemm_dmma_tiny_launch(const struct dgemm_problem *p,
                                              const struct launch_env *env)
{
    return tiny_launch(dgemm_dmma_tiny_kernel, p, DTINY_THREADS, env->stream);
}

extern "C" cudaError_t dgemm_dmma_tiny_attr(struct kernel_attr *out)
{
    return kernel_attr_of(dgemm_dmma_tiny_kernel, DTINY_THREADS, 0, out);
}
