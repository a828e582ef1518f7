/* thin: products with a thin side, M <= 32 (a few rows times a wide
 * matrix) or N <= 32 (a tall matrix times a few columns), including the
 * ones where M x N is tiny and K long (8 x 8 x 4000000).  They are
 * memory- or latency-bound: the wide operand should be read once at the
 * copy kernel's rate, and a few long dot products must be cut along K to
 * occupy every SM.
 *
 * Beyond the seeds.  The tile stages compute such a product on 128 x 128
 * tiles that are mostly empty, through a handful of blocks; gemv (the
 * stage before) covers M = 1 and N = 1 only.  Here:
 *   - M <= 32: a thread owns 4 adjacent columns of B (16-byte loads along
 *     B's rows; 4-byte ones when N % 4, K % 4 or the alignment forbid) and
 *     keeps M x 4 sums in registers, the kernel templated on a bound of M
 *     (4, 8, 16, 24, 32; the smallest that fits is launched).  Four values
 *     of k at a time, A is read as 16-byte broadcasts through L1: the
 *     lanes of a warp that share k share the address.  When N is narrow
 *     (fewer than 1024 columns), or the blocks along N would be fewer than
 *     the SMs (a block then takes as few as 128 columns), the block's
 *     threads are laid out as columns x k-lanes, and the k-lanes' sums are
 *     joined in shared memory in a fixed order: each thread's chain of
 *     loads along K, which a small grid waits on, gets shorter.
 *   - N <= 32 (and M > 32): a thread owns one row of A and N sums (bound
 *     4 ... 32); 256 rows x 32 values of k of A are staged in shared
 *     memory by 16-byte loads along A's rows (rows padded by one float, so
 *     both the stores and the per-row reads are free of bank conflicts),
 *     the matching 32 x N piece of B beside them, read as broadcasts; the
 *     next chunk is fetched into registers while this one is multiplied.
 *   - Both paths cut K into S slices over blockIdx.y, S chosen for about
 *     4 blocks per SM, each slice at least 64 values of k deep (and 16 per
 *     k-lane); the slices write their own M x N slabs of a workspace and
 *     kernels/gemm_split.cu adds them in slice order and applies alpha and
 *     beta, so the result does not depend on scheduling.  With S = 1 the
 *     kernel writes C itself.
 * A stack is one launch per 65535 products (blockIdx.z), with per-operand
 * strides; a stride of 0 shares an operand.  Both sides above 32 are
 * refused: M x 4 or N sums per thread would spill.
 *
 * Figures (`gemmcli bench`, NVIDIA H200, 2026-11-22, cuBLAS in the same run; the
 * device copies at 4.1 TB/s read + written):
 * 32768x16x8192 19.33 TFLOP/s (112%; 2.4 TB/s moved), 1x8192x8192 1.73
 * (92%), 8192x1x8192 1.40 (101%), 5x7x598 261%; with the narrower blocks
 * for small grids: 9x2515x1263 84%, 15x921x967 74% (27% before),
 * 30x3512x685 61%, 16x8558x16516 48%, 44312x30x864 44% (not profiled
 * yet; a thread's B loads of one step are not issued ahead of the step
 * before's FMAs, the first thing to look at).  Stacks of
 * tiny products are not its shapes (100000 x 8x8x8: 21%; small takes
 * them). */
#include <stdint.h>
#include <stdio.h>

#include "gemm.h"
#include "common.cuh"

enum {
    THIN_THREADS = 256,
    THIN_MOST = 32,             /* the thin side's bound */
    THIN_KC = 32,               /* values of k per staged chunk (N <= 32) */
    THIN_ROWS = THIN_THREADS,   /* rows of A per block (N <= 32) */
    THIN_MIN_K = 64,            /* values of k per slice at least */
    THIN_LANE_K = 16,           /* values of k per k-lane and slice at least */
    THIN_MOST_SLICES = 1024,
    THIN_MOST_Z = 65535         /* products per launch (gridDim.z) */
};

struct thin_args {
    int m, n, k;
    int slice;                  /* values of k per blockIdx.y */
    int tx;                     /* column threads per block (M <= 32) */
    int batch;                  /* products in this launch */
    const float *a, *b;
    float *out;                 /* C when gridDim.y == 1, else the workspace */
    long long sa, sb, sc;
    float alpha, beta;
};

/* One result: into C with alpha and beta, or into the slice's slab. */
static __device__ __forceinline__ void thin_store(const thin_args &p, size_t at, float sum)
{
    if (gridDim.y == 1) {
        float *c = p.out + (long long)blockIdx.z * p.sc + at;
        *c = p.beta != 0.0f ? p.alpha * sum + p.beta * *c : p.alpha * sum;
    } else {
        size_t count = (size_t)p.m * p.n;
        p.out[((size_t)blockIdx.y * p.batch + blockIdx.z) * count + at] = sum;
    }
}

/* M <= MB: thread (x, y) of a block sums columns j..j+3 over the k-quads
 * y, y + ty, ... of the slice; the ty k-lanes are joined at the end. */
template <int MB, bool VEC>
static __global__ void __launch_bounds__(THIN_THREADS)
thin_m_kernel(thin_args p)
{
    const int tx = p.tx, ty = THIN_THREADS / tx;
    const int x = threadIdx.x % tx, y = threadIdx.x / tx;
    const int j = (blockIdx.x * tx + x) * 4;
    const float *a = p.a + (long long)blockIdx.z * p.sa;
    const float *b = p.b + (long long)blockIdx.z * p.sb;
    const int k0 = blockIdx.y * p.slice, k1 = min(p.k, k0 + p.slice);
    float acc[MB][4];
#pragma unroll
    for (int i = 0; i < MB; i++)
        acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
    if (j < p.n) {
        for (int kk = k0 + 4 * y; kk < k1; kk += 4 * ty) {
            float4 bv[4];
#pragma unroll
            for (int t = 0; t < 4; t++) {
                const float *br = b + (size_t)(kk + t) * p.n + j;
                if (VEC) {
                    bv[t] = __ldg(reinterpret_cast<const float4 *>(br));
                } else {
                    bool in = kk + t < k1;
                    bv[t].x = in ? __ldg(br) : 0.0f;
                    bv[t].y = in && j + 1 < p.n ? __ldg(br + 1) : 0.0f;
                    bv[t].z = in && j + 2 < p.n ? __ldg(br + 2) : 0.0f;
                    bv[t].w = in && j + 3 < p.n ? __ldg(br + 3) : 0.0f;
                }
            }
#pragma unroll
            for (int i = 0; i < MB; i++) {
                /* Rows past M repeat the last one; their sums are dropped. */
                const float *ar = a + (size_t)min(i, p.m - 1) * p.k + kk;
                float4 av;
                if (VEC) {
                    av = __ldg(reinterpret_cast<const float4 *>(ar));
                } else {
                    av.x = __ldg(ar);
                    av.y = kk + 1 < k1 ? __ldg(ar + 1) : 0.0f;
                    av.z = kk + 2 < k1 ? __ldg(ar + 2) : 0.0f;
                    av.w = kk + 3 < k1 ? __ldg(ar + 3) : 0.0f;
                }
                acc[i][0] = fmaf(av.x, bv[0].x, acc[i][0]);
                acc[i][1] = fmaf(av.x, bv[0].y, acc[i][1]);
                acc[i][2] = fmaf(av.x, bv[0].z, acc[i][2]);
                acc[i][3] = fmaf(av.x, bv[0].w, acc[i][3]);
                acc[i][0] = fmaf(av.y, bv[1].x, acc[i][0]);
                acc[i][1] = fmaf(av.y, bv[1].y, acc[i][1]);
                acc[i][2] = fmaf(av.y, bv[1].z, acc[i][2]);
                acc[i][3] = fmaf(av.y, bv[1].w, acc[i][3]);
                acc[i][0] = fmaf(av.z, bv[2].x, acc[i][0]);
                acc[i][1] = fmaf(av.z, bv[2].y, acc[i][1]);
                acc[i][2] = fmaf(av.z, bv[2].z, acc[i][2]);
                acc[i][3] = fmaf(av.z, bv[2].w, acc[i][3]);
                acc[i][0] = fmaf(av.w, bv[3].x, acc[i][0]);
                acc[i][1] = fmaf(av.w, bv[3].y, acc[i][1]);
                acc[i][2] = fmaf(av.w, bv[3].z, acc[i][2]);
                acc[i][3] = fmaf(av.w, bv[3].w, acc[i][3]);
            }
        }
    }
    /* Join the k-lanes, R rows at a time, each result summed over y in
     * order (with one k-lane, this is the store). */
    constexpr int R = MB < 8 ? MB : 8;
    static_assert(MB % R == 0, "the rows are joined R at a time");
    __shared__ float4 joined[R][THIN_THREADS];
    const int cols = 4 * tx;
#pragma unroll
    for (int r0 = 0; r0 < MB; r0 += R) {
        if (r0 >= p.m)
            break;
#pragma unroll
        for (int ii = 0; ii < R; ii++)
            joined[ii][threadIdx.x] =
                make_float4(acc[r0 + ii][0], acc[r0 + ii][1], acc[r0 + ii][2], acc[r0 + ii][3]);
        __syncthreads();
        for (int e = threadIdx.x; e < R * cols; e += THIN_THREADS) {
            int ii = e / cols, col = e % cols;
            int row = r0 + ii, jj = blockIdx.x * cols + col;
            const float *lane = reinterpret_cast<const float *>(joined[ii]) + col;
            float sum = 0.0f;
            for (int yy = 0; yy < ty; yy++)
                sum += lane[yy * cols];
            if (row < p.m && jj < p.n)
                thin_store(p, (size_t)row * p.n + jj, sum);
        }
        __syncthreads();
    }
}

/* N <= NB: a thread per row of A, its N sums in registers; A and B come
 * through shared memory THIN_KC values of k at a time. */
template <int NB, bool VEC>
static __global__ void __launch_bounds__(THIN_THREADS)
thin_n_kernel(thin_args p)
{
    static_assert(THIN_ROWS == THIN_THREADS && THIN_KC == 32 && NB % 4 == 0,
                  "8 threads per row of the chunk, 32 rows per pass, float4 columns of B");
    constexpr int PASSES = THIN_ROWS * THIN_KC / 4 / THIN_THREADS;
    constexpr int BN = (NB * THIN_KC + THIN_THREADS - 1) / THIN_THREADS;
    __shared__ float as[THIN_ROWS][THIN_KC + 1];
    __shared__ __align__(16) float bs[THIN_KC][NB];
    const float *a = p.a + (long long)blockIdx.z * p.sa;
    const float *b = p.b + (long long)blockIdx.z * p.sb;
    const int r0 = blockIdx.x * THIN_ROWS;
    const int k0 = blockIdx.y * p.slice, k1 = min(p.k, k0 + p.slice);
    const int lq = threadIdx.x % 8, lr = threadIdx.x / 8;
    float4 na[PASSES];
    float nb[BN];
    auto fetch = [&](int c) {
        int kk = c + 4 * lq;
#pragma unroll
        for (int u = 0; u < PASSES; u++) {
            int row = r0 + lr + 32 * u;
            const float *ar = a + (size_t)(row < p.m ? row : 0) * p.k + kk;
            bool in = row < p.m;
            if (VEC) {
                na[u] = in && kk < k1 ? __ldg(reinterpret_cast<const float4 *>(ar))
                                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            } else {
                na[u].x = in && kk < k1 ? __ldg(ar) : 0.0f;
                na[u].y = in && kk + 1 < k1 ? __ldg(ar + 1) : 0.0f;
                na[u].z = in && kk + 2 < k1 ? __ldg(ar + 2) : 0.0f;
                na[u].w = in && kk + 3 < k1 ? __ldg(ar + 3) : 0.0f;
            }
        }
#pragma unroll
        for (int v = 0; v < BN; v++) {
            int e = threadIdx.x + v * THIN_THREADS, q = e / NB, jj = e % NB;
            nb[v] = e < NB * THIN_KC && c + q < k1 && jj < p.n
                        ? __ldg(b + (size_t)(c + q) * p.n + jj) : 0.0f;
        }
    };
    float acc[NB];
#pragma unroll
    for (int jj = 0; jj < NB; jj++)
        acc[jj] = 0.0f;
    if (k0 < k1)
        fetch(k0);
    for (int c = k0; c < k1; c += THIN_KC) {
        __syncthreads();
#pragma unroll
        for (int u = 0; u < PASSES; u++) {
            float *dst = &as[lr + 32 * u][4 * lq];
            dst[0] = na[u].x;
            dst[1] = na[u].y;
            dst[2] = na[u].z;
            dst[3] = na[u].w;
        }
#pragma unroll
        for (int v = 0; v < BN; v++) {
            int e = threadIdx.x + v * THIN_THREADS;
            if (e < NB * THIN_KC)
                bs[e / NB][e % NB] = nb[v];
        }
        __syncthreads();
        if (c + THIN_KC < k1)
            fetch(c + THIN_KC);
#pragma unroll
        for (int q = 0; q < THIN_KC; q++) {
            float s = as[threadIdx.x][q];
#pragma unroll
            for (int j4 = 0; j4 < NB / 4; j4++) {
                float4 bv = reinterpret_cast<const float4 *>(bs[q])[j4];
                acc[4 * j4] = fmaf(s, bv.x, acc[4 * j4]);
                acc[4 * j4 + 1] = fmaf(s, bv.y, acc[4 * j4 + 1]);
                acc[4 * j4 + 2] = fmaf(s, bv.z, acc[4 * j4 + 2]);
                acc[4 * j4 + 3] = fmaf(s, bv.w, acc[4 * j4 + 3]);
            }
        }
    }
    int row = r0 + threadIdx.x;
    if (row >= p.m)
        return;
#pragma unroll
    for (int jj = 0; jj < NB; jj++)
        if (jj < p.n)
            thin_store(p, (size_t)row * p.n + jj, acc[jj]);
}

/* The launch's shape: which path, its blocks along M or N, and the slices
 * of K. */
struct thin_plan {
    bool by_rows;               /* N <= 32 with M > 32: a thread per row of A */
    int bound;                  /* the template's bound of the thin side */
    int tx, blocks, slices, slice;
};

static int thin_bound(int side)
{
    return side <= 4 ? 4 : side <= 8 ? 8 : side <= 16 ? 16 : side <= 24 ? 24 : 32;
}

static struct thin_plan thin_plan_for(int m, int n, int k, int batch, int sm_count)
{
    struct thin_plan pl;
    int min_k, grain;
    pl.by_rows = m > THIN_MOST;
    pl.bound = thin_bound(pl.by_rows ? n : m);
    if (pl.by_rows) {
        pl.tx = 0;
        pl.blocks = ceil_div(m, THIN_ROWS);
        min_k = THIN_MIN_K;
        grain = THIN_KC;
    } else {
        int quads = ceil_div(n, 4);
        pl.tx = 1;
        while (pl.tx < quads && pl.tx < THIN_THREADS)
            pl.tx *= 2;
        /* Fewer columns a block, more k-lanes, while the blocks along N
         * are too few to give every SM one: each thread's chain of
         * dependent loads along K is what a small grid waits on. */
        while (pl.tx > 32 && (long)ceil_div(quads, pl.tx) * batch < sm_count)
            pl.tx /= 2;
        pl.blocks = ceil_div(quads, pl.tx);
        int lane_k = THIN_LANE_K * (THIN_THREADS / pl.tx);
        min_k = lane_k > THIN_MIN_K ? lane_k : THIN_MIN_K;
        grain = 4;
    }
    long blocks = (long)pl.blocks * batch;
    long want = (4L * sm_count + blocks - 1) / blocks;
    long most = k / min_k;
    if (want > most)
        want = most;
    if (want > THIN_MOST_SLICES)
        want = THIN_MOST_SLICES;
    if (want < 1)
        want = 1;
    long slice = (k + want - 1) / want;
    slice = (slice + grain - 1) / grain * grain;
    pl.slice = (int)(slice < 1 ? grain : slice);
    pl.slices = k > 0 ? (int)((k + pl.slice - 1) / pl.slice) : 1;
    return pl;
}

template <int NB>
static void thin_launch_bound(const struct thin_plan &pl, bool vec, dim3 grid,
                              cudaStream_t stream, const thin_args &args)
{
    if (pl.by_rows && vec)
        thin_n_kernel<NB, true><<<grid, THIN_THREADS, 0, stream>>>(args);
    else if (pl.by_rows)
        thin_n_kernel<NB, false><<<grid, THIN_THREADS, 0, stream>>>(args);
    else if (vec)
        thin_m_kernel<NB, true><<<grid, THIN_THREADS, 0, stream>>>(args);
    else
        thin_m_kernel<NB, false><<<grid, THIN_THREADS, 0, stream>>>(args);
}

static void thin_launch_kernel(const struct thin_plan &pl, bool vec, dim3 grid,
                               cudaStream_t stream, const thin_args &args)
{
    switch (pl.bound) {
    case 4: thin_launch_bound<4>(pl, vec, grid, stream, args); break;
    case 8: thin_launch_bound<8>(pl, vec, grid, stream, args); break;
    case 16: thin_launch_bound<16>(pl, vec, grid, stream, args); break;
    case 24: thin_launch_bound<24>(pl, vec, grid, stream, args); break;
    default: thin_launch_bound<32>(pl, vec, grid, stream, args); break;
    }
}

static bool aligned16(const void *ptr) { return (uintptr_t)ptr % 16 == 0; }

extern "C" int sgemm_thin_check(const struct gemm_problem *p, char *why, size_t n)
{
    if (p->m > THIN_MOST && p->n > THIN_MOST) {
        snprintf(why, n, "thin computes products with M <= %d or N <= %d (the thin side's "
                 "sums are kept in registers); this product is %lld x %lld", THIN_MOST,
                 THIN_MOST, (long long)p->m, (long long)p->n);
        return 0;
    }
    return 1;
}

/* The workspace's upper bound: the slice count grows with the SM count,
 * so it is taken for 256 SMs, more than any GPU has. */
extern "C" size_t sgemm_thin_workspace(const struct gemm_problem *p)
{
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1 ||
        (p->m > THIN_MOST && p->n > THIN_MOST) || p->k > 0x7fffffff)
        return 0;
    int batch = p->batch < THIN_MOST_Z ? (int)p->batch : THIN_MOST_Z;
    struct thin_plan pl = thin_plan_for((int)p->m, (int)p->n, (int)p->k, batch, 256);
    return pl.slices > 1 ? (size_t)pl.slices * batch * p->m * p->n * sizeof(float) : 0;
}

extern "C" cudaError_t sgemm_thin_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    if (p->m < 1 || p->n < 1 || p->batch < 1)
        return cudaSuccess;
    int sm_count = env->sm_count > 0 ? env->sm_count : 132;
    size_t count = (size_t)p->m * p->n;
    for (int b0 = 0; b0 < p->batch; b0 += THIN_MOST_Z) {
        int batch = p->batch - b0 < THIN_MOST_Z ? p->batch - b0 : THIN_MOST_Z;
        float *c = p->c + (long long)b0 * p->stride_c;
        cudaError_t err;
        if (p->k == 0) {   /* C = beta C: an empty sum, 0 whatever alpha is */
            err = gemm_split_reduce(c, p->stride_c, c, count, batch, 0, 0.0f, p->beta,
                                    env->stream);
            if (err != cudaSuccess)
                return err;
            continue;
        }
        struct thin_plan pl = thin_plan_for(p->m, p->n, p->k, batch, sm_count);
        thin_args args;
        args.m = p->m;
        args.n = p->n;
        args.k = p->k;
        args.slice = pl.slice;
        args.tx = pl.tx;
        args.batch = batch;
        args.a = p->a + (long long)b0 * p->stride_a;
        args.b = p->b + (long long)b0 * p->stride_b;
        args.sa = p->stride_a;
        args.sb = p->stride_b;
        args.sc = p->stride_c;
        args.alpha = p->alpha;
        args.beta = p->beta;
        /* 16-byte loads: rows of 16-byte units from 16-byte aligned starts
         * in every product. */
        bool stack = batch > 1;
        bool vec = p->k % 4 == 0 && aligned16(args.a) && (!stack || p->stride_a % 4 == 0);
        if (!pl.by_rows)
            vec = vec && p->n % 4 == 0 && aligned16(args.b) && (!stack || p->stride_b % 4 == 0);
        dim3 grid((unsigned)pl.blocks, (unsigned)pl.slices, (unsigned)batch);
        float *partial = NULL;
        if (pl.slices > 1) {
            err = cudaMallocAsync((void **)&partial,
                                  (size_t)pl.slices * batch * count * sizeof(float), env->stream);
            if (err != cudaSuccess)
                return err;
            args.out = partial;
        } else {
            args.out = c;
        }
        thin_launch_kernel(pl, vec, grid, env->stream, args);
        err = launch_result();
        if (err == cudaSuccess && partial)
            err = gemm_split_reduce(c, p->stride_c, partial, count, batch, pl.slices, p->alpha,
                                    p->beta, env->stream);
        if (partial) {
            cudaError_t free_err = cudaFreeAsync(partial, env->stream);
            if (err == cudaSuccess)
                err = free_err;
        }
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" cudaError_t sgemm_thin_attr(struct kernel_attr *out)
{
    return kernel_attr_of(thin_m_kernel<32, true>, THIN_THREADS, 0, out);
}
