/* auto's rates fitted to timings (fit.h). */
#include "src/plan/fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/plan/model.h"

#define SLICE_EFF_LEAST 0.5
#define SLICE_EFF_MOST 16.0
#define STREAM_EFF_LEAST 0.8
#define STREAM_EFF_MOST 8.0
#define RAGGED_EFF_LEAST 0.5
#define RAGGED_EFF_MOST 16.0
#define SHORT_EFF_LEAST 0.2
#define TINY_FLOP 16e6            /* a sample at most this and TINY_BYTES: the floor's alone */
#define TINY_BYTES 16777216.0

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int rates_stalled(const double *floors, int n, double floor_ms)
{
    double v[64];
    int m = 0;
    for (int i = 0; i < n && m < 64; i++)
        if (floors[i] > 0)
            v[m++] = floors[i];
    if (m < 3)
        return 0;
    return floor_ms > RATES_STALL_FLOOR * median_of(v, m);
}

/* A product too small to say anything of a rate: its time is the
 * kernel's launches and first wave (the floor). */
static int sample_tiny(const struct rate_sample *s)
{
    const struct gemm_problem *p = &s->p;
    return 2.0 * p->batch * (double)p->m * p->n * p->k <= TINY_FLOP && model_bytes(p) <= TINY_BYTES;
}

static double sample_tflops(const struct rate_sample *s)
{
    const struct gemm_problem *p = &s->p;
    return 2.0 * p->batch * (double)p->m * p->n * p->k / (s->ms / 1e3) / 1e12;
}

/* A memory-bound kernel: its best bytes a second, and its TFLOP/s, the
 * least of those where a single product took 1.5 times the time its best
 * bandwidth would (the N path's 32 columns of double took 1.9 times, and
 * without a ceiling the model put float64 17408 x 28 x 3985 at 0.25 ms
 * where it ran 0.77; the thin stages' multiply-adds slow with the thin
 * side's bound: float16 16 x 8192 x 4096 ran at 10.9 TFLOP/s, 32 rows at
 * 7.4, and 17 x 2415 x 579 at 69% of cuBLAS where mma_tiny ran it at 127%,
 * NVIDIA H100, 2026-11-26).  A sample's TFLOP/s are taken at the blocks'
 * full use, its own divided by the share the model gives it (util: the
 * stage's rows or columns past the product). */
static int fit_memory(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                      int sm_count, double copy_gbps, struct rate_entry *out)
{
    double best = 0, flops_best = 0, busy[64], util[64];
    /* (each sample's time less its launch and what its slices add, as the
     * model has them) */
    static const struct rate_entry any = { "", "", 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0 };
    for (int i = 0; i < n && i < 64; i++) {
        struct model_estimate m = model_estimate_rate(k, &s[i].p, sm_count, &any, copy_gbps);
        busy[i] = fmax(s[i].ms - m.overhead_ms - m.reduce_ms, s[i].ms / 2);
        util[i] = m.util > 0 ? m.util : 1;
        best = fmax(best, model_bytes(&s[i].p) / (busy[i] / 1e3) / 1e9);
    }
    if (!(best > 0))
        return -1;
    for (int i = 0; i < n && i < 64; i++) {
        struct rate_sample b = s[i];
        b.ms = busy[i];
        double x = sample_tflops(&b) / util[i];
        if (s[i].p.batch == 1 && busy[i] > 1.5 * model_bytes(&s[i].p) / (best * 1e9) * 1e3)
            flops_best = flops_best > 0 ? fmin(flops_best, x) : x;
    }
    out->gbps = best;
    out->tflops = flops_best;
    return 0;
}

/* A memory-bound kernel's two paths apart: products of at most
 * MODEL_FEW_ROWS rows (the thin stages read B once, A's few rows as
 * broadcasts) and taller ones (A read once, B's few columns as
 * broadcasts), which run at rates of their own (float64 thin, NVIDIA
 * H100, 2026-11-26: the M path moved 2.7 TB/s at 1 x 8192 x 4096 and ran
 * 16 x 8192 x 4096 at 4.5 TFLOP/s, the N path moved 1.7 TB/s at 32768 x
 * 16 x 1024 and ran 32768 x 32 x 1024 at 9.9).  A kernel measured on one
 * path alone has one pair. */
static int fit_paths(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                     int sm_count, double copy_gbps, struct rate_entry *out)
{
    struct rate_sample few[64], tall[64];
    int nf = 0, nt = 0;
    for (int i = 0; i < n; i++) {
        /* (single products: a stack of small ones, 4096 x 32x32x32, is
         * no path's, and small_k's is not two paths) */
        if (s[i].p.batch != 1)
            continue;
        if (s[i].p.m <= MODEL_FEW_ROWS && nf < 64)
            few[nf++] = s[i];
        else if (s[i].p.m > MODEL_FEW_ROWS && nt < 64)
            tall[nt++] = s[i];
    }
    if (!nf || !nt)
        return fit_memory(k, s, n, sm_count, copy_gbps, out);
    struct rate_entry t = *out;
    if (fit_memory(k, few, nf, sm_count, copy_gbps, out) != 0 ||
        fit_memory(k, tall, nt, sm_count, copy_gbps, &t) != 0)
        return fit_memory(k, s, n, sm_count, copy_gbps, out);
    out->tall_tflops = t.tflops;
    out->tall_gbps = t.gbps;
    return 0;
}

/* The bytes a second a tiled kernel stored C at, where its samples are
 * bound by those stores at its fitted rate: C at least 4 times A's and B's
 * bytes, one slice, and a time beyond 1.5 times the compute (a K of 8 over
 * a large C); the stores are the time the compute and the reads do not
 * take (src/plan/model.c adds them after), or for a persistent kernel,
 * which stores a tile while its next one loads, the time the reads do not
 * take.  The median of those, never above the copy's (a kernel that seems
 * faster is bound by something the model has elsewhere); 0 (C at the
 * copy's rate, under the compute) where none is. */
static double fit_store(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                        int sm_count, double copy_gbps, const struct rate_entry *e)
{
    double v[64];
    int nv = 0;
    int persistent = (k->flags & KERNEL_PERSISTENT) != 0;
    struct rate_entry no_store = *e;
    no_store.gbps = 0;
    for (int i = 0; i < n && nv < 64; i++) {
        double out = model_out_bytes(&s[i].p), in = model_bytes(&s[i].p) - out;
        struct model_estimate m = model_estimate_rate(k, &s[i].p, sm_count, &no_store, copy_gbps);
        double busy = s[i].ms - m.overhead_ms - m.prepare_ms - m.reduce_ms;
        double reads = in / (copy_gbps * 1e9) * 1e3;
        double stores = busy - (persistent ? reads : fmax(m.compute_ms, reads));
        if (m.slices == 1 && out >= 4 * in && busy > 1.5 * m.compute_ms && stores > 0)
            v[nv++] = out / (stores / 1e3) / 1e9;
    }
    return nv ? fmin(median_of(v, nv), copy_gbps) : 0;
}

/* A tiled kernel's full rate: each sample's TFLOP/s over the share of
 * the rate the model gives its shape, its workspace's copies and its
 * stores of C at `store_gbps` (0: none apart) taken out of its time. */
static double fit_rate(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                       int sm_count, double copy_gbps, double store_gbps)
{
    double v[64], best = 0, big = 0, big_work = 0;
    int nv = 0;
    const struct rate_entry any = { "", "", 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        /* (the workspace's copies are the model's apart from the rate) */
        double prepare = model_estimate_rate(k, &s[i].p, sm_count, &any, copy_gbps).prepare_ms;
        double store = store_gbps > 0 ? model_out_bytes(&s[i].p) / (store_gbps * 1e9) * 1e3 : 0;
        struct rate_sample busy = s[i];
        busy.ms = fmax(s[i].ms - prepare - store, s[i].ms / 2);
        double u = model_util(k, &s[i].p, sm_count), x = sample_tflops(&busy) / u;
        double w = (double)s[i].p.batch * s[i].p.m * s[i].p.n * s[i].p.k;
        if (u >= 0.5 && w > big_work) {
            big = x;
            big_work = w;
        }
        if (u < 0.25)
            best = fmax(best, x);
        else if (nv < 64)
            v[nv++] = x;
    }
    return big > 0 ? big : nv ? median_of(v, nv) : best;
}

/* A tiled kernel's full rate and its stores' bytes a second, each fitted
 * with the other in hand (twice: the second pass moves them by a few
 * percent at most; a persistent kernel's stores, under its compute, take
 * nothing out of its full rate); then, for a sliced one, how its sliced
 * runs compare with the model's time for them at that rate: where the
 * model's compute binds, against the compute (slice_eff); where its
 * operands' bytes do, against the bytes (stream_eff).  Which binds is the
 * model's word with the factors in hand, so the two are fitted twice, the
 * second time with the first's factors (a sample near the line may cross
 * it once they scale each side). */
static int fit_tiled(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                     int sm_count, double copy_gbps, struct rate_entry *out)
{
    int apart = !(k->flags & KERNEL_PERSISTENT);
    out->gbps = 0;
    out->slice_eff = out->ragged_eff = 1;
    out->stream_eff = 0;
    for (int pass = 0; pass < 2; pass++) {
        out->tflops = fit_rate(k, s, n, sm_count, copy_gbps, apart ? out->gbps : 0);
        if (!(out->tflops > 0))
            return -1;
        out->gbps = fit_store(k, s, n, sm_count, copy_gbps, out);
    }
    out->tflops = fit_rate(k, s, n, sm_count, copy_gbps, apart ? out->gbps : 0);
    for (int pass = 0; pass < 2; pass++) {
        struct rate_entry at = *out;   /* this pass's factors; none the first time */
        double ratio[64], stream[64];
        int nr = 0, ns = 0;
        for (int i = 0; i < n && nr < 64 && ns < 64; i++) {
            struct model_estimate e = model_estimate_rate(k, &s[i].p, sm_count, &at, copy_gbps);
            double sliced = e.compute_ms + e.reduce_ms;
            double busy = s[i].ms - e.overhead_ms - e.prepare_ms - e.store_ms;
            if (e.slices <= 1 || !(sliced > 0))
                continue;
            /* (each factor backed out of the estimate that carries it) */
            double slice_f = at.slice_eff > 0 ? at.slice_eff : 1;
            double stream_f = at.stream_eff > 0 ? at.stream_eff : 1;
            /* (a time the bytes explain says nothing of the slices; and
             * the bytes' factor is of whole tiles streaming both
             * operands, not of a tile mostly idle over a thin product,
             * whose one operand binds otherwise) */
            if (e.memory_ms > e.compute_ms && model_whole_tiles(k, &s[i].p))
                stream[ns++] = (busy - e.reduce_ms) / e.memory_ms * stream_f;
            else if (busy > 1.2 * e.memory_ms / stream_f)
                ratio[nr++] = busy / sliced * slice_f;
        }
        out->slice_eff = nr ? fmin(SLICE_EFF_MOST, fmax(SLICE_EFF_LEAST, median_of(ratio, nr)))
                            : 1;
        out->stream_eff =
            ns ? fmin(STREAM_EFF_MOST, fmax(STREAM_EFF_LEAST, median_of(stream, ns))) : 0;
    }
    return 0;
}

/* A ragged sample against the model with every ragged factor at 1: the
 * time the factor scales (compute and reads, as in the model), and the
 * part of its measured time left for it (*own) and the fill's share of
 * its tiles' k (*share). */
static double ragged_busy(const struct gemm_kernel *k, const struct rate_sample *s,
                          int sm_count, double copy_gbps, const struct rate_entry *e,
                          double *own, double *share)
{
    struct rate_entry aligned = *e;
    aligned.ragged_eff = 1;
    aligned.odd_eff = aligned.few_eff = aligned.short_eff = 0;
    struct model_estimate m = model_estimate_rate(k, &s->p, sm_count, &aligned, copy_gbps);
    *own = s->ms - m.overhead_ms - m.prepare_ms - m.store_ms - m.reduce_ms;
    *share = model_fill_share(k, &s->p, m.slices);
    /* (against the larger of the two, though a tiled kernel's factor
     * scales its compute alone, model.c: over the compute alone, the
     * short and thin samples whose bytes and launches outweigh their
     * multiply-adds put `persistent`'s factor at 2.0, where its one large
     * sample ran 1.2, and its estimates of large ragged products 30-70%
     * over their times: 4097^3 +41%, NVIDIA H200, 2026-11-27) */
    return fmax(m.compute_ms, m.memory_ms);
}

/* A tiled sample's measured time over its aligned model as the factor of
 * both operands' narrow loads (model_narrow_share); a ratio under 1 is
 * the model's error there, not the loads', and stands as it is. */
static double both_narrow(const struct gemm_kernel *k, const struct gemm_problem *p, double ratio)
{
    double share = model_narrow_share(k, p);
    return share > 0 && ratio > 1 ? 1 + (ratio - 1) / share : ratio;
}

/* How much slower than modelled a kernel ran where the rows of A or B are
 * not whole 16-byte units (the loads a stage takes there are narrower, or
 * a copy comes first): the measured time over the model's at the fitted
 * rate.  Called apart for the samples of a few rows (few_eff), with odd
 * 16-bit rows (odd_eff) and the others (ragged_eff).  The median over the
 * samples; with `largest`, the sample of the most multiply-adds.
 *
 * A float32 tiled stage takes the largest for ragged_eff, and fits its
 * samples of a short K apart (short_eff, fit_short): its factor describes
 * the main loop's loads, and the thin and short samples beside it
 * measured the model's tile and fill terms as much as the loads
 * (`cp_async`: 1.0 on 3001 x 2999 x 1003, 0.75 on 13001 x 7 x 2003, 0.56
 * on 8191 x 8193 x 5; their median, 0.74, took it for 4097^3, 86% of
 * cuBLAS where `edge_peel` runs 98%).  The 16-bit and FP64 stages keep the
 * median over all: there the narrow loads cost a tile what its rows ask
 * (float16 `mma_sync` ran 3001 x 2999 x 1003 4.3 times its aligned model,
 * and 38 x 8846 x 4693, 38 rows of its 128, at 118% of cuBLAS; with the
 * short sample out of the median auto sent it to `persistent`, 62%), and
 * the split moved float16's sweep down (the changed shapes 0.95 times as
 * fast, geometric mean) and float64's by as much either way as two
 * calibrations do (NVIDIA H100, 2026-11-27, `bench --sweep 200 --seed
 * 41`, the split and the build before in one run). */
static double fit_ragged(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                         int sm_count, double copy_gbps, const struct rate_entry *e, int largest)
{
    double ratio[64], most_macs = 0, biggest = 0;
    int nr = 0;
    for (int i = 0; i < n && nr < 64; i++) {
        if (!model_ragged(&s[i].p))
            continue;
        double own, share;
        double busy = ragged_busy(k, &s[i], sm_count, copy_gbps, e, &own, &share);
        if (busy <= 0)
            continue;
        ratio[nr] = both_narrow(k, &s[i].p, own / busy);
        /* (the part of it that the fill's factor, where fitted, explains) */
        if (e->short_eff > 0 && !model_few(&s[i].p) && share < 1)
            ratio[nr] = (ratio[nr] - e->short_eff * share) / (1 - share);
        double macs = (double)s[i].p.batch * s[i].p.m * s[i].p.n * s[i].p.k;
        if (macs > most_macs) {
            most_macs = macs;
            biggest = ratio[nr];
        }
        nr++;
    }
    if (!nr)
        return 1;
    double eff = largest ? biggest : median_of(ratio, nr);
    return fmin(RAGGED_EFF_MOST, fmax(RAGGED_EFF_LEAST, eff));
}

/* A tiled kernel's short_eff: at each ragged sample of a short K, the
 * factor over its fill share that, blended with the long factor already
 * fitted (e's ragged_eff or odd_eff) over the rest, gives its measured
 * time (model.c); the median over the samples. */
static double fit_short(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                        int sm_count, double copy_gbps, const struct rate_entry *e)
{
    double ratio[64];
    int nr = 0;
    for (int i = 0; i < n && nr < 64; i++) {
        double own, share;
        double busy = ragged_busy(k, &s[i], sm_count, copy_gbps, e, &own, &share);
        if (busy <= 0 || share <= 0)
            continue;
        /* (a time mostly made of what the factor does not scale says
         * nothing of it: `edge_peel`'s strips and copies at 8191 x 8193 x 5) */
        if (own < 0.5 * s[i].ms)
            continue;
        double whole = both_narrow(k, &s[i].p, own / busy);
        ratio[nr++] = (whole - model_ragged_factor(k, &s[i].p, e) * (1 - share)) / share;
    }
    return nr ? fmin(RAGGED_EFF_MOST, fmax(SHORT_EFF_LEAST, median_of(ratio, nr))) : 0;
}

int rates_fit(const struct gemm_kernel *k, enum gemm_sig sig, const struct rate_sample *s,
              int n, int sm_count, double copy_gbps, struct rate_entry *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->type, sizeof out->type, "%s", gemm_sigs[sig].name);
    snprintf(out->kernel, sizeof out->kernel, "%s", k->name);
    out->slice_eff = out->ragged_eff = 1;
    struct rate_sample kept[64], ragged[64], odd[64], few[64], shorts[64];
    int nk = 0, nr = 0, no = 0, nf = 0, ns = 0;
    /* (a float32 tiled stage: its ragged factor from its largest sample,
     * a short K's apart; the 16-bit and FP64 stages keep the median over
     * all their ragged samples, see below) */
    int split = k->geometry && k->geometry->spread != SPREAD_MEMORY && sig == GEMM_F32;
    double floor_ms = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(s[i].ms) || s[i].ms <= 0)
            continue;
        if (sample_tiny(&s[i])) {
            if (floor_ms == 0 || s[i].ms < floor_ms)
                floor_ms = s[i].ms;
        } else if (model_few_rows(k, &s[i].p)) {
            if (nf < 64)
                few[nf++] = s[i];
        } else if (split && model_ragged(&s[i].p) && s[i].p.k <= MODEL_SHORT_K) {
            if (ns < 64)
                shorts[ns++] = s[i];
        } else if (model_odd(&s[i].p)) {   /* (odd 16-bit rows are ragged too) */
            if (no < 64)
                odd[no++] = s[i];
        } else if (model_ragged(&s[i].p)) {
            if (nr < 64)
                ragged[nr++] = s[i];
        } else if (nk < 64) {
            kept[nk++] = s[i];
        }
    }
    if (!nk || !k->geometry)
        return -1;
    int rc = k->geometry->spread == SPREAD_MEMORY ? fit_paths(k, kept, nk, sm_count, copy_gbps, out)
                                                   : fit_tiled(k, kept, nk, sm_count, copy_gbps, out);
    /* (rows of odd 16-bit values alone: their factor stands for both; a
     * short K's factor with the long ones in hand, then those again with
     * it, as each ragged sample's time holds both) */
    for (int pass = 0; !rc && pass < (ns ? 2 : 1); pass++) {
        if (no) {
            out->odd_eff = fit_ragged(k, odd, no, sm_count, copy_gbps, out, 0);
            out->ragged_eff = nr ? fit_ragged(k, ragged, nr, sm_count, copy_gbps, out, split)
                                 : out->odd_eff;
        } else {
            out->ragged_eff = fit_ragged(k, ragged, nr, sm_count, copy_gbps, out, split);
        }
        if (ns)
            out->short_eff = fit_short(k, shorts, ns, sm_count, copy_gbps, out);
    }
    /* (a few rows' factor apart where measured; 0 leaves the others) */
    if (!rc && nf)
        out->few_eff = fit_ragged(k, few, nf, sm_count, copy_gbps, out, 0);
    /* (last: the fits above compare samples with the model unfloored) */
    out->floor_ms = floor_ms;
    return rc;
}
