/* stream_k: thread_8x16 with the last partial wave of tiles shared out by
 * k-steps, so that every resident block ends at about the same time.
 *
 * Against thread_8x16: with S blocks resident at once, T tiles take
 * ceil(T / S) waves, and the last one is (T mod S) / S full: at 4097^3,
 * 1089 tiles of 128 over 264 slots make 4 waves and a fifth an eighth full.
 * Here the first T - (T mod S) tiles run whole as in thread_8x16; the
 * k-steps of the other T mod S tiles, laid end to end, are cut into S equal
 * runs, one per block, so the tail costs (T mod S) / S of a wave instead of
 * a whole one.  A first kernel sets those tiles of C to beta * C (to 0 when
 * beta == 0, without reading C); each run then adds alpha times its sums
 * atomically (float4 atomics where rows are 16-byte aligned, otherwise a
 * row at a time through shared memory, a warp's atomics on 32 adjacent
 * floats; a sum below 2^-102 by compare-and-swap, since the float atomic
 * add flushes subnormals).  The low bits of a shared tile depend on the order its runs
 * finish; the error bound is the one of any order.  The same split makes
 * splitk's case, M x N too small to fill the GPU, one partial wave shared
 * out.  A last wave more than nine tenths full runs whole.
 *
 * A stack of products is one plan over all their tiles, product by product
 * (sgemm_17_thread_8x16.cu's numbering): the full waves run whole across
 * the products and the last partial wave of the stack is shared out, so a
 * stack of small products is covered like one large one.
 *
 * The runs add into C atomically rather than into a workspace of per-run
 * slabs summed afterwards in a fixed order: the stream-ordered allocation
 * and the extra pass cost more (README, "Measurements behind the stages",
 * with the nine-tenths rule).  At 4097^3 what is left of the gap to cuBLAS
 * is the padded 33rd row and column of tiles and the 4-byte copies of B's
 * unaligned rows, which sgemm_19_edge_peel.cu removes.
 *
 * Follows "Stream-K: Work-centric Parallel Decomposition for Dense
 * Matrix-Matrix Multiplication on the GPU" (Osama, Merrill, Cecka, Garland
 * and Owens), in its hybrid form: data-parallel full waves, the last wave
 * shared out.
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel stream_k --verify --repeat 20 */
#include "kernels/sgemm/sgemm_pipeline.cuh"

enum { SK_BETA_ROWS = 8 };   /* rows of a shared tile per beta-pass block */

/* C = beta * C over the tiles that the stream-K runs will add into (in
 * the stack's numbering when BATCHED). */
template <bool BATCHED>
static __global__ void __launch_bounds__(SK_BETA_ROWS * SGEMM_WIDE_BN)
sgemm_sk_beta(const struct sgemm_problem p, const struct sgemm_sk_plan plan)
{
    int tile = plan.dp_tiles + blockIdx.x;
    int per_product = plan.tiles_m * plan.tiles_n;
    float *c0 = BATCHED ? p.c + (long long)(tile / per_product) * p.stride_c : p.c;
    if (BATCHED)
        tile %= per_product;
    int tm, tn;
    pipe_tile_of(tile, plan.tiles_m, plan.tiles_n, SGEMM_WIDE_GROUP, &tm, &tn);
    int row = tm * SGEMM_WIDE_BM + blockIdx.y * SK_BETA_ROWS + threadIdx.x / SGEMM_WIDE_BN;
    int col = tn * SGEMM_WIDE_BN + threadIdx.x % SGEMM_WIDE_BN;
    if (row < p.m && col < p.n) {
        float *c = c0 + (size_t)row * p.n + col;
        *c = p.beta == 0.0f ? 0.0f : p.beta * *c;
    }
}

extern "C" cudaError_t sgemm_stream_k_cover(const struct sgemm_problem *p,
                                            const struct launch_env *env, int tiles_m, int tiles_n)
{
    /* Tile ids over the stack are ints (see wide_launch_whole). */
    long tiles = (long)tiles_m * tiles_n;
    if (tiles > 0x7fffffff / pipe_batch(p))
        return cudaErrorInvalidConfiguration;
    tiles *= pipe_batch(p);
    long slots;
    cudaError_t err = sgemm_wide_slots(env, &slots);
    if (err != cudaSuccess)
        return err;
    /* (the plan auto's model weighs too: kernels/registry.h) */
    long workers = (long)gemm_stream_k_runs(tiles, slots, ceil_div(p->k, SGEMM_WIDE_BK));
    struct sgemm_sk_plan plan = { (int)tiles, 0, tiles_m, tiles_n };
    if (workers == 0)
        return sgemm_wide_run(p, env, &plan);
    long sk_tiles = tiles % slots;

    plan.dp_tiles = (int)(tiles - sk_tiles);
    plan.sk_workers = (int)workers;
    dim3 grid((unsigned)sk_tiles, SGEMM_WIDE_BM / SK_BETA_ROWS);
    if (pipe_batch(p) > 1)
        sgemm_sk_beta<true><<<grid, SK_BETA_ROWS * SGEMM_WIDE_BN, 0, env->stream>>>(*p, plan);
    else
        sgemm_sk_beta<false><<<grid, SK_BETA_ROWS * SGEMM_WIDE_BN, 0, env->stream>>>(*p, plan);
    err = launch_result();
    if (err != cudaSuccess)
        return err;
    return sgemm_wide_run(p, env, &plan);
}

extern "C" cudaError_t sgemm_stream_k_launch(const struct sgemm_problem *p,
                                             const struct launch_env *env)
{
    return sgemm_stream_k_cover(p, env, ceil_div(p->m, SGEMM_WIDE_BM),
                                ceil_div(p->n, SGEMM_WIDE_BN));
}

extern "C" cudaError_t sgemm_stream_k_attr(struct kernel_attr *out)
{
    return sgemm_thread_8x16_attr(out);
}
