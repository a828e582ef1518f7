/* auto's rates fitted to timings (fit.h). */
#include "src/plan/fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/plan/model.h"

#define SLICE_EFF_LEAST 0.5
#define SLICE_EFF_MOST 16.0
#define RAGGED_EFF_LEAST 0.5
#define RAGGED_EFF_MOST 16.0

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

static double sample_tflops(const struct rate_sample *s)
{
    const struct gemm_problem *p = &s->p;
    return 2.0 * p->batch * (double)p->m * p->n * p->k / (s->ms / 1e3) / 1e12;
}

/* A memory-bound kernel: its best bytes a second, and its TFLOP/s where a
 * single product took twice the time its best bandwidth would. */
static int fit_memory(const struct rate_sample *s, int n, struct rate_entry *out)
{
    double best = 0, flops_best = 0;
    for (int i = 0; i < n; i++) {
        double busy = fmax(s[i].ms - MODEL_LAUNCH_MS, s[i].ms / 2);
        best = fmax(best, model_bytes(&s[i].p) / (busy / 1e3) / 1e9);
    }
    if (!(best > 0))
        return -1;
    for (int i = 0; i < n; i++) {
        double busy = fmax(s[i].ms - MODEL_LAUNCH_MS, s[i].ms / 2);
        if (s[i].p.batch == 1 && busy > 2 * model_bytes(&s[i].p) / (best * 1e9) * 1e3)
            flops_best = fmax(flops_best, sample_tflops(&s[i]));
    }
    out->gbps = best;
    out->tflops = flops_best;
    return 0;
}

/* A tiled kernel's full rate; then, for a sliced one, how its sliced
 * runs compare with the model's time for them at that rate. */
static int fit_tiled(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                     int sm_count, double copy_gbps, struct rate_entry *out)
{
    double v[64], ratio[64], best = 0, big = 0, big_work = 0;
    int nv = 0, nr = 0;
    const struct rate_entry any = { "", "", 1, 0, 1, 1 };
    for (int i = 0; i < n; i++) {
        /* (the workspace's copies are the model's apart from the rate) */
        double prepare = model_estimate_rate(k, &s[i].p, sm_count, &any, copy_gbps).prepare_ms;
        struct rate_sample busy = s[i];
        busy.ms = fmax(s[i].ms - prepare, s[i].ms / 2);
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
    double rate = big > 0 ? big : nv ? median_of(v, nv) : best;
    if (!(rate > 0))
        return -1;
    out->tflops = rate;
    out->gbps = 0;
    out->slice_eff = out->ragged_eff = 1;
    for (int i = 0; i < n && nr < 64; i++) {
        struct model_estimate e = model_estimate_rate(k, &s[i].p, sm_count, out, copy_gbps);
        double sliced = e.compute_ms + e.reduce_ms;
        if (e.slices > 1 && sliced > 0 && e.compute_ms >= e.memory_ms)
            ratio[nr++] = (s[i].ms - e.overhead_ms - e.prepare_ms) / sliced;
    }
    if (nr)
        out->slice_eff = fmin(SLICE_EFF_MOST, fmax(SLICE_EFF_LEAST, median_of(ratio, nr)));
    return 0;
}

/* How much slower than modelled a kernel ran where the rows of A or B are
 * not whole 16-byte units (the loads a stage takes there are narrower, or
 * a copy comes first): the median over those samples of the measured time
 * over the model's at the fitted rate. */
static double fit_ragged(const struct gemm_kernel *k, const struct rate_sample *s, int n,
                         int sm_count, double copy_gbps, const struct rate_entry *e)
{
    double ratio[64];
    int nr = 0;
    struct rate_entry aligned = *e;
    aligned.ragged_eff = 1;
    for (int i = 0; i < n && nr < 64; i++) {
        if (!model_ragged(&s[i].p))
            continue;
        struct model_estimate m = model_estimate_rate(k, &s[i].p, sm_count, &aligned, copy_gbps);
        double busy = fmax(m.compute_ms, m.memory_ms) + m.reduce_ms;
        if (busy > 0)
            ratio[nr++] = (s[i].ms - m.overhead_ms - m.prepare_ms) / busy;
    }
    return nr ? fmin(RAGGED_EFF_MOST, fmax(RAGGED_EFF_LEAST, median_of(ratio, nr))) : 1;
}

int rates_fit(const struct gemm_kernel *k, enum gemm_sig sig, const struct rate_sample *s,
              int n, int sm_count, double copy_gbps, struct rate_entry *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->type, sizeof out->type, "%s", gemm_sigs[sig].name);
    snprintf(out->kernel, sizeof out->kernel, "%s", k->name);
    out->slice_eff = out->ragged_eff = 1;
    struct rate_sample kept[64], ragged[64];
    int nk = 0, nr = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(s[i].ms) || s[i].ms <= 0)
            continue;
        if (model_ragged(&s[i].p) && nr < 64)
            ragged[nr++] = s[i];
        else if (!model_ragged(&s[i].p) && nk < 64)
            kept[nk++] = s[i];
    }
    if (!nk || !k->geometry)
        return -1;
    int rc = k->geometry->spread == SPREAD_MEMORY
                 ? fit_memory(kept, nk, out)
                 : fit_tiled(k, kept, nk, sm_count, copy_gbps, out);
    if (!rc)
        out->ragged_eff = fit_ragged(k, ragged, nr, sm_count, copy_gbps, out);
    return rc;
}
