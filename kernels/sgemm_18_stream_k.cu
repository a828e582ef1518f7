/* stream_k: thread_8x16 with the last partial wave of tiles shared out by
 * k-steps, so that every resident block ends at about the same time.
 *
 * Beyond the seeds (stream-K, Osama et al., 2023, in its hybrid form).
 * With S blocks resident at once, T tiles take ceil(T / S) waves, and the
 * last one is (T mod S) / S full: at 4097^3, 1089 tiles of 128 over 264
 * slots make 4 waves and a fifth an eighth full, most of the GPU idle for
 * a fifth of the run.  Here the first T - (T mod S) tiles run whole as in
 * thread_8x16; the k-steps of the other T mod S tiles, laid end to end, are
 * cut into S equal runs, one per block, so the tail costs (T mod S) / S of
 * a wave instead of a whole one.  A run that covers only part of a tile
 * leaves raw sums in a stream-ordered workspace; a fix-up kernel then adds
 * the runs of each shared tile in a fixed order (the result does not depend
 * on scheduling) and applies alpha and beta.  Shapes that fill whole waves
 * run as thread_8x16. */
#include "sgemm_pipeline.cuh"

enum {
    SK_FIXUP_ROWS = 8,        /* rows of a shared tile per fix-up block */
    /* A run shorter than this many k-steps spends more on filling the
     * pipeline and writing its slab than on FFMAs. */
    SK_MIN_STEPS = 8,
};

/* The block that owns k-step i (of sk_steps): the last w with
 * w * sk_steps / workers <= i, as the kernel splits them. */
static __device__ __forceinline__ long long sk_worker_of(long long i, long long sk_steps, int workers)
{
    return ((i + 1) * workers - 1) / sk_steps;
}

/* One block per SK_FIXUP_ROWS rows of one shared tile; a thread per 4
 * columns.  Sums the slabs of the runs that cover the tile, worker by
 * worker, skipping workers that own no k-step. */
static __global__ void __launch_bounds__(SK_FIXUP_ROWS * SGEMM_WIDE_BN / 4)
sgemm_sk_fixup(const struct sgemm_problem p, const struct sgemm_sk_plan plan, int vec)
{
    int tiles_m = ceil_div(p.m, SGEMM_WIDE_BM), tiles_n = ceil_div(p.n, SGEMM_WIDE_BN);
    int kt = ceil_div(p.k, SGEMM_WIDE_BK);
    int t = blockIdx.x;
    long long sk_steps = ((long long)tiles_m * tiles_n - plan.dp_tiles) * kt;
    long long w_lo = sk_worker_of((long long)t * kt, sk_steps, plan.sk_workers);
    long long w_hi = sk_worker_of((long long)(t + 1) * kt - 1, sk_steps, plan.sk_workers);
    int row = blockIdx.y * SK_FIXUP_ROWS + threadIdx.x / (SGEMM_WIDE_BN / 4);
    int col = threadIdx.x % (SGEMM_WIDE_BN / 4) * 4;
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (long long w = w_lo; w <= w_hi; w++) {
        if (w * sk_steps / plan.sk_workers == (w + 1) * sk_steps / plan.sk_workers)
            continue;
        const float *slab = plan.partial + (size_t)(w + t) * SGEMM_WIDE_BM * SGEMM_WIDE_BN;
        float4 v = *reinterpret_cast<const float4 *>(&slab[row * SGEMM_WIDE_BN + col]);
        sum.x += v.x;
        sum.y += v.y;
        sum.z += v.z;
        sum.w += v.w;
    }
    int tm, tn;
    pipe_tile_of(plan.dp_tiles + t, tiles_m, tiles_n, SGEMM_WIDE_GROUP, &tm, &tn);
    if (vec)
        sgemm_store4<true>(p, tm * SGEMM_WIDE_BM + row, tn * SGEMM_WIDE_BN + col, sum);
    else
        sgemm_store4<false>(p, tm * SGEMM_WIDE_BM + row, tn * SGEMM_WIDE_BN + col, sum);
}

extern "C" cudaError_t sgemm_stream_k_launch(const struct sgemm_problem *p,
                                             const struct launch_env *env)
{
    long tiles = (long)ceil_div(p->m, SGEMM_WIDE_BM) * ceil_div(p->n, SGEMM_WIDE_BN);
    if (tiles > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    struct kernel_attr attr;
    cudaError_t err = sgemm_thread_8x16_attr(&attr);
    if (err != cudaSuccess)
        return err;
    long slots = (long)attr.blocks_per_sm * (env->sm_count > 0 ? env->sm_count : 132);
    long kt = ceil_div(p->k, SGEMM_WIDE_BK);
    long sk_tiles = slots > 0 ? tiles % slots : 0;
    long workers = sk_tiles * kt / SK_MIN_STEPS;
    if (workers > slots)
        workers = slots;
    struct sgemm_sk_plan plan = { (int)tiles, 0, NULL };
    if (sk_tiles == 0 || workers <= sk_tiles)
        return sgemm_wide_run(p, env, &plan);

    plan.dp_tiles = (int)(tiles - sk_tiles);
    plan.sk_workers = (int)workers;
    size_t slab = (size_t)SGEMM_WIDE_BM * SGEMM_WIDE_BN * sizeof(float);
    err = cudaMallocAsync((void **)&plan.partial, (size_t)(workers + sk_tiles - 1) * slab,
                          env->stream);
    if (err != cudaSuccess)
        return err;
    err = sgemm_wide_run(p, env, &plan);
    if (err == cudaSuccess) {
        dim3 grid((unsigned)sk_tiles, SGEMM_WIDE_BM / SK_FIXUP_ROWS);
        sgemm_sk_fixup<<<grid, SK_FIXUP_ROWS * SGEMM_WIDE_BN / 4, 0, env->stream>>>(
            *p, plan, pipe_vec_ok(p));
        err = launch_result();
    }
    cudaError_t free_err = cudaFreeAsync(plan.partial, env->stream);
    return err != cudaSuccess ? err : free_err;
}

extern "C" cudaError_t sgemm_stream_k_attr(struct kernel_attr *out)
{
    return sgemm_thread_8x16_attr(out);
}
