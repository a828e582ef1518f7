/* tiny: float32 products too small to fill the GPU with the other float32
 * stages' tiles (a few thousand outputs, a K of tens to a few thousand),
 * FP32 FFMA on the CUDA cores; mma_tiny's plan
 * (kernels/hgemm/hgemm_12_mma_tiny.cu) without the tensor cores.
 *
 * A product of 58 x 43 x 363 is one of the tiled stages' 128 x 128 tiles,
 * or 4 of smem's 32 x 32, whose 1024 threads each walk the whole of K a
 * tile of 32 values at a time: 12 rounds of loads from memory, each waited
 * for before its 32 multiply-adds, the SMs all but idle.  The product
 * waits on each block's chain of steps, so this stage makes the chains
 * short:
 *
 *   - a block owns 32 x 32 of C and its 8 warps split K among them, warp w
 *     taking the steps of 16 values w, w + 8, w + 16, ...; each warp holds
 *     the whole tile, 4 x 8 outputs a lane (lane l: rows 4 (l / 4) ..,
 *     columns 8 (l % 4) ..);
 *   - a step's operands come from global memory into registers a step
 *     ahead, coalesced (A: half a warp along 16 values of a row, B: a warp
 *     along 32 values of a row of B), and through shared memory of the
 *     warp's own (A turned to k-major, rows of 36 floats so that the
 *     stores of a warp fall on 16 banks twice), one __syncwarp before and
 *     after, no block barrier: each value of k is then one 16-byte load
 *     of A's 4 values and two of B's 8 for 32 FFMA;
 *   - the 8 partial tiles meet in shared memory (the staging's bytes, 8 x
 *     32 rows of 36 floats), and each thread sums 4 outputs of a column
 *     over the warps in warp order (the same sum every run) and stores
 *     alpha sum + beta C under a bounds check; a warp's store is a row's
 *     32 adjacent floats.
 * Values outside A or B load as zeros, so any M, N and K runs, at any
 * alignment (4-byte loads); a stack of products takes blockIdx.y, in
 * launches of at most 65535.  A K so long that 32 x 32 tiles leave the
 * SMs idle is the split stages' (auto's model weighs them: the geometry's
 * fill of 128 values of k is one step of each of the 8 warps).
 *
 * gemmcli's own.
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel tiny --verify --repeat 20 */
#include "kernels/tiny.cuh"

enum {
    STINY_WARPS = 8,                  /* warps a block, each a share of K */
    STINY_THREADS = STINY_WARPS * 32,
    STINY_STEP = 16,                  /* values of k a warp's step */
    STINY_ROW = TINY_BN + 4,          /* floats a row of A's staging and of a partial tile */
    STINY_A = STINY_STEP * STINY_ROW, /* a warp's staging: A (k-major), then B */
    STINY_STAGE = STINY_A + STINY_STEP * TINY_BN,
    STINY_PART = TINY_BM * STINY_ROW, /* a warp's partial tile */
};
static_assert(STINY_STAGE <= STINY_PART, "a warp's staging fits in its partial tile");

/* One step's values of a lane: A's row 2i + h at k + kk (h = lane / 16,
 * kk = lane % 16), B's row k + i at the lane's column. */
struct stiny_regs {
    float a[STINY_STEP];
    float b[STINY_STEP];
};

static __device__ __forceinline__ void stiny_load(stiny_regs &v, const float *__restrict__ a_lane,
                                                  const float *__restrict__ b_lane, bool a_in,
                                                  bool b_in, int rows_left, int lda, int ldb,
                                                  int k, int kk, int k_end)
{
    const bool a_k = a_in && k + kk < k_end;
#pragma unroll
    for (int i = 0; i < STINY_STEP; i++) {
        v.a[i] = a_k && 2 * i < rows_left ? __ldg(a_lane + (long long)2 * i * lda + k) : 0.0f;
        v.b[i] = b_in && k + i < k_end ? __ldg(b_lane + (long long)(k + i) * ldb) : 0.0f;
    }
}

static __global__ void __launch_bounds__(STINY_THREADS, 2) sgemm_tiny_kernel(tiny_args<sgemm_problem> args)
{
    __shared__ __align__(16) float part[STINY_WARPS][TINY_BM][STINY_ROW];
    float *const shared = &part[0][0][0];
    const struct sgemm_problem &p = args.p;
    const int prod = args.batch0 + blockIdx.y;
    const float *a = p.a + prod * p.stride_a;
    const float *b = p.b + prod * p.stride_b;
    float *c = p.c + prod * p.stride_c;
    const int row0 = (int)(blockIdx.x / args.tiles_n) * TINY_BM;
    const int col0 = (int)(blockIdx.x % args.tiles_n) * TINY_BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int ty = lane / 4, tx = lane % 4;      /* the lane's outputs */
    const int h = lane / 16, kk = lane % 16;     /* the lane's loads of A */

    float acc[4][8];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[i][j] = 0.0f;

    /* The lane's first values: A's row row0 + h at kk, B's column col0 + lane. */
    const int rows_left = p.m - row0 - h;
    const bool a_in = rows_left > 0, b_in = col0 + lane < p.n;
    const float *a_lane = a + (a_in ? (long long)(row0 + h) * p.k + kk : 0);
    const float *b_lane = b + (b_in ? col0 + lane : 0);
    float *stage = shared + warp * STINY_STAGE;

    const int steps = (p.k + STINY_STEP - 1) / STINY_STEP;
    stiny_regs v;
    if (warp < steps)
        stiny_load(v, a_lane, b_lane, a_in, b_in, rows_left, p.k, p.n, STINY_STEP * warp,
                   kk, p.k);
    for (int s = warp; s < steps; s += STINY_WARPS) {
        __syncwarp();   /* the step before has read the staging */
#pragma unroll
        for (int i = 0; i < STINY_STEP; i++) {
            stage[kk * STINY_ROW + 2 * i + h] = v.a[i];
            stage[STINY_A + i * TINY_BN + lane] = v.b[i];
        }
        __syncwarp();
        if (s + STINY_WARPS < steps)
            stiny_load(v, a_lane, b_lane, a_in, b_in, rows_left, p.k, p.n,
                       STINY_STEP * (s + STINY_WARPS), kk, p.k);
#pragma unroll
        for (int q = 0; q < STINY_STEP; q++) {
            const float4 av = *(const float4 *)&stage[q * STINY_ROW + 4 * ty];
            const float4 b0 = *(const float4 *)&stage[STINY_A + q * TINY_BN + 8 * tx];
            const float4 b1 = *(const float4 *)&stage[STINY_A + q * TINY_BN + 8 * tx + 4];
            const float ar[4] = { av.x, av.y, av.z, av.w };
            const float br[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
        }
    }

    /* The warps' tiles into shared memory, over the staging once every
     * warp is done with its own. */
    __syncthreads();
    float *mine = shared + warp * STINY_PART;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float *row = mine + (4 * ty + i) * STINY_ROW + 8 * tx;
        *(float4 *)row = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *(float4 *)(row + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
    __syncthreads();

    tiny_sum_store<STINY_WARPS>(part, p, c, row0, col0, warp, lane);
}

extern "C" cudaError_t sgemm_tiny_launch(const struct sgemm_problem *p,
                                         const struct launch_env *env)
{
    return tiny_launch(sgemm_tiny_kernel, p, STINY_THREADS, env->stream);
}

extern "C" cudaError_t sgemm_tiny_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_tiny_kernel, STINY_THREADS, 0, out);
}
