/* Running a row of gemm_kernels[]: the generic problem is turned into the
 * family's struct (kernels/gemm.h) and handed to the stage's launcher; a
 * stage that takes one product at a time is called once per product of the
 * stack, a batched one once per chunk of at most INT_MAX products.
 *
 * The 16-bit and FP64 families add one thing for their KERNEL_SPLIT_K
 * rows (the tensor-core and DMMA stages): a single product with a long K
 * and too few tiles to fill the GPU (256 x 256 x 65536 makes 4) is split
 * into S slices of K, handed to the stage as a stack whose A matrices are
 * the slices' columns (kept K apart by lda) and whose B matrices are their
 * rows, each into its own slab (FP32, or FP64 for double);
 * gemm_split_reduce adds the slabs.  A KERNEL_K_LAST stage takes the
 * stack's last product shorter (k_last), so its slices are one launch;
 * another stage takes what is left over in a launch of its own.  The
 * split fills the GPU, and it bounds the summation: a tensor core's FP32
 * accumulator does not round to nearest, and over one 65536-long chain
 * its error measured 16 times cuBLAS's, which splits there too
 * (tests/gpu_kernels.c checks both). */
#include <limits.h>

#include "kernels/gemm.h"

#define CHUNK(k) (((k)->flags & KERNEL_BATCHED) ? (int64_t)INT_MAX : 1)

/* One family, one adapter: the struct, the pointer type and the scalars
 * differ, the walk over the stack does not.  fn##_last runs a stack whose
 * last product is k_last long in K (0: k; the 16-bit and FP64 families'
 * splits, kernels of KERNEL_K_LAST), fn any stack. */
#define FAMILY_RUN(fn, ptype, elem, launch_t, SET_SCALARS, SET_LAST)                  \
    static cudaError_t fn##_last(const struct gemm_kernel *k, const struct gemm_problem *p, \
                                 const struct launch_env *env, int64_t k_last)         \
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
            SET_LAST;                                                                  \
            cudaError_t err = launch(&q, env);                                         \
            if (err != cudaSuccess)                                                    \
                return err;                                                            \
        }                                                                              \
        return cudaSuccess;                                                            \
    }                                                                                  \
    cudaError_t fn(const struct gemm_kernel *k, const struct gemm_problem *p,         \
                   const struct launch_env *env)                                       \
    {                                                                                  \
        return fn##_last(k, p, env, 0);                                                \
    }

#define LAST_OF_STACK (q.k_last = b0 + nb == p->batch ? (int)k_last : 0)
FAMILY_RUN(gemm_run_sgemm, sgemm_problem, float, sgemm_launch_fn,
           (q.alpha = (float)p->alpha, q.beta = (float)p->beta), (void)k_last)
FAMILY_RUN(dgemm_run_stack, dgemm_problem, double, dgemm_launch_fn,
           (q.alpha = p->alpha, q.beta = p->beta, q.lda = p->lda), LAST_OF_STACK)
FAMILY_RUN(hgemm_run_stack, hgemm_problem, uint16_t, hgemm_launch_fn,
           (q.alpha = (float)p->alpha, q.beta = (float)p->beta, q.bf16 = p->sig == GEMM_BF16,
            q.lda = (int)p->lda, q.ldb = (int)p->ldb), LAST_OF_STACK)
/* The exact path applies alpha and beta in its epilogue; a nonzero beta
 * here only sums into C, step after step of K (src/scale/tiled_run.c). */
FAMILY_RUN(gemm_run_igemm, igemm_problem, int64_t, igemm_launch_fn,
           (q.accumulate = p->beta != 0), (void)k_last)
FAMILY_RUN(gemm_run_i8gemm, i8gemm_problem, int8_t, i8gemm_launch_fn,
           (q.accumulate = p->beta != 0), (void)k_last)
/* (limbgemm: the operands' element size is the signature's, so the
 * stack is walked in bytes) */
cudaError_t gemm_run_limbgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                              const struct launch_env *env)
{
    limbgemm_launch_fn launch = (limbgemm_launch_fn)k->impl;
    int64_t chunk = CHUNK(k);
    int es = p->sig == GEMM_I16 ? 2 : 4;
    for (int64_t b0 = 0; b0 < p->batch; b0 += chunk) {
        int64_t nb = p->batch - b0 < chunk ? p->batch - b0 : chunk;
        struct limbgemm_problem q = {
            (int)p->m, (int)p->n, (int)p->k,
            (const char *)p->a + b0 * p->stride_a * es, (const char *)p->b + b0 * p->stride_b * es,
            (int32_t *)p->c + b0 * p->stride_c, (int)nb, p->stride_a, p->stride_b, p->stride_c,
            p->beta != 0, es
        };
        cudaError_t err = launch(&q, env);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

/* (ozgemm: double or float, as the signature says, so the stack is
 * walked in bytes too) */
cudaError_t gemm_run_ozgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                            const struct launch_env *env)
{
    ozgemm_launch_fn launch = (ozgemm_launch_fn)k->impl;
    int64_t chunk = CHUNK(k);
    int fp32 = p->sig == GEMM_OZAKI32, es = fp32 ? 4 : 8;
    for (int64_t b0 = 0; b0 < p->batch; b0 += chunk) {
        int64_t nb = p->batch - b0 < chunk ? p->batch - b0 : chunk;
        struct ozgemm_problem q = {
            (int)p->m, (int)p->n, (int)p->k, p->alpha, p->beta,
            (const char *)p->a + b0 * p->stride_a * es, (const char *)p->b + b0 * p->stride_b * es,
            (char *)p->c + b0 * p->stride_c * es, (int)nb, p->stride_a, p->stride_b, p->stride_c,
            fp32
        };
        cudaError_t err = launch(&q, env);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

enum {
    SPLIT_TILE = 128,       /* the tile the split counts by (the stages': 128 x 128 or more) */
    SPLIT_MIN_K = 2048,     /* a slice's least length (tensor cores) */
    SPLIT_MIN_K_F64 = 256,  /* a slice's least length (DMMA: 1/16 the rate, so shorter) */
    SPLIT_MAX_K = 8192,     /* a slice's greatest length on the tensor cores' FP32 sums */
    SPLIT_LEAST_F64 = 4,    /* FP64 slices shorter than SPLIT_MIN_K_F64 come 4 or more */
    SPLIT_MOST = 1024       /* slices at most */
};

/* (kernels/registry.h) */
int64_t gemm_stream_k_runs(int64_t tiles, int64_t slots, int64_t k_steps)
{
    int64_t rest = slots > 0 ? tiles % slots : 0;
    int64_t runs = rest * k_steps / GEMM_STREAM_K_MIN_STEPS;
    if (runs > slots)
        runs = slots;
    return rest == 0 || rest * 10 > slots * 9 || runs <= rest ? 0 : runs;
}

/* (kernels/registry.h)  Where the tiles are as many as the SMs or more,
 * slicing only evens out the SMs' loads: float 18 x 18630 x 1004 on
 * splitk_32x128, 146 tiles of 32 x 128 on 132 SMs of 5 blocks (its count then), ran whole
 * tiles in 94 us (the busiest SM two of 1004 values of k) and 4 slices in
 * 70 (five of 251); 14 x 41767 x 2281, 327 tiles, 295 and 228 in 2; but
 * 32 x 32768 x 1024, 256 tiles, 71 whole and 74 in 2 (the busiest SM 2 x
 * 1024 either way), and 30 x 35000 x 300, 274 tiles, 41 whole and 48 in
 * 2 (3 x 300 against 5 x 150, the slices' fill and sum unpaid; NVIDIA
 * H200, 2026-11-26). */
int64_t gemm_fill_slices(int64_t tiles, int64_t sm_count, int64_t per_sm, int64_t k,
                         int64_t min_k, int64_t k_fill)
{
    if (tiles <= 0 || sm_count <= 0 || min_k <= 0)
        return 1;
    int64_t most = per_sm * sm_count / tiles;
    if (most > k / min_k)
        most = k / min_k;
    if (most < 2)
        return 1;
    if (tiles < sm_count)
        return most;
    int64_t best = 1;
    double whole = (double)((tiles + sm_count - 1) / sm_count) * (double)(k + k_fill), least = whole;
    for (int64_t s = 2; s <= most; s++) {
        double load = (double)((tiles * s + sm_count - 1) / sm_count) * ((double)k / s + k_fill);
        if (load < least) {
            least = load;
            best = s;
        }
    }
    return least < 0.9 * whole ? best : 1;
}

/* (kernels/registry.h) */
int64_t gemm_split_slice(const struct gemm_kernel *k, const struct gemm_problem *p,
                         int sm_count)
{
    const struct gemm_geometry *g = k->geometry;
    int64_t min_k = g && g->slice_k > 0 ? g->slice_k
                    : p->sig == GEMM_F64 ? SPLIT_MIN_K_F64 : SPLIT_MIN_K;
    int64_t tile_m = g ? g->tile_m : SPLIT_TILE, tile_n = g ? g->tile_n : SPLIT_TILE;
    int64_t slots = (int64_t)sm_count * (g && g->per_sm > 0 ? g->per_sm : 1);
    /* (FP64's split is for speed alone, and a vector is f64_gemv's) */
    int f64_vector = p->sig == GEMM_F64 && (p->m == 1 || p->n == 1);
    if (!(k->flags & KERNEL_SPLIT_K) || p->batch != 1 || p->m == 0 || p->n == 0 ||
        p->k < 2 * min_k || f64_vector)
        return 0;
    int64_t tiles = ((p->m + tile_m - 1) / tile_m) * ((p->n + tile_n - 1) / tile_n);
    /* Whole waves: one more slice would start a second wave of few blocks
     * that takes as long as the first.  The tensor cores' FP32 sums (which
     * truncate) take slices of SPLIT_MAX_K at most, in as many whole waves
     * as that needs: over 25000 values one chain's error measured twice
     * cuBLAS's (tests/gpu_kernels.c, float16 32x4096x100000 on wgmma in
     * 4 slices: 2.00x; NVIDIA H200, 2026-11-26). */
    int64_t slices = slots / tiles;
    int64_t bounded = p->sig == GEMM_F64 ? 1 : (p->k + SPLIT_MAX_K - 1) / SPLIT_MAX_K;
    if (bounded > slices) {
        int64_t waves = (bounded * tiles + slots - 1) / slots;
        slices = waves * slots / tiles;
    }
    if (slices > p->k / min_k)
        slices = p->k / min_k;
    if (slices > SPLIT_MOST)
        slices = SPLIT_MOST;
    /* DMMA's slices may be 64 deep where they are 4 or more; fewer are
     * SPLIT_MIN_K_F64 deep at least, as a split's extra launches (the
     * leftover slab, the sum) cost more than 2 or 3 short slices gain:
     * 127 x 129 x 255 in 3 took 0.045 ms where f64_naive takes 0.030, 72 x
     * 37 x 585 in 9 0.023 against 0.039 unsplit, 2603 x 188 x 20640 in 3
     * 0.50 against 1.45 (NVIDIA H100, 2026-11-26, the sweep's runs before
     * and after). */
    if (p->sig == GEMM_F64 && slices < SPLIT_LEAST_F64 && slices > p->k / SPLIT_MIN_K_F64)
        slices = p->k / SPLIT_MIN_K_F64;
    if (slices < 2)
        return 0;
    /* A multiple of 8 elements (16 bytes: every slice's columns of A start
     * aligned).  Rounded up where the stage takes a shorter last slice in
     * the same launch: S slices at most, one wave.  Else rounded down, and
     * the last slab, run apart after the others, holds at most 8 x slices
     * values of k: a launch of its own, which the same tiles take about as
     * long as a whole slice (float64 677 x 44 x 3971 on f64_dmma: 22
     * slices of 176, then 99). */
    if (k->flags & KERNEL_K_LAST)
        return ((p->k + slices - 1) / slices + 7) / 8 * 8;
    return p->k / slices / 8 * 8;
}

/* (kernels/registry.h) */
int64_t gemm_split_pieces(int64_t k, int64_t slice)
{
    return slice > 0 ? (k + slice - 1) / slice : 1;
}

/* The bytes of one accumulator of the slabs: C's type (float for the
 * 16-bit family, double for FP64). */
static size_t split_acc_size(const struct gemm_problem *p)
{
    return p->sig == GEMM_F64 ? sizeof(double) : sizeof(float);
}

/* The slabs' bytes for the registry: an upper bound for any GPU of up to
 * 256 SMs, whatever its count.  gemm_split_slice's slices are at most
 * the bound's count plus the slots over the tiles, and at most K / min_k;
 * one more slab holds what is left over. */
size_t gemm_split_workspace(const struct gemm_kernel *k, const struct gemm_problem *p)
{
    if (!gemm_split_slice(k, p, 256) && !gemm_split_slice(k, p, 132))
        return 0;
    const struct gemm_geometry *g = k->geometry;
    int64_t min_k = g && g->slice_k > 0 ? g->slice_k
                    : p->sig == GEMM_F64 ? SPLIT_MIN_K_F64 : SPLIT_MIN_K;
    int64_t tile_m = g ? g->tile_m : SPLIT_TILE, tile_n = g ? g->tile_n : SPLIT_TILE;
    int64_t tiles = ((p->m + tile_m - 1) / tile_m) * ((p->n + tile_n - 1) / tile_n);
    int64_t bounded = p->sig == GEMM_F64 ? 1 : (p->k + SPLIT_MAX_K - 1) / SPLIT_MAX_K;
    int64_t most = bounded + 256 * (g && g->per_sm > 0 ? g->per_sm : 1) / tiles;
    if (most > p->k / min_k)
        most = p->k / min_k;
    if (most > SPLIT_MOST)
        most = SPLIT_MOST;
    return (size_t)(most + 1) * (size_t)p->m * (size_t)p->n * split_acc_size(p);
}

typedef cudaError_t (*stack_run_fn)(const struct gemm_kernel *k, const struct gemm_problem *p,
                                    const struct launch_env *env, int64_t k_last);

/* The stack of full slices, then the shorter last one if any, into the
 * slabs (in the same launch for a KERNEL_K_LAST stage); then the sum into
 * C. */
static cudaError_t run_split(const struct gemm_kernel *k, const struct gemm_problem *p,
                             const struct launch_env *env, int64_t slice, stack_run_fn run_stack)
{
    int64_t full = p->k / slice, tail = p->k - full * slice;
    int64_t slabs = full + (tail > 0);
    int together = (k->flags & KERNEL_K_LAST) && tail > 0;
    size_t count = (size_t)p->m * p->n, acc = split_acc_size(p);
    size_t in = gc_dtypes[gemm_sigs[p->sig].in].size;
    void *partial;
    cudaError_t err = cudaMallocAsync(&partial, (size_t)slabs * count * acc, env->stream);
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
    if (together)
        q.batch = slabs;
    err = run_stack(k, &q, env, together ? tail : 0);
    if (err == cudaSuccess && tail > 0 && !together) {
        q.k = tail;
        q.batch = 1;
        q.a = (const char *)p->a + full * slice * in;
        q.b = (const char *)p->b + full * slice * p->ldb * in;
        q.c = (char *)partial + full * count * acc;
        err = run_stack(k, &q, env, 0);
    }
    if (err == cudaSuccess)
        err = p->sig == GEMM_F64
                  ? gemm_split_reduce_f64(p->c, 0, partial, count, 1, (int)slabs, p->alpha,
                                          p->beta, env->stream)
                  : gemm_split_reduce(p->c, 0, partial, count, 1, (int)slabs, (float)p->alpha,
                                      (float)p->beta, env->stream);
    cudaError_t free_err = cudaFreeAsync(partial, env->stream);
    return err != cudaSuccess ? err : free_err;
}

cudaError_t gemm_run_hgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct launch_env *env)
{
    int64_t slice = gemm_split_slice(k, p, env->sm_count);
    if (slice && p->ldc == p->n)
        return run_split(k, p, env, slice, hgemm_run_stack_last);
    return hgemm_run_stack(k, p, env);
}

/* FP64's split is for speed alone (DMMA rounds every sum to nearest). */
cudaError_t gemm_run_dgemm(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct launch_env *env)
{
    int64_t slice = gemm_split_slice(k, p, env->sm_count);
    if (slice && p->ldc == p->n)
        return run_split(k, p, env, slice, dgemm_run_stack_last);
    return dgemm_run_stack(k, p, env);
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
