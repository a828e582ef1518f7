/* thread_8x16: swizzle's cp.async pipeline with 64x64 warp tiles, 8x16
 * results per thread, 128 threads per 128x128 block; and narrow_256x64, a
 * 256x64 variant for narrow N.
 *
 * Against swizzle (32x64 warp tiles, 8x8 per lane, 256 threads): each lane
 * multiplies 8 values of A by 16 of B per step of k, so 6 LDS.128 feed 128
 * FFMA where 4 fed 64, and the issue slots that loads, address arithmetic
 * and copies take shrink with them: the SASS of the main loop holds about
 * 2048 FFMA in 2254 instructions per 16 steps of k (90.9%), swizzle's 1024
 * in 1171 (87.4%).  The lanes of a warp form 8 rows x 4 columns; lane
 * (r, c) holds rows 4r..4r+3 and 32+4r..32+4r+3 and columns 4c + 16j
 * (j < 4) of its warp's tile, so an LDS.128 of A covers 8 adjacent float4s
 * and one of B 4 adjacent float4s: one pass each.  128 accumulators per
 * thread take 232 registers, no spills; two blocks of 128 threads share an
 * SM, 8 warps.  The copies are sgemm_pipeline.cuh's pipe_loader, 4 stages
 * of BK 16.  narrow_256x64 stacks 4 warps vertically: at N = 64 the
 * 128-wide tile computes half zeros.
 *
 * The kernel also walks the stream-K plan of sgemm_18_stream_k.cu: blocks
 * past plan.dp_tiles share out the k-steps of the remaining tiles and add
 * their sums into C atomically.  Here every tile is whole.
 *
 * A stack of products is one launch: the tiles are numbered product by
 * product (tile t is tile t mod T, in band order, of product t / T, with T
 * tiles per product), so one grid, and stream_k's shared last wave, spans
 * the whole stack.  That is a separate instantiation (BATCHED): a single
 * product runs the same instructions as it would without stacks.  The
 * batched kernel takes 236 registers (narrow_256x64 251), no spills, the
 * same blocks per SM.
 *
 * The tile counts come from the plan rather than from M and N: ptxas then
 * orders the same instructions with fewer registers (232 against 238),
 * which measured faster.  The README ("Measurements behind the stages")
 * has that and the tile shapes tried and dropped.
 *
 * Follows no published write-up: gemmcli's own step past the write-ups'
 * 8x8 thread tiles.
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel thread_8x16 --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel narrow_256x64 --verify --repeat 20 */
#include "kernels/sgemm/sgemm_pipeline.cuh"

/* Sums so small that C's subnormal part could matter against them: below
 * 2^-102, half an ulp of a sum is under the smallest normal, 2^-126. */
static __device__ __forceinline__ bool sgemm_tiny(float v)
{
    return v != 0.0f && fabsf(v) < 0x1p-102f;
}

/* c[e] += v[e] for e < count, atomically, by compare-and-swap, which keeps
 * subnormals; out of line, so that the rare path costs the main loop no
 * code. */
static __device__ __noinline__ void sgemm_atomic_add_cas(float *c, float4 v, int count)
{
    const float w[4] = { v.x, v.y, v.z, v.w };
    for (int e = 0; e < count; e++) {
        unsigned *word = reinterpret_cast<unsigned *>(c + e);
        unsigned seen = *word, want;
        do {
            want = seen;
            seen = atomicCAS(word, want, __float_as_uint(__uint_as_float(want) + w[e]));
        } while (seen != want);
    }
}

template <int WARPS_M, int WARPS_N, int BK, int STAGES>
struct wide_cfg {
    static constexpr int bm = WARPS_M * 64, bn = WARPS_N * 64, bk = BK, stages = STAGES;
    static constexpr int threads = WARPS_M * WARPS_N * 32, warps = WARPS_M * WARPS_N;
    /* 256 threads per SM at up to 255 registers each. */
    static constexpr int min_blocks = 256 / threads > 0 ? 256 / threads : 1;
    /* The copy layout of sgemm_pipeline.cuh's pipe_loader. */
    static constexpr int a_ld = bm + 4;
    static constexpr int a_floats = BK * a_ld, b_floats = BK * bn;
    static constexpr size_t smem = (size_t)STAGES * (a_floats + b_floats) * sizeof(float);
    static constexpr int a_copies = bm * BK / threads;
    static constexpr int a_row_step = 32 * warps / BK;
    /* A's copies two rows at a time (pipe_copy4x2): edge_peel 4096^3 2.91
     * -> 2.84 ms, 8192^3 22.97 -> 22.37, 4097^3 3.22 -> 3.11, stream_k
     * 3001 x 2999 x 1003 0.482 -> 0.459 (`gemmcli mul --kernel K --repeat
     * 20`, NVIDIA H100, 2026-11-27; with the fragments double-buffered
     * besides, 2.92, 22.59, 3.19 and 0.458-0.466). */
    static constexpr bool a_pairs = true;
    static constexpr int b_copies16 = BK * bn / 4 / threads;
    static constexpr int b_k_step16 = threads / (bn / 4);
    static constexpr int b_cols4 = 1;
    static constexpr int b_copies4 = BK * bn / threads;
    static constexpr int b_k_step4 = threads / bn;
    static_assert(BK % 8 == 0 && warps % (BK / 8) == 0, "each warp copies one group of 8 values of k of A");
    static_assert(bm * BK % threads == 0 && a_copies <= 32, "A copies split evenly, one bit each");
    static_assert(threads % bn == 0 && BK * bn % threads == 0, "B copies split evenly over threads");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
};

typedef wide_cfg<2, 2, 16, 4> thread_8x16_cfg;
typedef wide_cfg<4, 1, 16, 4> narrow_256x64_cfg;
static_assert(thread_8x16_cfg::bm == SGEMM_WIDE_BM && thread_8x16_cfg::bn == SGEMM_WIDE_BN &&
              thread_8x16_cfg::bk == SGEMM_WIDE_BK, "sgemm.h states this tile");

struct wide_args {
    struct sgemm_problem p;
    struct sgemm_sk_plan plan;
};

/* acc += the block's tile of A[:, kbeg:kend] * B[kbeg:kend, :]; kbeg is a
 * multiple of BK.  Leaves shared memory free for the next call. */
template <class C, bool VEC>
static __device__ __forceinline__ void wide_mainloop(const struct sgemm_problem &p, int bm0, int bn0,
                                                     int kbeg, int kend, float *smem, int m0, int n0,
                                                     float (&acc)[8][16])
{
    float *as0 = smem;
    float *bs0 = smem + C::stages * C::a_floats;
    int tiles = ceil_div(kend - kbeg, C::bk);
    pipe_loader<C, VEC> loader(p, bm0, bn0, kbeg, kend);
    size_t b_tile_step = (size_t)C::bk * p.n;
#pragma unroll
    for (int s = 0; s < C::stages - 1; s++) {
        if (s < tiles)
            loader.load(as0 + s * C::a_floats, bs0 + s * C::b_floats, b_tile_step);
        pipe_commit();
    }
    for (int t = 0; t < tiles; t++) {
        pipe_wait<C::stages - 2>();
        __syncthreads();
        int next = t + C::stages - 1;
        if (next < tiles) {
            int s = next % C::stages;
            loader.load(as0 + s * C::a_floats, bs0 + s * C::b_floats, b_tile_step);
        }
        pipe_commit();
        const float *as = as0 + (t % C::stages) * C::a_floats;
        const float *bs = bs0 + (t % C::stages) * C::b_floats;
#pragma unroll
        for (int k = 0; k < C::bk; k++) {
            float ra[8], rb[16];
            *reinterpret_cast<float4 *>(&ra[0]) = *reinterpret_cast<const float4 *>(&as[k * C::a_ld + m0]);
            *reinterpret_cast<float4 *>(&ra[4]) = *reinterpret_cast<const float4 *>(&as[k * C::a_ld + m0 + 32]);
#pragma unroll
            for (int q = 0; q < 4; q++)
                *reinterpret_cast<float4 *>(&rb[4 * q]) =
                    *reinterpret_cast<const float4 *>(&bs[k * C::bn + n0 + 16 * q]);
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 16; j++)
                    acc[i][j] += ra[i] * rb[j];
        }
    }
    pipe_wait<0>();
    __syncthreads();
}

/* The thread's 8 x 16 sums, times `scale`, into the block's tile in shared
 * memory at `cs` (rows of C::bn floats; the ring, free after
 * wide_mainloop). */
template <class C>
static __device__ __forceinline__ void wide_stage(const float (&acc)[8][16], float *cs, int m0,
                                                  int n0, float scale)
{
    static_assert((size_t)C::bm * C::bn * sizeof(float) <= C::smem, "the ring holds the tile");
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int row = m0 + (i / 4) * 32 + i % 4;
#pragma unroll
        for (int q = 0; q < 4; q++)
            *reinterpret_cast<float4 *>(&cs[row * C::bn + n0 + 16 * q]) =
                make_float4(scale * acc[i][4 * q], scale * acc[i][4 * q + 1],
                            scale * acc[i][4 * q + 2], scale * acc[i][4 * q + 3]);
    }
}

/* A stream-K run's share of the block's tile, staged at `cs` (alpha
 * applied), added into p.c at (bm0, bn0): each warp its band of rows, a
 * row at a time, lane l at columns l, l + 32, ...: a warp's atomics cover
 * 128 contiguous bytes, where from the registers four scalar atomics of a
 * lane go to addresses 16 bytes apart.  A sum below 2^-102 by
 * compare-and-swap, as above. */
template <class C>
static __device__ __forceinline__ void wide_add_rows(const struct sgemm_problem &p,
                                                     const float *cs, int bm0, int bn0)
{
    constexpr int per_row = C::bn / 32, band = C::bm / C::warps;
    const int lane = threadIdx.x % 32, first = threadIdx.x / 32 * band;
    const int rows = p.m - bm0, cols = p.n - bn0;
    float *c = p.c + (size_t)bm0 * p.n + bn0;
    for (int r = first; r < first + band && r < rows; r++)
#pragma unroll
        for (int q = 0; q < per_row; q++) {
            int col = 32 * q + lane;
            if (col >= cols)
                continue;
            float v = cs[r * C::bn + col];
            float *d = c + (size_t)r * p.n + col;
            if (sgemm_tiny(v))
                sgemm_atomic_add_cas(d, make_float4(v, 0.0f, 0.0f, 0.0f), 1);
            else
                atomicAdd(d, v);
        }
}

template <class C, bool VEC, bool BATCHED>
static __global__ void __launch_bounds__(C::threads, C::min_blocks) sgemm_wide_kernel(const struct wide_args args)
{
    extern __shared__ __align__(16) float wide_smem[];
    const struct sgemm_problem &p = args.p;
    int tiles_m = args.plan.tiles_m, tiles_n = args.plan.tiles_n;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int m0 = warp / (C::bn / 64) * 64 + lane / 4 * 4;
    int n0 = warp % (C::bn / 64) * 64 + lane % 4 * 4;
    int kt = ceil_div(p.k, C::bk);

    /* A whole tile, or the pieces [ib, ie) of the k-steps of the stream-K
     * tiles laid end to end (kt steps each). */
    bool whole = (int)blockIdx.x < args.plan.dp_tiles;
    long long worker = (long long)blockIdx.x - args.plan.dp_tiles;
    long long sk_steps = ((long long)tiles_m * tiles_n * (BATCHED ? p.batch : 1) - args.plan.dp_tiles) * kt;
    long long ib = whole ? 0 : worker * sk_steps / args.plan.sk_workers;
    long long ie = whole ? kt : (worker + 1) * sk_steps / args.plan.sk_workers;
    while (ib < ie) {
        int sk_tile = (int)(ib / kt);
        int k0 = (int)(ib % kt);
        int k1 = (int)min((long long)kt, ie - (long long)sk_tile * kt);
        int tile = whole ? (int)blockIdx.x : args.plan.dp_tiles + sk_tile;
        /* Batch-major: product tile / T, then its tile tile mod T. */
        const struct sgemm_problem prod = BATCHED ? pipe_product(p, tile / (tiles_m * tiles_n)) : p;
        if (BATCHED)
            tile %= tiles_m * tiles_n;
        int tm, tn;
        pipe_tile_of(tile, tiles_m, tiles_n, SGEMM_WIDE_GROUP, &tm, &tn);
        int bm0 = tm * C::bm, bn0 = tn * C::bn;
        float acc[8][16];
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int j = 0; j < 16; j++)
                acc[i][j] = 0.0f;
        wide_mainloop<C, VEC>(prod, bm0, bn0, k0 * C::bk, min(p.k, k1 * C::bk), wide_smem, m0, n0, acc);
        if (whole) {
            if constexpr (VEC) {
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    int row = bm0 + m0 + (i / 4) * 32 + i % 4;
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        sgemm_store4<VEC>(prod, row, bn0 + n0 + 16 * q,
                                          make_float4(acc[i][4 * q], acc[i][4 * q + 1],
                                                      acc[i][4 * q + 2], acc[i][4 * q + 3]));
                }
            } else {
                /* Rows of C not in float4s: the tile through the free ring,
                 * a row at a time (pipe_store_rows). */
                wide_stage<C>(acc, wide_smem, m0, n0, 1.0f);
                __syncthreads();
                pipe_store_rows<C>(prod, wide_smem, bm0, bn0);
            }
            return;
        }
        /* Other runs add into the same elements: atomically, onto the
         * beta * C that sgemm_18_stream_k.cu's first kernel left.  The
         * hardware's float atomic add flushes subnormals to zero, which
         * lost a third of C's norm on operands near 1e-39; so a sum below
         * 2^-102, where a subnormal C would count, goes in by
         * compare-and-swap instead (slower, and only there: with every
         * sum on compare-and-swap, stream_k ran at a third of its speed
         * at 1024^3).  Above it, a flushed subnormal is below half an ulp
         * of the sum.  Where rows of C are not float4s, the tile goes through
         * the free ring and its rows are added a row at a time
         * (wide_add_rows), as the whole tiles' are stored. */
        if constexpr (VEC) {
#pragma unroll
            for (int i = 0; i < 8; i++) {
                int row = bm0 + m0 + (i / 4) * 32 + i % 4;
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    int col = bn0 + n0 + 16 * q;
                    if (row >= p.m || col >= p.n)
                        continue;
                    float *c = prod.c + (size_t)row * p.n + col;
                    float4 v = make_float4(p.alpha * acc[i][4 * q], p.alpha * acc[i][4 * q + 1],
                                           p.alpha * acc[i][4 * q + 2], p.alpha * acc[i][4 * q + 3]);
                    bool tiny = sgemm_tiny(v.x) || sgemm_tiny(v.y) || sgemm_tiny(v.z) ||
                                sgemm_tiny(v.w);
                    if (tiny)
                        sgemm_atomic_add_cas(c, v, p.n - col < 4 ? p.n - col : 4);
                    else
                        atomicAdd(reinterpret_cast<float4 *>(c), v);
                }
            }
        } else {
            wide_stage<C>(acc, wide_smem, m0, n0, p.alpha);
            __syncthreads();
            wide_add_rows<C>(prod, wide_smem, bm0, bn0);
            /* Every warp is done with the ring before the next run's copies. */
            __syncthreads();
        }
        ib = (long long)sk_tile * kt + k1;
    }
}

template <class C, bool VEC, bool BATCHED>
static cudaError_t wide_launch(const struct wide_args &args, long blocks, cudaStream_t stream)
{
    cudaError_t err = cudaFuncSetAttribute(sgemm_wide_kernel<C, VEC, BATCHED>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem);
    if (err != cudaSuccess)
        return err;
    sgemm_wide_kernel<C, VEC, BATCHED><<<(unsigned)blocks, C::threads, C::smem, stream>>>(args);
    return launch_result();
}

/* The plan's tile counts are per product; the batched kernel reads the
 * number of products from p. */
template <class C>
static cudaError_t wide_run(const struct sgemm_problem *p, const struct launch_env *env,
                            const struct sgemm_sk_plan *plan)
{
    struct wide_args args = { *p, *plan };
    long blocks = (long)plan->dp_tiles + plan->sk_workers;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    bool vec = pipe_vec_ok(p);
    if (pipe_batch(p) > 1)
        return vec ? wide_launch<C, true, true>(args, blocks, env->stream)
                   : wide_launch<C, false, true>(args, blocks, env->stream);
    return vec ? wide_launch<C, true, false>(args, blocks, env->stream)
               : wide_launch<C, false, false>(args, blocks, env->stream);
}

/* Every tile of every product whole, none shared.  Tile ids are ints: a
 * stack of 2^31 tiles or more is refused (its C would exceed 256 GiB). */
template <class C>
static cudaError_t wide_launch_whole(const struct sgemm_problem *p, const struct launch_env *env)
{
    int tiles_m = ceil_div(p->m, C::bm), tiles_n = ceil_div(p->n, C::bn);
    long tiles = (long)tiles_m * tiles_n;
    if (tiles > 0x7fffffff / pipe_batch(p))
        return cudaErrorInvalidConfiguration;
    tiles *= pipe_batch(p);
    struct sgemm_sk_plan plan = { (int)tiles, 0, tiles_m, tiles_n };
    return wide_run<C>(p, env, &plan);
}

extern "C" cudaError_t sgemm_wide_run(const struct sgemm_problem *p, const struct launch_env *env,
                                      const struct sgemm_sk_plan *plan)
{
    return wide_run<thread_8x16_cfg>(p, env, plan);
}

extern "C" cudaError_t sgemm_wide_slots(const struct launch_env *env, long *slots)
{
    struct kernel_attr attr;
    cudaError_t err = sgemm_thread_8x16_attr(&attr);
    if (err == cudaSuccess)
        *slots = (long)attr.blocks_per_sm * (env->sm_count > 0 ? env->sm_count : 132);
    return err;
}

extern "C" cudaError_t sgemm_thread_8x16_launch(const struct sgemm_problem *p,
                                                const struct launch_env *env)
{
    return wide_launch_whole<thread_8x16_cfg>(p, env);
}

extern "C" cudaError_t sgemm_thread_8x16_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_wide_kernel<thread_8x16_cfg, true, false>, thread_8x16_cfg::threads,
                          thread_8x16_cfg::smem, out);
}

extern "C" cudaError_t sgemm_narrow_256x64_launch(const struct sgemm_problem *p,
                                                       const struct launch_env *env)
{
    return wide_launch_whole<narrow_256x64_cfg>(p, env);
}

extern "C" cudaError_t sgemm_narrow_256x64_attr(struct kernel_attr *out)
{
    return kernel_attr_of(sgemm_wide_kernel<narrow_256x64_cfg, true, false>,
                          narrow_256x64_cfg::threads, narrow_256x64_cfg::smem, out);
}

