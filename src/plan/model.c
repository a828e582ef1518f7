/* auto's model of a kernel's time.
 *
 *   time = launches x LAUNCH_MS [+ the workspace's copies] + max(compute, memory)
 *          [+ the slices' sum]
 *
 * compute: the product's FLOPs at the kernel's measured full rate
 * (kernels/auto_table.c) times the share of it the shape allows:
 *   - tiles: a ragged edge computes whole tiles (m n over the padded area);
 *   - waves: T tiles on S = SMs x per_sm slots take ceil(T / S) waves, the
 *     last one part full; stream-K shares the last wave out by k-steps;
 *     a sliced kernel cuts K when the tiles are fewer than the slots;
 *   - k: a tile's pipeline takes k_fill values of k to fill and drain, so
 *     a short K runs at k / (k + k_fill);
 *   - a memory-bound stage that says so (its slices hook's *busy): the
 *     share of its threads' multiply-adds that are the product's (the thin
 *     stages compute their thin side's bound, and their blocks of 256 rows
 *     or of a few hundred columns idle where M or N leave them part empty).
 * memory: the operands read once and C written (read too when beta != 0)
 * at the device's copy bandwidth, or the kernel's own for memory-bound
 * kernels (the copy's until their own is measured).  A tiled kernel's
 * stores of C, where a calibration measured their rate (a K of 8 over a
 * large C), come after its tiles' compute instead:
 *   time = ... + max(compute, reads) + C's bytes / its store rate
 * (f64_naive stored 1.9 TB/s where a copy moves 2.9, NVIDIA H100,
 * 2026-11-26; f64_dmma's stores at the copy's rate follow its compute: a
 * short K over a large C pays both in turn), but for the persistent
 * kernels (KERNEL_PERSISTENT), which store a tile while the next one
 * loads: their stores at their rate join the reads, under the compute
 * (float16 3691 x 4697 x 13: persistent 0.149 ms where the copy's rate
 * said 0.051, NVIDIA H200, 2026-11-26).  Then no estimate goes under the
 * least time the kernel was measured to take at a tiny product (a
 * calibration's floor: the launches, the first wave's start), which its
 * FLOPs and bytes do not show.  The bench measures the rates at a few
 * shapes and divides by the same shares, so the model and the table stay
 * in step. */
#include "src/plan/model.h"

#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "src/plan/rates.h"

#define LAUNCH_MS MODEL_LAUNCH_MS
#define LONE_BLOCK_EFF 0.65      /* one block alone on an SM made for two: share of its rate */
#define STREAM_K_STEP 16.0       /* values of k a stream-K k-step takes */
/* What a stream-K run's atomic adds of its tile into C cost, in values of
 * k at the full rate: fitted to 34 products the runs share out (3281 x 503
 * x 283: 0.066 ms where runs of their k-steps alone said 0.040; the times
 * of all 34 within -19% and +22% of the model's, NVIDIA H100,
 * 2026-11-26). */
#define STREAM_K_RUN_K 150.0

static double ceil_div(double a, double b)
{
    return ceil(a / b);
}

/* Whether rows of `ld` values of p's input type are not whole 16-byte units. */
static int narrow_rows(const struct gemm_problem *p, int64_t ld)
{
    return (ld * (int64_t)gc_dtypes[gemm_sigs[p->sig].in].size) % 16 != 0;
}

int model_ragged(const struct gemm_problem *p)
{
    return narrow_rows(p, p->lda) || narrow_rows(p, p->ldb);
}

/* Whether rows of ld values are an odd number of 16-bit values. */
static int odd_rows(const struct gemm_problem *p, int64_t ld)
{
    return gc_dtypes[gemm_sigs[p->sig].in].size == 2 && ld % 2 != 0;
}

int model_odd(const struct gemm_problem *p)
{
    return odd_rows(p, p->lda) || odd_rows(p, p->ldb);
}

int model_few(const struct gemm_problem *p)
{
    return model_ragged(p) && p->m <= MODEL_FEW_ROWS;
}

int model_whole_tiles(const struct gemm_kernel *k, const struct gemm_problem *p)
{
    return k->geometry && p->m >= k->geometry->tile_m && p->n >= k->geometry->tile_n;
}

/* A memory-bound 16-bit stage's few rows of A over a B whose rows are
 * narrow but even (4- or 8-byte units) run as its other even narrow rows
 * do, not as odd ones: `mma_thin` on an H100 ran 7 x 13004 x 2002 (8-byte
 * units) and 6 x 13002 x 2002 (4-byte) in 34.4 and 34.2 us, 8 x 13000 x
 * 2000 (whole 16-byte units) in 34.7, and 7 x 13001 x 2003 (odd) in 48.7;
 * one factor fitted on the odd and even ones together (1.36) sent
 * 9 x 12476 x 14492 to `mma_sync_128x64`, 73% of cuBLAS, where `mma_thin`
 * ran 113% (NVIDIA H100, 2026-11-28).  Such a stage's few_eff is its odd
 * few rows' alone, and the even ones take its ragged_eff. */
static int few_odd_only(const struct gemm_kernel *k, enum gemm_sig sig)
{
    return k->geometry && k->geometry->spread == SPREAD_MEMORY &&
           gc_dtypes[gemm_sigs[sig].in].size == 2;
}

int model_few_rows(const struct gemm_kernel *k, const struct gemm_problem *p)
{
    return model_few(p) && !(few_odd_only(k, p->sig) && !model_odd(p));
}

double model_ragged_factor(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct rate_entry *r)
{
    if (!model_ragged(p))
        return 1;
    double f = model_few_rows(k, p) && r->few_eff > 0 ? r->few_eff
               : model_odd(p) && r->odd_eff > 0 ? r->odd_eff
                                                : r->ragged_eff;
    return f > 0 ? f : 1;
}

double model_narrow_share(const struct gemm_kernel *k, const struct gemm_problem *p)
{
    const struct gemm_geometry *g = k->geometry;
    if (!g || g->spread == SPREAD_MEMORY || g->tile_m + g->tile_n <= 0)
        return 1;
    double a = narrow_rows(p, p->lda) ? g->tile_m : 0;
    double b = narrow_rows(p, p->ldb) ? g->tile_n : 0;
    return (a + b) / (g->tile_m + g->tile_n);
}

/* One operand's factor (rows of ld values): 1 for whole 16-byte units,
 * f_even for even narrow ones beside an odd operand, else f. */
static double operand_factor(const struct gemm_problem *p, int64_t ld, int mixed, double f,
                             double f_even)
{
    if (!narrow_rows(p, ld))
        return 1;
    return mixed && !odd_rows(p, ld) ? fmax(1, f_even) : f;
}

double model_narrow_factor(const struct gemm_kernel *k, const struct gemm_problem *p, double f,
                           double f_even)
{
    const struct gemm_geometry *g = k->geometry;
    if (!(f > 1))
        return f;
    if (!g || g->spread == SPREAD_MEMORY || g->tile_m + g->tile_n <= 0)
        return f;
    /* (an operand of odd rows beside one of even narrow rows: each its
     * own; otherwise f for every narrow operand, as it was measured) */
    int mixed = odd_rows(p, p->lda) != odd_rows(p, p->ldb);
    double fa = operand_factor(p, p->lda, mixed, f, f_even);
    double fb = operand_factor(p, p->ldb, mixed, f, f_even);
    return 1 + ((fa - 1) * g->tile_m + (fb - 1) * g->tile_n) / (g->tile_m + g->tile_n);
}

double model_fill_share(const struct gemm_kernel *k, const struct gemm_problem *p, int slices)
{
    const struct gemm_geometry *g = k->geometry;
    if (!g || g->spread == SPREAD_MEMORY || g->k_fill <= 0 || p->k <= 0)
        return 0;
    double slice_k = (double)p->k / (slices > 1 ? slices : 1);
    return g->k_fill / (slice_k + g->k_fill);
}

double model_out_bytes(const struct gemm_problem *p)
{
    size_t out = gc_dtypes[gemm_sigs[p->sig].out].size;
    return out * (double)p->batch * (double)p->m * (double)p->n * (p->beta != 0 ? 2 : 1);
}

double model_bytes(const struct gemm_problem *p)
{
    double m = (double)p->m, n = (double)p->n, k = (double)p->k, batch = (double)p->batch;
    size_t in = gc_dtypes[gemm_sigs[p->sig].in].size;
    return in * ((p->stride_a || batch == 1 ? batch : 1) * m * k +
                 (p->stride_b || batch == 1 ? batch : 1) * k * n) +
           model_out_bytes(p);
}

/* How long a last wave of `rest` blocks takes, in full waves: the blocks
 * spread over the SMs, ceil(rest / SMs) on the busiest, and j blocks that
 * share an SM built for per_sm get more of it each than in a full wave
 * (one alone reaches LONE_BLOCK_EFF of the SM's rate). */
static double last_wave(double rest, int sm_count, int per_sm)
{
    if (rest <= 0)
        return 0;
    double j = fmin(per_sm, ceil_div(rest, sm_count));
    double eff = per_sm == 1 ? 1 : LONE_BLOCK_EFF + (1 - LONE_BLOCK_EFF) * (j - 1) / (per_sm - 1);
    return j / per_sm / eff;
}

/* The share of a tiled kernel's full rate that p allows on `sm_count`
 * SMs; *slices and *reduce_ms say what a sliced kernel adds. */
static double tiled_util(const struct gemm_kernel *k, const struct gemm_geometry *g,
                         const struct gemm_problem *p, int sm_count, double copy_gbps,
                         int *slices, double *reduce_ms)
{
    double m = (double)p->m, n = (double)p->n, kk = (double)p->k, batch = (double)p->batch;
    double per_launch = (k->flags & KERNEL_BATCHED) ? batch : 1;
    double tm = ceil_div(m, g->tile_m), tn = ceil_div(n, g->tile_n);
    double util_tile = m * n / (tm * g->tile_m * tn * g->tile_n);
    double tiles = per_launch * tm * tn, slots = (double)sm_count * g->per_sm;
    double slice_k = kk, util_wave;
    *slices = 1;
    *reduce_ms = 0;
    switch (g->spread) {
    case SPREAD_STREAM_K: {
        /* The kernel's own plan (gemm_stream_k_runs, which
         * kernels/sgemm/sgemm_18_stream_k.cu launches): the last wave's
         * `rest` tiles, their k-steps laid end to end, cut into `runs` of
         * GEMM_STREAM_K_MIN_STEPS at least, one a slot; none where the
         * wave is nine tenths full or the runs would be no more than its
         * tiles.  Each run fills its pipeline, then adds
         * its tile into C atomically (the time of STREAM_K_RUN_K values of k),
         * after a pass that sets those tiles to beta C (a launch). */
        double full = floor(tiles / slots), rest = tiles - full * slots;
        double steps = fmax(1, ceil_div(kk, STREAM_K_STEP));
        double runs = (double)gemm_stream_k_runs((int64_t)tiles, (int64_t)slots,
                                                 (int64_t)steps), tail;
        if (runs == 0) {
            tail = last_wave(rest, sm_count, g->per_sm);
        } else {
            double run_k = rest * steps / runs * STREAM_K_STEP + g->k_fill + STREAM_K_RUN_K;
            tail = last_wave(runs, sm_count, g->per_sm) * run_k / (kk + g->k_fill);
            *reduce_ms = LAUNCH_MS;
        }
        util_wave = tiles / ((full + tail) * slots);
        break;
    }
    case SPREAD_SLICES: {
        double s = 1, rest_k = 0;
        if (k->flags & KERNEL_SPLIT_K) {
            /* The dispatcher's own cut (kernels/gemm_dispatch.c): S slices
             * in one launch, and any few values of k left over in one more
             * (in the same launch, a shorter last slice, on a KERNEL_K_LAST
             * stage). */
            int64_t len = p->batch == 1 ? gemm_split_slice(k, p, sm_count) : 0;
            s = len ? floor(kk / (double)len) : 1;
            rest_k = len ? kk - s * (double)len : 0;
            slice_k = len ? (double)len : kk;
            if (rest_k > 0 && (k->flags & KERNEL_K_LAST)) {
                s = (double)gemm_split_pieces(p->k, len);
                rest_k = 0;
            }
        } else if (g->slice_k > 0) {
            /* A stage that slices K itself: the splitk stages' plan
             * (sgemm_16_splitk.cu, splitk_count), gemm_fill_slices; the
             * TF32 stages' own (sgemm_tf32.cuh, tc32_split_of) slices
             * only fewer tiles than SMs, as this does with one block an
             * SM. */
            s = (double)gemm_fill_slices((int64_t)tiles, sm_count, g->per_sm, p->k, g->slice_k,
                                         g->k_fill);
            slice_k = kk / s;
        }
        *slices = (int)s;
        double pieces = tiles * s, full = floor(pieces / slots), rest = pieces - full * slots;
        util_wave = pieces / ((full + last_wave(rest, sm_count, g->per_sm)) * slots);
        if (s > 1)   /* the slabs (from the pool) written and read: FP32, FP64 for double */
            *reduce_ms = LAUNCH_MS * (rest_k > 0 ? 2 : 1) + MODEL_POOL_MS +
                         2 * (s + (rest_k > 0)) * batch * m * n * (p->sig == GEMM_F64 ? 8 : 4) /
                             (copy_gbps * 1e9) * 1e3;
        break;
    }
    default: {
        double full = floor(tiles / slots), rest = tiles - full * slots;
        util_wave = tiles / ((full + last_wave(rest, sm_count, g->per_sm)) * slots);
        break;
    }
    }
    return util_tile * util_wave * (slice_k / (slice_k + g->k_fill));
}

/* Whether p's tiles are fewer than one wave of a tiled kernel's blocks,
 * over a K of MODEL_PART_WAVE_K at least: unsliced, such blocks run alone
 * on their SMs as a sliced launch's do, and take the calibration's
 * slice_eff.  float16 8 x 1344 x 1312 on `wgmma` (11 blocks) took 0.0202
 * ms where the model without it said 0.0133, and went there rather than
 * to `mma_thin` (94% of cuBLAS against 74%); with it, 0.0190.  Over a
 * shorter K the blocks' stores and fill weigh more than their k-loop:
 * from K = 0, float16 101 x 26584 x 17 went to `f16_small_k`, 0.0208 ms,
 * where `mma_sync` ran 0.0112; from 512, the replay's picks
 * (tests/test_replay.c) ran 0.979 of the fastest stage's speed on float32
 * (0.969 without), 0.954 on float16 (the same) and 0.957 on float64
 * (0.956; NVIDIA H100, 2026-11-28). */
static int model_part_wave(const struct gemm_kernel *k, const struct gemm_problem *p,
                           int sm_count)
{
    const struct gemm_geometry *g = k->geometry;
    double per_launch = (k->flags & KERNEL_BATCHED) ? (double)p->batch : 1;
    double tiles = per_launch * ceil_div((double)p->m, g->tile_m) * ceil_div((double)p->n, g->tile_n);
    return tiles < (double)sm_count * g->per_sm && p->k >= MODEL_PART_WAVE_K;
}

double model_util(const struct gemm_kernel *k, const struct gemm_problem *p, int sm_count)
{
    const struct gemm_geometry *g = k->geometry;
    int slices;
    double reduce_ms;
    if (!g || g->spread == SPREAD_MEMORY || p->m == 0 || p->n == 0 || p->batch == 0)
        return 1;
    const struct model_rates *a = rates_active();
    return tiled_util(k, g, p, sm_count > 0 ? sm_count : a->sm_count, a->copy_gbps, &slices,
                      &reduce_ms);
}

/* A memory-bound stage that cuts K into slices (gemv, thin): the slabs'
 * bytes written and read, and either the launch's own join (its last
 * block a region adds them: kernels/memory_bound/join.cuh) or a second
 * launch with the slabs from the stream's pool.  On an H200's host a
 * launch took 4.4 us and a pooled allocation with its release 2.2 us more
 * of an event-timed run; float16 1188 x 32 x 677 on `f16_thin`, 43
 * slices added by a second launch, took 21.3 us where its reads alone
 * said 8 (NVIDIA H200, 2026-11-27).  Returns the share of the launch's
 * multiply-adds that are p's (the stage's *busy). */
static double memory_slices(const struct gemm_kernel *k, const struct gemm_problem *p,
                            int sm_count, double copy_gbps, struct model_estimate *e)
{
    int joined = 0;
    double busy = 1;
    int64_t s = k->slices && p->batch > 0 ? k->slices(p, sm_count, &joined, &busy) : 1;
    if (!(busy > 0 && busy <= 1))
        busy = 1;
    if (s <= 1)
        return busy;
    double acc = p->sig == GEMM_F64 ? 8 : 4;
    e->slices = (int)s;
    e->reduce_ms = (joined ? MODEL_JOIN_MS : LAUNCH_MS + MODEL_POOL_MS) +
                   2 * (double)s * p->batch * (double)p->m * p->n * acc / (copy_gbps * 1e9) * 1e3;
    return busy;
}

/* The factor on a tiled kernel's compute of p's rows that are not whole
 * 16-byte units, over `slices` slices of K (1 for aligned rows). */
static double tiled_ragged(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct rate_entry *r, int slices)
{
    /* Rows of A or B that are not whole 16-byte units take the stage's
     * narrower loads (or a copy first), as measured (ragged_eff; odd_eff
     * where 16-bit rows are an odd number of values and not even 4-byte
     * loads are left; few_eff where A has a few rows); over the share of
     * a tile's k that its pipeline fills and drains, short_eff where
     * measured: float32 `cp_async` ran 3001 x 2999 x 1003 at about 1.0
     * of its aligned model and 8191 x 8193 x 5 at 0.56, and one factor
     * for both either put 4097^3 on it (0.74: 86% of cuBLAS where
     * `edge_peel` runs 98%) or sent 28340 x 8918 x 21 to `small_k` (0.96:
     * 69% where `cp_async` runs 122%; NVIDIA H100, 2026-11-26).
     *
     * The factors are the loads' issue, so they scale the compute, not
     * the bytes, and they were measured where both operands are narrow:
     * where one is, by its share of the tile's loads (model_narrow_share).
     * float16 443 x 160 x 63172 (A's rows in 4-byte units, B's whole) ran
     * on `mma_sync` in 0.060 ms, at the bandwidth, where its factor of
     * 2.3 on the compute and the bytes said 0.119, and it went to
     * `cluster_multicast`, 0.131; a third of the factor on the compute
     * alone says 0.061 (tests/data/replay-h100.csv, NVIDIA H100,
     * 2026-11-27).  A factor under 1 is no load's cost (narrow loads are
     * never faster) but the aligned model's error at the ragged shapes
     * measured, and applies whole: float64 `f64_dmma_128x64`'s 0.88, by
     * B's share alone, sent 41468 x 115 x 1714 to `f64_dmma_64x128`, 129
     * -> 92% of cuBLAS (NVIDIA H200, 2026-11-27). */
    double f = model_ragged_factor(k, p, r);
    /* (a few rows of odd 16-bit values cost a tiled stage at least what
     * odd rows do: it issues its tiles' loads whole, the rows past M
     * predicated off.  few_eff, fitted on one sliced product of 7 rows,
     * put float16 5 x 43759 x 3427 on `mma_sync` at 0.25 ms, where it ran
     * 0.49, 56% of cuBLAS; `mma_tiny`, 0.25 ms, 103%, NVIDIA H100,
     * 2026-11-27) */
    if (model_few(p) && model_odd(p) && r->odd_eff > f)
        f = r->odd_eff;
    /* (where the odd rows are one operand's and the other's are even
     * narrow ones, a stage that loads them as they are takes ragged_eff
     * on the even ones: float16 26014 x 100 x 69, A's rows odd and B's
     * 4-byte units, ran on `mma_sync` in 0.018 ms, 112% of cuBLAS, where
     * odd_eff on both put it level with `persistent`, which took it and
     * ran 0.032 ms, 63%.  Over the 18 shapes of two sweeps whose pick
     * this moves, the picks ran 0.962 of the fastest stage's speed
     * (geometric mean) where they ran 0.926, NVIDIA H200, 2026-11-27.  A
     * stage that first copies narrow operands to padded ones loads whole
     * units after: its factors are what the copies leave, fitted so, and
     * apply whole; split, they sent float16 3247 x 225 x 1860 from
     * `mma_sync_128x64`, 108% of cuBLAS, to `mma_sync`, 86%) */
    double f_even = f;
    if (model_odd(p) && !model_few(p) && r->odd_eff > 0 && !(k->workspace && k->workspace(p) > 0))
        f_even = r->ragged_eff;
    if (r->short_eff > 0 && model_ragged(p) && !model_few(p)) {
        double share = model_fill_share(k, p, slices);
        f = f * (1 - share) + r->short_eff * share;
        f_even = f_even * (1 - share) + r->short_eff * share;
    }
    return model_narrow_factor(k, p, f, f_even);
}

struct model_estimate model_estimate_rate(const struct gemm_kernel *k,
                                          const struct gemm_problem *p, int sm_count,
                                          const struct rate_entry *r, double copy_gbps)
{
    struct model_estimate e = { INFINITY, 0, 0, 0, 0, 0, 0, 0, 1 };
    const struct gemm_geometry *g = k->geometry;
    /* A memory-bound kernel not measured yet is taken to move its bytes at
     * the device's copy rate, its compute unbounded, until a calibration
     * or `gemmcli bench --auto-table` measures it. */
    static const struct rate_entry unmeasured = { "", "", 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0 };
    if (g && g->spread == SPREAD_MEMORY && !r)
        r = &unmeasured;
    if (!g || !r || (g->spread != SPREAD_MEMORY && r->tflops <= 0 && r->gbps <= 0))
        return e;
    double batch = (double)p->batch;
    double launches = (k->flags & KERNEL_BATCHED) ? 1 : batch;
    double flops = 2 * batch * (double)p->m * (double)p->n * (double)p->k;
    /* (a memory-bound kernel's N path at its own rates, where measured) */
    double own_gbps = r->gbps, own_tflops = r->tflops;
    if (g->spread == SPREAD_MEMORY && p->m > MODEL_FEW_ROWS && r->tall_gbps > 0) {
        own_gbps = r->tall_gbps;
        own_tflops = r->tall_tflops;
    }
    double gbps = own_gbps > 0 && g->spread == SPREAD_MEMORY ? own_gbps : copy_gbps;
    e.memory_ms = model_bytes(p) / (gbps * 1e9) * 1e3;
    e.overhead_ms = launches * LAUNCH_MS;
    if (g->spread == SPREAD_MEMORY) {
        /* A memory-bound kernel's blocks own at least tile_m x tile_n of
         * C; a smaller C leaves part of each idle, moving no bytes.  The
         * multiply-adds also run at the share of them that are the
         * product's (the stage's own count: a block's rows or columns
         * past M or N, computed or idle). */
        double m = (double)p->m, n = (double)p->n;
        double fill =
            m * n / (ceil_div(m, g->tile_m) * g->tile_m * ceil_div(n, g->tile_n) * g->tile_n);
        e.util = fill * memory_slices(k, p, sm_count, copy_gbps, &e);
        e.compute_ms = own_tflops > 0 ? flops / (own_tflops * 1e12 * e.util) * 1e3 : 0;
        e.memory_ms /= fill;
        /* Blocks of its own for every product: batch of them over the
         * SMs' slots, each taking block_us at least. */
        if (g->block_us > 0)
            e.memory_ms = fmax(e.memory_ms, ceil_div(batch, (double)sm_count * g->per_sm) *
                                                g->block_us / 1e3);
        double f = model_ragged_factor(k, p, r);
        e.compute_ms *= f;
        e.memory_ms *= f;
        e.ms = fmax(e.overhead_ms + fmax(e.compute_ms, e.memory_ms) + e.reduce_ms, r->floor_ms);
        return e;
    }
    if (r->tflops <= 0 || p->m == 0 || p->n == 0 || p->batch == 0) {
        e.ms = fmax(e.overhead_ms + e.memory_ms, r->floor_ms);
        return e;
    }
    /* C's bytes at the kernel's own store rate, where one was measured:
     * after the tiles' compute, not under it (a tile stores its C once its
     * K is done; a short K over a large C is bound by both in turn).  A
     * persistent kernel stores a tile while its next one loads: its C
     * stays under the compute, but at its own rate, with the reads. */
    double under_ms = 0;   /* a persistent kernel's stores, joined to the reads below */
    if (r->gbps > 0) {
        double out = model_out_bytes(p);
        e.memory_ms = (model_bytes(p) - out) / (copy_gbps * 1e9) * 1e3;
        if (k->flags & KERNEL_PERSISTENT)
            under_ms = out / (r->gbps * 1e9) * 1e3;
        else
            e.store_ms = out / (r->gbps * 1e9) * 1e3;
    }
    e.util = tiled_util(k, g, p, sm_count, copy_gbps, &e.slices, &e.reduce_ms);
    e.compute_ms = flops / (r->tflops * 1e12 * e.util) * 1e3;
    /* Slices run as the GPU measured them run (a calibration's slice_eff):
     * few blocks over a long K reach less of an SM than whole waves do. */
    if ((e.slices > 1 || model_part_wave(k, p, sm_count)) && r->slice_eff > 0) {
        e.compute_ms *= r->slice_eff;
        e.reduce_ms *= r->slice_eff;
    }
    /* ... and their operands' bytes as it measured them streamed (a
     * calibration's stream_eff): over 128 x 128 x 500000 in float64 the
     * three 128-row DMMA tiles read the same bytes, and `f64_dmma_128x64`
     * took 0.69 ms where `f64_dmma` took 0.40, NVIDIA H100, 2026-11-27
     * (README, "What holds the rest back"); over whole tiles, as it was
     * measured. */
    if (e.slices > 1 && r->stream_eff > 0 && model_whole_tiles(k, p))
        e.memory_ms *= r->stream_eff;
    /* Rows of A or B that are not whole 16-byte units: the stage's
     * narrower loads (or a copy first), as measured (tiled_ragged). */
    e.compute_ms *= tiled_ragged(k, p, r, e.slices);
    /* (a persistent kernel's stores are not: they leave through shared
     * memory whole rows at a time, at the same rate whatever C's
     * alignment) */
    e.memory_ms += under_ms;
    /* A stage's own workspace is written and read once before it runs:
     * the padded copies of operands a tensor map cannot take (persistent,
     * cluster_multicast), the rounded operands of the TF32 stages.  (A
     * stage that slices K itself keeps its slabs there: reduce_ms.) */
    if (k->workspace && !(g->spread == SPREAD_SLICES && !(k->flags & KERNEL_SPLIT_K))) {
        double ws = (double)k->workspace(p);
        if (ws > 0)
            e.prepare_ms = 2 * LAUNCH_MS + 2 * ws / (copy_gbps * 1e9) * 1e3;
    }
    e.ms = fmax(e.overhead_ms + e.prepare_ms + fmax(e.compute_ms, e.memory_ms) + e.store_ms +
                    e.reduce_ms,
                r->floor_ms);
    return e;
}

struct model_estimate model_estimate(const struct gemm_kernel *k, const struct gemm_problem *p,
                                     int sm_count)
{
    const struct model_rates *a = rates_active();
    return model_estimate_rate(k, p, sm_count > 0 ? sm_count : a->sm_count,
                               rates_find(a, gemm_sigs[p->sig].name, k->name), a->copy_gbps);
}
