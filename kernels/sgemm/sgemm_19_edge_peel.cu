/* edge_peel: stream_k over the whole 128x128 tiles of C only, on 16-byte
 * rows, and the few rows and columns left over at its bottom and right
 * edges computed apart by a kernel made for thin strips.
 *
 * Against stream_k: when M or N is a few past a multiple of the tile, the
 * last row or column of tiles costs as much as any other and computes
 * almost nothing: at 4097^3 the 33 x 33 tiles hold 6% more FFMAs than
 * 4097^2 results need.  A strip at most EDGE_MAX wide is a matrix-vector
 * product in disguise: its cost is one read of A (right strip) or of B
 * (bottom strip), memory-bound, much less than a tile row of FFMAs.  So
 * where both leftovers are at most EDGE_MAX and the interior fills a wave,
 * the interior runs as stream_k over floor(M/128) x floor(N/128) tiles and
 * one launch computes both strips; otherwise this is stream_k.  A stack of
 * products is always stream_k over the stack (one plan for all the
 * products' tiles): the strips and copies are made for one large matrix.
 *
 * Where N is not a multiple of 4, the rows of B and C are not 16-byte
 * aligned and the tile kernel falls back to 4-byte copies and stores,
 * which cost the interior of 4097^3 more than the copies below (README,
 * "Measurements behind the stages").  So B is first copied to rows of a
 * multiple of 4 floats, the interior of C is computed in such rows of a
 * workspace and copied into place after; each copy is one pass over 64 MiB
 * at 4097^3.
 *
 * The strip kernel has two kinds of block.  A bottom block owns 32 columns
 * of the last R rows: lane l reads B[k][col] (coalesced) and every warp
 * covers its own range of k; the warps' partial sums meet in shared memory
 * in a fixed order.  A right block owns one row of A per warp and the last
 * R columns: the block stages B[k0:k0+EDGE_KC][n0:n0+R] in shared memory,
 * transposed, and the lanes walk the row of A (coalesced), reduced with
 * shuffles at the end.  No atomics: the result does not depend on timing.
 *
 * Follows no published write-up: gemmcli's own, on Stream-K
 * (sgemm_18_stream_k.cu).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel edge_peel --verify --repeat 20 */
#include "kernels/sgemm/sgemm_pipeline.cuh"

enum {
    EDGE_MAX = 8,             /* widest strip computed apart */
    EDGE_WARPS = 16,
    EDGE_THREADS = EDGE_WARPS * 32,
    EDGE_KC = 512,            /* k per staged chunk of B in a right block */
    EDGE_UNROLL = 4,
    COPY_THREADS = 256,
    COPY_BLOCKS_PER_SM = 8,
};

static_assert(EDGE_WARPS * 32 * EDGE_MAX == EDGE_MAX * EDGE_KC,
              "both kinds of block use the same shared array");

static __device__ __forceinline__ float edge_out(const struct sgemm_problem &p, size_t at, float sum)
{
    return p.beta == 0.0f ? p.alpha * sum : p.alpha * sum + p.beta * p.c[at];
}

/* Rows [m0, p.m) x all columns, for the first bottom_blocks blocks; rows
 * [0, m0) x columns [n0, p.n) for the others, EDGE_WARPS rows each. */
static __global__ void __launch_bounds__(EDGE_THREADS)
sgemm_edge_strips(const struct sgemm_problem p, int m0, int n0, int bottom_blocks)
{
    __shared__ float shared[EDGE_MAX * EDGE_KC];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float acc[EDGE_MAX];
#pragma unroll
    for (int r = 0; r < EDGE_MAX; r++)
        acc[r] = 0.0f;

    if ((int)blockIdx.x < bottom_blocks) {
        int rows = p.m - m0;
        int col = blockIdx.x * 32 + lane;
        int per_warp = ceil_div(p.k, EDGE_WARPS);
        int kbeg = warp * per_warp, kend = min(p.k, kbeg + per_warp);
        const float *a = p.a + (size_t)m0 * p.k;
        if (col < p.n) {
#pragma unroll EDGE_UNROLL
            for (int k = kbeg; k < kend; k++) {
                float b = __ldg(p.b + (size_t)k * p.n + col);
#pragma unroll
                for (int r = 0; r < EDGE_MAX; r++)
                    if (r < rows)
                        acc[r] += __ldg(a + (size_t)r * p.k + k) * b;
            }
        }
        /* shared[warp][r][lane], summed over warps by thread (r, lane). */
#pragma unroll
        for (int r = 0; r < EDGE_MAX; r++)
            shared[(warp * EDGE_MAX + r) * 32 + lane] = acc[r];
        __syncthreads();
        int r = threadIdx.x / 32;
        col = blockIdx.x * 32 + lane;
        if (r < rows && col < p.n) {
            float sum = 0.0f;
            for (int w = 0; w < EDGE_WARPS; w++)
                sum += shared[(w * EDGE_MAX + r) * 32 + lane];
            size_t at = (size_t)(m0 + r) * p.n + col;
            p.c[at] = edge_out(p, at, sum);
        }
        return;
    }

    int cols = p.n - n0;
    int row = (blockIdx.x - bottom_blocks) * EDGE_WARPS + warp;
    const float *a = p.a + (size_t)row * p.k;
    for (int k0 = 0; k0 < p.k; k0 += EDGE_KC) {
        int len = min(EDGE_KC, p.k - k0);
        /* shared[c][kk] = B[k0 + kk][n0 + c] */
        for (int i = threadIdx.x; i < len * cols; i += EDGE_THREADS) {
            int kk = i / cols, c = i % cols;
            shared[c * EDGE_KC + kk] = __ldg(p.b + (size_t)(k0 + kk) * p.n + n0 + c);
        }
        __syncthreads();
        if (row < m0) {
#pragma unroll EDGE_UNROLL
            for (int kk = lane; kk < len; kk += 32) {
                float x = __ldg(a + k0 + kk);
#pragma unroll
                for (int c = 0; c < EDGE_MAX; c++)
                    if (c < cols)
                        acc[c] += x * shared[c * EDGE_KC + kk];
            }
        }
        __syncthreads();
    }
    if (row >= m0)
        return;
#pragma unroll
    for (int c = 0; c < EDGE_MAX; c++)
#pragma unroll
        for (int off = 16; off > 0; off /= 2)
            acc[c] += __shfl_xor_sync(0xffffffffu, acc[c], off);
    /* Every lane now holds every sum; lane c writes column n0 + c. */
    float mine = acc[0];
#pragma unroll
    for (int c = 1; c < EDGE_MAX; c++)
        if (lane == c)
            mine = acc[c];
    if (lane < cols) {
        size_t at = (size_t)row * p.n + n0 + lane;
        p.c[at] = edge_out(p, at, mine);
    }
}

/* dst[r][j] = src[r][j] for j < cols, 0 for cols <= j < width; r < rows. */
static __global__ void sgemm_copy_rows(const float *__restrict__ src, int lds, float *__restrict__ dst,
                                       int ldd, int rows, int cols, int width)
{
    for (int r = blockIdx.x; r < rows; r += gridDim.x)
        for (int j = threadIdx.x; j < width; j += blockDim.x)
            dst[(size_t)r * ldd + j] = j < cols ? __ldg(src + (size_t)r * lds + j) : 0.0f;
}

static void copy_rows(const float *src, int lds, float *dst, int ldd, int rows, int cols, int width,
                      int sms, cudaStream_t stream)
{
    if (rows > 0)
        sgemm_copy_rows<<<min(rows, COPY_BLOCKS_PER_SM * sms), COPY_THREADS, 0, stream>>>(
            src, lds, dst, ldd, rows, cols, width);
}

extern "C" cudaError_t sgemm_edge_peel_launch(const struct sgemm_problem *p,
                                              const struct launch_env *env)
{
    if (pipe_batch(p) > 1)
        return sgemm_stream_k_launch(p, env);
    int tiles_m = p->m / SGEMM_WIDE_BM, tiles_n = p->n / SGEMM_WIDE_BN;
    int m0 = tiles_m * SGEMM_WIDE_BM, n0 = tiles_n * SGEMM_WIDE_BN;
    long slots;
    cudaError_t err = sgemm_wide_slots(env, &slots);
    if (err != cudaSuccess)
        return err;
    int sms = env->sm_count > 0 ? env->sm_count : 132;
    bool peel = (m0 < p->m || n0 < p->n) && p->m - m0 <= EDGE_MAX && p->n - n0 <= EDGE_MAX &&
                (long)tiles_m * tiles_n >= slots;
    if (!peel)
        return sgemm_stream_k_launch(p, env);

    /* The interior, on rows of a multiple of 4 floats: where C's and B's
     * rows are not 16-byte aligned, B is copied to such rows and the
     * interior of C computed in such rows, then copied into place. */
    struct sgemm_problem in = *p;
    in.m = m0;
    float *work = NULL;
    int ld = (p->n + 3) / 4 * 4;
    size_t b_size = (size_t)p->k * ld;
    if (!pipe_vec_ok(p)) {
        err = cudaMallocAsync((void **)&work, (b_size + (size_t)m0 * ld) * sizeof(float),
                              env->stream);
        if (err == cudaErrorMemoryAllocation) {
            cudaGetLastError();   /* no room: the interior reads and writes 4 bytes at a time */
            work = NULL;
        } else if (err != cudaSuccess) {
            return err;
        } else {
            in.b = work;
            in.c = work + b_size;
            in.n = ld;
            copy_rows(p->b, p->n, work, ld, p->k, p->n, ld, sms, env->stream);
            if (p->beta != 0.0f)
                copy_rows(p->c, p->n, in.c, ld, m0, n0, n0, sms, env->stream);
        }
    }
    int bottom_blocks = m0 < p->m ? ceil_div(p->n, 32) : 0;
    int right_blocks = n0 < p->n ? ceil_div(m0, EDGE_WARPS) : 0;
    sgemm_edge_strips<<<bottom_blocks + right_blocks, EDGE_THREADS, 0, env->stream>>>(*p, m0, n0,
                                                                                  bottom_blocks);
    err = launch_result();
    if (err == cudaSuccess)
        err = sgemm_stream_k_cover(&in, env, tiles_m, tiles_n);
    if (work) {
        if (err == cudaSuccess) {
            copy_rows(in.c, ld, p->c, p->n, m0, n0, n0, sms, env->stream);
            err = launch_result();
        }
        cudaError_t freed = cudaFreeAsync(work, env->stream);
        if (err == cudaSuccess)
            err = freed;
    }
    return err;
}

extern "C" cudaError_t sgemm_edge_peel_attr(struct kernel_attr *out)
{
    return sgemm_thread_8x16_attr(out);
}

/* The workspace's upper bound for the registry: B and the interior of C on
 * 16-byte rows, when rows of N floats are not. */
extern "C" size_t sgemm_edge_peel_workspace(const struct gemm_problem *g)
{
    if (g->batch > 1 || g->n % 4 == 0)
        return 0;
    size_t ld = (size_t)(g->n + 3) / 4 * 4;
    return ((size_t)g->k + (size_t)g->m) * ld * sizeof(float);
}
