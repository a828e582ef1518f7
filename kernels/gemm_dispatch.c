/* Running a row of gemm_kernels[]: the generic problem is turned into the
 * family's struct (kernels/gemm.h) and handed to the stage's launcher; a
 * stage that takes one product at a time is called once per product of the
 * stack, a batched one once per chunk of at most INT_MAX products.
 *
 * The 16-bit family adds one thing for its KERNEL_SPLIT_K rows (the
 * tensor-core stages): a single product with a long K and too few tiles to
 * fill the GPU (256 x 256 x 65536 makes 4) is split into S slices of K,
 * handed to the stage as a stack whose A matrices are the slices' columns
 * (kept K apart by lda) and whose B matrices are their rows, each into its
 * own FP32 slab; gemm_split_reduce adds the slabs.  It fills the GPU, and
 * it bounds the summation: a tensor core's FP32 accumulator does not round
 * to nearest, and its error over one 65536-long chain was 16 times
 * cuBLAS's, which splits there too (tests/gpu_kernels.c checks both). */
#include <limits.h>

#include "gemm.h"

#define CHUNK(k) (((k)->flags & KERNEL_BATCHED) ? (int64_t)INT_MAX : 1)

/* One family, one adapter: the struct, the pointer type and the scalars
 * differ, the walk over the stack does not. */
#define FAMILY_RUN(fn, ptype, elem, launch_t, SET_SCALARS)                            \
    cudaError_t fn(const struct gemm_kernel *k, const struct gemm_problem *p,         \
                   const struct launch_env *env)                                       \
    {                                                                                  \
        launch_t launch = (launch_t)k->impl;                                           \
        int64_t chunk = CHUNK(k);                                                      \
        for (int64_t b0 = 0; b0 < p->batch; b0 += chunk) {                             \
            int64_t nb = p->batch - b0 < chunk ? p->batch - b0 : chunk;                \
            struct ptype q;                                                            \
            q.m = (int)p->m;                                                           \
            q.n = (int)p->n;                                                           \
            q.k = (int)p->k;                                                           \
            SET_SCALARS;                                                               \
            q.a = (const elem *)p->a + b0 * p->stride_a;                               \
            q.b = (const elem *)p->b + b0 * p->stride_b;                               \
            q.c = (__typeof__(q.c))p->c + b0 * p->stride_c;                            \
            q.batch = (int)nb;                                                         \
            q.stride_a = p->stride_a;                                                  \
            q.stride_b = p->stride_b;                                                  \
            q.stride_c = p->stride_c;                                                  \
            cudaError_t err = launch(&q, env);                                         \
            if (err != cudaSuccess)                                                    \
                return err;                                                            \
        }                                                                              \
        return cudaSuccess;                                                            \
    }

FAMILY_RUN(gemm_run_sgemm, sgemm_problem, float, sgemm_launch_fn,
           (q.alpha = (float)p->alpha, q.beta = (float)p->beta))
FAMILY_RUN(gemm_run_dgemm, dgemm_problem, double, dgemm_launch_fn,
           (q.alpha = p->alpha, q.beta = p->beta))
FAMILY_RUN(hgemm_run_stack, hgemm_problem, uint16_t, hgemm_launch_fn,
           (q.alpha = (float)p->alpha, q.beta = (float)p->beta, q.bf16 = p->sig == GEMM_BF16,
            q.lda = (int)p->lda, q.ldb = (int)p->ldb))
FAMILY_RUN(gemm_run_igemm, igemm_problem, int64_t, igemm_launch_fn, (void)0)

enum {
    SPLIT_TILE = 128,       /* the tile the split counts by (the stages': 128 x 128 or more) */
    SPLIT_MIN_K = 2048,     /* a slice's least length */
    SPLIT_MOST = 32         /* slices at most */
};

/* The slice length for p on `sm_count` SMs, a multiple of 64 (every
 * stage's tile of k), or 0: no split. */
static int64_t split_slice(const struct gemm_problem *p, int sm_count)
{
    if (p->batch != 1 || p->m == 0 || p->n == 0 || p->k < 2 * SPLIT_MIN_K)
        return 0;
    int64_t tiles =
        ((p->m + SPLIT_TILE - 1) / SPLIT_TILE) * ((p->n + SPLIT_TILE - 1) / SPLIT_TILE);
    if (tiles >= sm_count)
        return 0;
    int64_t slices = (sm_count + tiles - 1) / tiles;
    if (slices > p->k / SPLIT_MIN_K)
        slices = p->k / SPLIT_MIN_K;
    if (slices > SPLIT_MOST)
        slices = SPLIT_MOST;
    if (slices < 2)
        return 0;
    return ((p->k + slices - 1) / slices + 63) / 64 * 64;
}

/* The slabs' bytes for the registry: an upper bound, taken for 256 SMs. */
size_t gemm_split_workspace(const struct gemm_problem *p)
{
    int64_t slice = split_slice(p, 256);
    return slice ? (size_t)((p->k + slice - 1) / slice) * p->m * p->n * sizeof(float) : 0;
}

/* The stack of full slices, then the shorter last one if any, into the
 * slabs; then the sum into C. */
static cudaError_t hgemm_run_split(const struct gemm_kernel *k, const struct gemm_problem *p,
                                   const struct launch_env *env, int64_t slice)
{
    int64_t full = p->k / slice, tail = p->k - full * slice;
    int64_t slabs = full + (tail > 0);
    size_t count = (size_t)p->m * p->n;
    float *partial;
    cudaError_t err = cudaMallocAsync((void **)&partial, (size_t)slabs * count * sizeof(float),
                                      env->stream);
    if (err != cudaSuccess)
        return err;
    struct gemm_problem q = *p;
    q.alpha = 1.0;
    q.beta = 0.0;
    q.c = partial;
    q.ldc = p->n;
    q.k = slice;
    q.batch = full;
    q.stride_a = slice;
    q.stride_b = slice * p->ldb;
    q.stride_c = (int64_t)count;
    err = hgemm_run_stack(k, &q, env);
    if (err == cudaSuccess && tail > 0) {
        q.k = tail;
        q.batch = 1;
        q.a = (const uint16_t *)p->a + full * slice;
        q.b = (const uint16_t *)p->b + full * slice * p->ldb;
        q.c = partial + full * count;
        err = hgemm_run_stack(k, &q, env);
    }
    if (err == cudaSuccess)
        err = gemm_split_reduce(p->c, 0, partial, count, 1, (int)slabs, (float)p->alpha,
                                (float)p->beta, env->stream);
    cudaError_t free_err = cudaFreeAsync(partial, env->stream);
    return err != cudaSuccess ? err : free_err;
}

cudaError_t gemm_run_hgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct launch_env *env)
{
    int64_t slice = (k->flags & KERNEL_SPLIT_K) ? split_slice(p, env->sm_count) : 0;
    if (slice && p->ldc == p->n)
        return hgemm_run_split(k, p, env, slice);
    return hgemm_run_stack(k, p, env);
}

cudaError_t gemm_run(const struct gemm_kernel *k, const struct gemm_problem *p,
                     const struct launch_env *env, int host_threads)
{
    if (k->flags & KERNEL_HOST) {
        k->host(p, host_threads);
        return cudaSuccess;
    }
    return k->run(k, p, env);
}
