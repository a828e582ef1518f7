/* Unit tests of auto's rates (src/plan/rates.c) and of the model's use of
 * them, no GPU: the file's text read back, each reason a kept file is
 * stale, the table scaled to another GPU, the fit recovering rates from
 * timings the model itself made, and the model following rates_use.
 * Built by tests/tests.mk as build/tests/test_rates; XDG_CACHE_HOME points
 * into a temporary directory.  Each check prints only when it fails; the
 * last line counts them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/plan/fit.h"
#include "src/plan/model.h"
#include "src/plan/rates.h"
#include "tests/check.h"
#include "tests/problem.h"


static const struct gemm_kernel *kernel(const char *name)
{
    const struct gemm_kernel *k = gemm_kernel_find(name);
    if (!k) {
        printf("FAIL: no kernel %s in the table\n", name);
        exit(1);
    }
    return k;
}

static struct rates_device h100(void)
{
    struct rates_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    d.cc = 90;
    d.sm_count = 132;
    d.clock_mhz = 1980;
    d.mem_gbps = 3352;
    d.driver = 13000;
    return d;
}

static void measured(const struct rates_device *d, struct model_rates *r, time_t when)
{
    memset(r, 0, sizeof *r);
    r->source = RATES_MEASURED;
    r->device = *d;
    snprintf(r->measured_on, sizeof r->measured_on, "%s", d->name);
    struct tm tm;
    strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&when, &tm));
    r->sm_count = d->sm_count;
    r->copy_gbps = 3004.5;
    r->seconds = 2.5;
    r->compute_scale = r->memory_scale = 1;
    r->count = 2;
    r->e[0] = (struct rate_entry){ "f16", "cluster_multicast", 612.25, 1700, 3.5, 2.25, 0.0135,
                                   4.5, 6.25, 0, 0, 0.75, 1.625 };
    r->e[1] = (struct rate_entry){ "f32", "thin", 0.5, 2950.0, 1, 1, 0, 0, 0, 7.5, 1500.0, 0, 0 };
}

static void test_text(void)
{
    struct rates_device d = h100();
    struct model_rates r, back;
    char text[RATES_TEXT_MAX], why[256];
    time_t now = time(NULL);
    measured(&d, &r, now - 60);
    rates_text(&r, text, sizeof text);
    CHECK(rates_parse(text, &d, now, &back, why, sizeof why) == RATES_LOADED, "%s", why);
    CHECK(back.count == 2 && back.source == RATES_MEASURED, "%zu rates", back.count);
    const struct rate_entry *e = rates_find(&back, "f16", "cluster_multicast");
    CHECK(e && fabs(e->tflops - 612.25) < 0.01 && fabs(e->slice_eff - 3.5) < 0.01 &&
              fabs(e->ragged_eff - 2.25) < 0.01 && fabs(e->gbps - 1700) < 0.1 &&
              fabs(e->floor_ms - 0.0135) < 1e-6 && fabs(e->odd_eff - 4.5) < 0.01 &&
              fabs(e->few_eff - 6.25) < 0.01 && fabs(e->short_eff - 0.75) < 0.001 &&
              fabs(e->stream_eff - 1.625) < 0.001,
          "f16 cluster_multicast read back");
    CHECK(e && e->tall_tflops == 0 && e->tall_gbps == 0, "no N path's rates: none read back");
    e = rates_find(&back, "f32", "thin");
    CHECK(e && fabs(e->gbps - 2950) < 0.1 && e->floor_ms == 0 && e->odd_eff == 0 &&
              e->few_eff == 0 && e->short_eff == 0 && e->stream_eff == 0 &&
              fabs(e->tall_tflops - 7.5) < 0.001 &&
              fabs(e->tall_gbps - 1500) < 0.1,
          "f32 thin's bandwidths, both paths, read back");
    CHECK(fabs(back.copy_gbps - 3004.5) < 0.1, "copy %.1f", back.copy_gbps);
    CHECK(!rates_find(&back, "f16", "gemv"), "no rate for an entry not kept");

    /* Each reason it is stale. */
    struct rates_device other = d;
    other.driver = 12080;
    CHECK(rates_parse(text, &other, now, &back, why, sizeof why) == RATES_STALE &&
              strstr(why, "driver"), "another driver: %s", why);
    other = d;
    snprintf(other.name, sizeof other.name, "NVIDIA H200");
    CHECK(rates_parse(text, &other, now, &back, why, sizeof why) == RATES_STALE,
          "another GPU");
    other = d;
    other.sm_count = 114;
    CHECK(rates_parse(text, &other, now, &back, why, sizeof why) == RATES_STALE,
          "another SM count");
    CHECK(rates_parse(text, &d, now + (RATES_STALE_DAYS + 1) * 86400.0, &back, why,
                      sizeof why) == RATES_STALE && strstr(why, "days"), "old: %s", why);
    char *fp = strstr(text, rates_fingerprint());
    CHECK(fp != NULL, "the build line carries the fingerprint");
    if (fp) {
        fp[0] = fp[0] == '0' ? '1' : '0';
        CHECK(rates_parse(text, &d, now, &back, why, sizeof why) == RATES_STALE &&
                  strstr(why, "build"), "another build: %s", why);
        fp[0] = rates_fingerprint()[0];
    }
    /* Malformed rate lines, each after the good ones. */
    static const struct {
        const char *line, *what;
    } bad_lines[] = {
        { "rate f16 wgmma 1 0 1 1 0 0 0 0 0 0 -1", "a negative stream_eff" },
        { "rate f16 wgmma 1 0 1 1 0 0 0 0 0 0 inf", "an infinite stream_eff" },
        { "rate f16 wgmma 1 0 1 1 0 0 0 0 0 0", "a rate line of the seventh format (no stream_eff)" },
        { "rate f16 wgmma 1 0 1 1 0 0 0 0 0 -1 0", "a negative short_eff" },
        { "rate f16 wgmma 1 0 1 1 0 0 0 0 0 nan 0", "a NaN short_eff" },
        { "rate f16 wgmma 1 0 1 1 0 0 0 0 0", "a rate line of the sixth format (no short_eff)" },
        { "rate f16 wgmma 1 0 1 1 0 0 0 -1 0 0 0", "a negative tall_tflops" },
        { "rate f16 wgmma 1 0 1 1 0 0 0 0 nan 0 0", "a NaN tall_gbps" },
        { "rate f16 wgmma 1 0 1 1 0 0 0", "a rate line of the fifth format (no N path's)" },
        { "rate f16 wgmma nan 0 1 1 0 0 0 0 0 0 0", "a NaN rate" },
        { "rate f16 wgmma 1 0 0 1 0 0 0 0 0 0 0", "a slice_eff of 0" },
        { "rate f16 wgmma 1 0 1 0 0 0 0 0 0 0 0", "a ragged_eff of 0" },
        { "rate f16 wgmma 1 0 1 1 -2 0 0 0 0 0 0", "a negative floor" },
        { "rate f16 wgmma 1 0 1 1 0 -1 0 0 0 0 0", "a negative odd_eff" },
        { "rate f16 wgmma 1 0 1 1 0 inf 0 0 0 0 0", "an infinite odd_eff" },
        { "rate f16 wgmma 1 0 1 1 0 0 -1 0 0 0 0", "a negative few_eff" },
        { "rate f16 wgmma 1 0 1 1 0 0 nan 0 0 0 0", "a NaN few_eff" },
        { "rate f16 wgmma 1 0 1 1 0 0", "a rate line of the fourth format (no few_eff)" },
        { "rate f16 wgmma 1 0 1 1 0", "a rate line of the third format (no odd_eff)" },
        { "rate f16 wgmma 1 0 1 1", "a rate line of the second format (no floor)" },
        { "rate f16 wgmma 1 0 1", "a rate line of the first format" },
    };
    char bad[RATES_TEXT_MAX + 64];
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
        snprintf(bad, sizeof bad, "%s%s\n", text, bad_lines[i].line);
        CHECK(rates_parse(bad, &d, now, &back, why, sizeof why) == RATES_STALE,
              "%s is malformed", bad_lines[i].what);
    }
    CHECK(rates_parse("# gemmcli rates 999\n", &d, now, &back, why, sizeof why) == RATES_STALE,
          "another version");
}

static void test_store(void)
{
    char dir[] = "/tmp/gemmcli-rates-XXXXXX", why[256], path[4096];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    setenv("XDG_CACHE_HOME", dir, 1);
    struct rates_device d = h100();
    struct model_rates r, back;
    time_t now = time(NULL);
    CHECK(rates_load(&d, now, &back, why, sizeof why) == RATES_MISSING, "no file yet");
    measured(&d, &r, now);
    CHECK(rates_store(&r, why, sizeof why) == 0, "store: %s", why);
    CHECK(rates_path(&d, path, sizeof path) == 0 && access(path, R_OK) == 0, "%s", path);
    CHECK(strstr(path, "rates-NVIDIA_H100_80GB_HBM3-90-132.txt") != NULL, "%s", path);
    CHECK(rates_load(&d, now, &back, why, sizeof why) == RATES_LOADED, "%s", why);
    struct rates_device newer = d;
    newer.driver = 13010;
    CHECK(rates_load(&newer, now, &back, why, sizeof why) == RATES_STALE, "new driver");
    unlink(path);
    strcat(dir, "/gemmcli");
    CHECK(rmdir(dir) == 0, "rmdir %s", dir);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
}

static void test_scaled(void)
{
    struct rates_device d = h100();
    struct model_rates t, s;
    rates_table(&t);
    d.sm_count = t.sm_count / 2;
    d.clock_mhz = auto_rate_clock_mhz;
    d.mem_gbps = auto_rate_mem_gbps / 4;
    rates_scaled(&d, &s);
    CHECK(s.source == RATES_SCALED && fabs(s.compute_scale - 0.5) < 1e-3 &&
              fabs(s.memory_scale - 0.25) < 1e-3, "scales %.3f %.3f", s.compute_scale,
          s.memory_scale);
    const struct rate_entry *a = rates_find(&t, "f16", "wgmma_pipeline");
    const struct rate_entry *b = rates_find(&s, "f16", "wgmma_pipeline");
    CHECK(a && b && fabs(b->tflops - a->tflops / 2) < 1e-6, "compute halves");
    a = rates_find(&t, "f32", "gemv");
    b = rates_find(&s, "f32", "gemv");
    CHECK(a && b && fabs(b->gbps - a->gbps / 4) < 1e-6, "bytes a quarter");
    CHECK(fabs(s.copy_gbps - t.copy_gbps / 4) < 1e-6, "copy a quarter");
    char words[512];
    rates_describe(&s, words, sizeof words);
    CHECK(strstr(words, "scaled") && strstr(words, auto_rate_device), "%s", words);

    /* The model follows the rates in use: on half the SMs at the same
     * clock, a large product's compute takes twice as long. */
    const struct gemm_kernel *k = kernel("wgmma_pipeline");
    struct gemm_problem p = problem(GEMM_F16, 1, 8192, 8192, 8192);
    rates_use(&t);
    double full = model_estimate(k, &p, 0).compute_ms;
    rates_use(&s);
    double half = model_estimate(k, &p, 0).compute_ms;
    CHECK(half > 1.9 * full && half < 2.2 * full, "half the SMs: %.3f ms against %.3f", half,
          full);
    rates_use(&t);
}

/* Timings made by the model at known rates: the fit finds those rates. */
/* The table's rates in use, and samples of kernel k at n shapes timed as
 * the model says at rate `truth` (132 SMs, a copy at 3000 GB/s). */
static void model_samples(const struct gemm_kernel *k, enum gemm_sig sig,
                          const int64_t (*shapes)[3], int n, const struct rate_entry *truth,
                          struct rate_sample *s)
{
    static struct model_rates t;
    rates_table(&t);
    rates_use(&t);
    for (int i = 0; i < n; i++) {
        s[i].p = problem(sig, 1, shapes[i][0], shapes[i][1], shapes[i][2]);
        s[i].ms = model_estimate_rate(k, &s[i].p, 132, truth, 3000).ms;
    }
}

static void test_fit(void)
{
    struct model_rates t;   /* the table, altered below */
    rates_table(&t);
    const int sms = 132;
    const struct gemm_kernel *k = kernel("wgmma_pipeline");
    /* (few_eff over odd_eff: a tiled stage's few odd rows cost odd_eff at least,
     * model.c, so a few_eff under it would not show in the samples) */
    struct rate_entry truth = { "f16", "wgmma_pipeline", 500, 700, 2.5, 3, 0.02, 5, 6, 0, 0, 0, 0 },
                      fit;
    int64_t shapes[][3] = { { 8192, 8192, 2048 }, { 8192, 8192, 32 }, { 512, 512, 262144 },
                            { 3002, 2998, 1002 }, { 8192, 8192, 8 }, { 64, 64, 64 },
                            { 3001, 2999, 1003 }, { 7, 13001, 2003 }, { 8190, 8194, 6 } };
    struct rate_sample s[9];
    model_samples(k, GEMM_F16, shapes, 9, &truth, s);
    struct model_estimate e = model_estimate_rate(k, &s[2].p, sms, &truth, 3000);
    CHECK(e.slices > 1 && e.compute_ms > e.memory_ms,
          "512x512x262144 is sliced (%d) and its compute binds", e.slices);
    CHECK(model_ragged(&s[3].p) && !model_ragged(&s[0].p) && !model_odd(&s[3].p),
          "3002x2998x1002's rows are ragged, of an even number of values");
    CHECK(model_ragged(&s[6].p) && model_odd(&s[6].p), "3001x2999x1003's are odd");
    CHECK(model_few(&s[7].p) && model_odd(&s[7].p) && !model_few(&s[6].p) &&
              !model_few(&s[5].p),
          "7x13001x2003 is ragged with a few rows (and odd); 3001x2999x1003 and an aligned "
          "64x64x64 are not");
    CHECK(model_ragged_factor(k, &s[7].p, &truth) == 6 &&
              model_ragged_factor(k, &s[6].p, &truth) == 5,
          "a few rows take few_eff before odd_eff");
    struct rate_entry no_few = truth;
    no_few.few_eff = 0;
    CHECK(model_ragged_factor(k, &s[7].p, &no_few) == 5, "without few_eff, odd_eff");
    /* A ragged product's factor: short_eff over the share of a tile's k
     * that fills and drains its pipeline, the long factor over the rest. */
    double share = model_fill_share(k, &s[8].p, 1);
    CHECK(share > 0.5 && share < 1 && model_fill_share(k, &s[0].p, 1) < 0.15 &&
              model_fill_share(kernel("gemv"), &s[8].p, 1) == 0,
          "the fill's share: K = 6 %.2f, K = 2048 %.3f, none for a memory-bound stage", share,
          model_fill_share(k, &s[0].p, 1));
    struct rate_entry with_short = truth;
    with_short.short_eff = 0.6;
    double with = model_estimate_rate(k, &s[8].p, sms, &with_short, 3000).compute_ms;
    double without = model_estimate_rate(k, &s[8].p, sms, &truth, 3000).compute_ms;
    CHECK(fabs(with / without - (3 * (1 - share) + 0.6 * share) / 3) < 1e-9,
          "8190x8194x6: compute %.4f ms with short_eff, %.4f without", with, without);
    CHECK(model_estimate_rate(k, &s[0].p, sms, &with_short, 3000).ms ==
              model_estimate_rate(k, &s[0].p, sms, &truth, 3000).ms,
          "an aligned product takes no ragged factor");
    CHECK(rates_fit(k, GEMM_F16, s, 8, sms, 3000, &fit) == 0, "fit");
    CHECK(fabs(fit.tflops - 500) < 500 * 0.02, "the full rate: %.1f", fit.tflops);
    CHECK(fabs(fit.gbps - 700) < 700 * 0.02, "the stores of C: %.1f GB/s", fit.gbps);
    CHECK(fabs(fit.floor_ms - 0.02) < 1e-9, "the floor: %.4f ms", fit.floor_ms);
    struct gemm_problem tiny = problem(GEMM_F16, 1, 16, 16, 16);
    CHECK(model_estimate_rate(k, &tiny, sms, &fit, 3000).ms >= 0.02,
          "no estimate under the floor");
    /* (the stores come after the compute: at K = 8 they set the time, at
     * K = 2048 they add C's bytes at 700 GB/s to it) */
    struct rate_entry copy_rate = fit;
    copy_rate.gbps = 0;
    double big_fit = model_estimate_rate(k, &s[0].p, sms, &fit, 3000).ms;
    double big_copy = model_estimate_rate(k, &s[0].p, sms, &copy_rate, 3000).ms;
    double stores = model_out_bytes(&s[0].p) / (fit.gbps * 1e9) * 1e3;
    CHECK(model_estimate_rate(k, &s[4].p, sms, &fit, 3000).ms >
              1.5 * model_estimate_rate(k, &s[4].p, sms, &copy_rate, 3000).ms &&
              fabs(big_fit - big_copy - stores) < 1e-9,
          "C's stores at 700 GB/s where the copy moves 3000: %.4f ms against %.4f + %.4f",
          big_fit, big_copy, stores);
    /* A persistent kernel stores a tile while its next one loads: its C
     * stays under its compute, with the reads, at the store rate its
     * samples show (timings made by the model at that rate again). */
    const struct gemm_kernel *pk = kernel("cluster_multicast");
    struct rate_entry ptruth = { "f16", "cluster_multicast", 600, 2000, 1, 1, 0.02, 0, 0, 0, 0, 0, 0 },
                      pfit;
    struct rate_sample ps[6];
    CHECK(pk && (pk->flags & KERNEL_PERSISTENT), "cluster_multicast is persistent");
    CHECK(!(k->flags & KERNEL_PERSISTENT), "%s is not", k->name);
    for (int i = 0; i < 6; i++) {
        ps[i].p = s[i].p;
        ps[i].ms = model_estimate_rate(pk, &ps[i].p, sms, &ptruth, 3000).ms;
    }
    CHECK(rates_fit(pk, GEMM_F16, ps, 6, sms, 3000, &pfit) == 0 &&
              fabs(pfit.gbps - 2000) < 2000 * 0.02 && fabs(pfit.tflops - 600) < 600 * 0.02,
          "a persistent kernel's stores: %.1f GB/s, its full rate %.1f", pfit.gbps, pfit.tflops);
    struct model_estimate pe = model_estimate_rate(pk, &s[4].p, sms, &pfit, 3000);
    double pstores = model_out_bytes(&s[4].p) / (pfit.gbps * 1e9) * 1e3;
    CHECK(pe.store_ms == 0 && pe.memory_ms > pstores && pe.ms > pstores,
          "K = 8: bound by its stores, %.4f ms of C at %.0f GB/s (estimate %.4f)", pstores,
          pfit.gbps, pe.ms);
    pe = model_estimate_rate(pk, &s[0].p, sms, &pfit, 3000);
    CHECK(pe.store_ms == 0 && pe.compute_ms > pe.memory_ms &&
              fabs(pe.ms - pe.overhead_ms - pe.prepare_ms - pe.compute_ms - pe.reduce_ms) < 1e-9,
          "K = 2048: the stores under the compute (%.4f ms of %.4f)", pe.memory_ms, pe.ms);
    CHECK(fabs(fit.slice_eff - 2.5) < 0.15, "the sliced runs' factor: %.2f", fit.slice_eff);
    CHECK(fabs(fit.ragged_eff - 3) < 0.15, "the ragged rows' factor: %.2f", fit.ragged_eff);
    CHECK(fabs(fit.odd_eff - 5) < 0.25, "the odd rows' factor: %.2f", fit.odd_eff);
    CHECK(fabs(fit.few_eff - 6) < 0.3, "the few rows' factor: %.2f", fit.few_eff);
    /* (a short K's sample whose time is mostly C's stores says nothing of
     * the fill: no factor from it) */
    struct rate_sample s9[9];
    memcpy(s9, s, sizeof s9);
    s9[8].ms = model_estimate_rate(k, &s9[8].p, sms, &with_short, 3000).ms;
    CHECK(rates_fit(k, GEMM_F16, s9, 9, sms, 3000, &no_few) == 0 && no_few.short_eff == 0,
          "8190x8194x6 at 700 GB/s of stores: no short factor (%.2f)", no_few.short_eff);
    /* A short K where the fill sets the time: its factor, and the long one
     * beside it (a float32 tiled stage, C's stores at the copy's rate). */
    const struct gemm_kernel *ck = kernel("cp_async");
    struct rate_entry ctruth = { "f32", "cp_async", 48, 0, 1, 1.1, 0.008, 0, 0, 0, 0, 0.52, 0 },
                      cfit;
    int64_t cshapes[][3] = { { 4096, 4096, 2048 }, { 8192, 8192, 32 }, { 4096, 4096, 512 },
                             { 3001, 2999, 1003 }, { 8191, 8193, 5 }, { 4095, 4097, 21 } };
    struct rate_sample cs[6];
    for (int i = 0; i < 6; i++) {
        cs[i].p = problem(GEMM_F32, 1, cshapes[i][0], cshapes[i][1], cshapes[i][2]);
        cs[i].ms = model_estimate_rate(ck, &cs[i].p, sms, &ctruth, 3000).ms;
    }
    CHECK(rates_fit(ck, GEMM_F32, cs, 6, sms, 3000, &cfit) == 0 &&
              fabs(cfit.short_eff - 0.52) < 0.03 && fabs(cfit.ragged_eff - 1.1) < 0.05,
          "cp_async: a short K's factor %.3f, the long one %.3f", cfit.short_eff,
          cfit.ragged_eff);
    CHECK(rates_fit(ck, GEMM_F32, cs, 4, sms, 3000, &cfit) == 0 && cfit.short_eff == 0,
          "no ragged sample of a short K, no short factor (%.2f)", cfit.short_eff);
    struct gemm_problem fp32 = problem(GEMM_F32, 1, 3001, 2999, 1003);
    CHECK(!model_odd(&fp32) && model_ragged_factor(k, &fp32, &fit) == fit.ragged_eff,
          "float rows are never odd: 4-byte values");
    CHECK(!strcmp(fit.type, "f16") && !strcmp(fit.kernel, "wgmma_pipeline"), "names");

    /* A memory-bound kernel: its bandwidth. */
    const struct gemm_kernel *g = kernel("gemv");
    struct rate_entry gtruth = { "f32", "gemv", 0, 2000, 1, 1, 0, 0, 0, 0, 0, 0, 0 };
    struct rate_sample gs[2];
    gs[0].p = problem(GEMM_F32, 1, 1, 8192, 4096);
    gs[1].p = problem(GEMM_F32, 1, 8192, 1, 4096);
    for (int i = 0; i < 2; i++)
        gs[i].ms = model_estimate_rate(g, &gs[i].p, sms, &gtruth, 3000).ms;
    CHECK(rates_fit(g, GEMM_F32, gs, 2, sms, 3000, &fit) == 0 &&
              fabs(fit.gbps - 2000) < 2000 * 0.03, "gemv at %.0f GB/s", fit.gbps);
    CHECK(rates_fit(g, GEMM_F32, gs, 0, sms, 3000, &fit) != 0, "no samples, no rate");

    /* The thin stages' two paths apart: M <= 32 reads B, more rows read A,
     * each at its own rates; one path measured alone serves both. */
    const struct gemm_kernel *th = kernel("thin");
    struct rate_entry ttruth = { "f32", "thin", 8, 2400, 1, 1, 0, 0, 0, 6, 1200, 0, 0 };
    struct rate_sample ts[4];
    ts[0].p = problem(GEMM_F32, 1, 1, 8192, 4096);
    ts[1].p = problem(GEMM_F32, 1, 32, 8192, 4096);
    ts[2].p = problem(GEMM_F32, 1, 32768, 4, 1024);
    ts[3].p = problem(GEMM_F32, 1, 32768, 32, 1024);
    for (int i = 0; i < 4; i++)
        ts[i].ms = model_estimate_rate(th, &ts[i].p, sms, &ttruth, 3000).ms;
    CHECK(rates_fit(th, GEMM_F32, ts, 4, sms, 3000, &fit) == 0 &&
              fabs(fit.gbps - 2400) < 2400 * 0.03 && fabs(fit.tall_gbps - 1200) < 1200 * 0.03 &&
              fabs(fit.tflops - 8) < 8 * 0.03 && fabs(fit.tall_tflops - 6) < 6 * 0.03,
          "thin's paths: M %.0f GB/s %.1f TFLOP/s, N %.0f GB/s %.1f TFLOP/s", fit.gbps,
          fit.tflops, fit.tall_gbps, fit.tall_tflops);
    struct gemm_problem wide = problem(GEMM_F32, 1, 16, 33780, 530);
    struct gemm_problem tall = problem(GEMM_F32, 1, 33780, 16, 530);
    double w_fit = model_estimate_rate(th, &wide, sms, &fit, 3000).ms;
    double w_true = model_estimate_rate(th, &wide, sms, &ttruth, 3000).ms;
    double t_fit = model_estimate_rate(th, &tall, sms, &fit, 3000).ms;
    double t_true = model_estimate_rate(th, &tall, sms, &ttruth, 3000).ms;
    CHECK(fabs(w_fit / w_true - 1) < 0.03 && fabs(t_fit / t_true - 1) < 0.03 &&
              t_true > 1.1 * w_true,
          "each path's estimate from its own rates: %.4f (%.4f) and %.4f (%.4f) ms", w_fit,
          w_true, t_fit, t_true);
    CHECK(rates_fit(th, GEMM_F32, ts + 2, 2, sms, 3000, &fit) == 0 && fit.tall_gbps == 0 &&
              fabs(fit.gbps - 1200) < 1200 * 0.03,
          "the N path alone: one pair (%.0f GB/s, N %.0f)", fit.gbps, fit.tall_gbps);

    /* With a sliced kernel measured three times slower than modelled,
     * auto's estimate for such a shape triples. */
    struct model_rates m = t;
    struct rate_entry *ce = (struct rate_entry *)rates_find(&m, "f16", k->name);
    CHECK(ce != NULL, "the table has f16 %s", k->name);
    if (ce) {
        struct gemm_problem p = problem(GEMM_F16, 1, 122, 194, 22854);
        double before = model_estimate(k, &p, sms).compute_ms;
        ce->slice_eff = 3;
        rates_use(&m);
        double after = model_estimate(k, &p, sms).compute_ms;
        CHECK(fabs(after - 3 * before) < 1e-9 + 3 * before * 1e-9, "%.4f ms against %.4f",
              after, before);
        rates_use(&t);
    }
}

/* Sliced runs where the compute binds and where the operands' bytes do:
 * each factor fitted from its own samples (timings made by the model with
 * both), and the bytes' factor scaling only a sliced run's bytes. */
static void test_stream(void)
{
    const int sms = 132;
    const struct gemm_kernel *k = kernel("wgmma_pipeline");
    struct rate_entry truth = { "f16", "wgmma_pipeline", 500, 700, 1.3, 1, 0.02, 0, 0, 0, 0, 0, 1.75 },
                      fit;
    int64_t shapes[][3] = { { 8192, 8192, 2048 }, { 8192, 8192, 32 }, { 512, 512, 262144 },
                            { 256, 256, 262144 }, { 256, 256, 65536 }, { 64, 64, 64 } };
    struct rate_sample s[6];
    model_samples(k, GEMM_F16, shapes, 6, &truth, s);
    struct model_estimate e = model_estimate_rate(k, &s[3].p, sms, &truth, 3000);
    struct rate_entry none = truth;
    none.stream_eff = 0;
    struct model_estimate e0 = model_estimate_rate(k, &s[3].p, sms, &none, 3000);
    CHECK(e.slices > 1 && e.memory_ms > e.compute_ms &&
              fabs(e.memory_ms - 1.75 * e0.memory_ms) < 1e-9 && e.ms > e0.ms,
          "256x256x262144: sliced (%d), its bytes bind, %.4f ms of them against %.4f",
          e.slices, e.memory_ms, e0.memory_ms);
    e = model_estimate_rate(k, &s[0].p, sms, &truth, 3000);
    e0 = model_estimate_rate(k, &s[0].p, sms, &none, 3000);
    CHECK(e.slices == 1 && e.memory_ms == e0.memory_ms, "8192x8192x2048: not sliced, no factor");
    CHECK(rates_fit(k, GEMM_F16, s, 6, sms, 3000, &fit) == 0, "fit");
    CHECK(fabs(fit.slice_eff - 1.3) < 0.05 && fabs(fit.stream_eff - 1.75) < 0.07,
          "the sliced runs' factors: compute %.3f, bytes %.3f", fit.slice_eff, fit.stream_eff);
    CHECK(rates_fit(k, GEMM_F16, s, 3, sms, 3000, &fit) == 0 && fit.stream_eff == 0 &&
              fabs(fit.slice_eff - 1.3) < 0.05,
          "no sample where the bytes bind: no bytes' factor (%.2f)", fit.stream_eff);
}

/* A thin stage's samples whose blocks the product part fills (its *busy
 * below 1: 43 of a block's 256 rows, 22 of its 24 columns) are fitted at
 * the blocks' full rate: their TFLOP/s over that share, so that the N
 * path's rate is the one of 32768 x 32 x 1024 whichever sample binds. */
static void test_busy(void)
{
    const int sms = 132;
    const struct gemm_kernel *k = kernel("f64_thin");
    struct rate_entry truth = { "f64", "f64_thin", 6, 2900, 1, 1, 0.006, 0, 0, 11, 2500, 0, 0 },
                      fit;
    int64_t shapes[][3] = { { 1, 8192, 4096 },  { 16, 8192, 4096 },   { 32768, 8, 1024 },
                            { 32768, 32, 1024 }, { 43, 22, 262144 } };
    struct rate_sample s[5];
    model_samples(k, GEMM_F64, shapes, 5, &truth, s);
    struct model_estimate part = model_estimate_rate(k, &s[4].p, sms, &truth, 3000);
    double busy = 43.0 / 256 * 22 / 24;
    CHECK(fabs(part.util - busy) < 1e-12 && part.compute_ms > part.memory_ms,
          "43x22x262144: the model's share %.4f (want %.4f), compute %.4f ms, bytes %.4f",
          part.util, busy, part.compute_ms, part.memory_ms);
    /* With the full block's sample left out, the part-full one alone says
     * the rate. */
    struct rate_sample some[4] = { s[0], s[1], s[2], s[4] };
    CHECK(rates_fit(k, GEMM_F64, s, 5, sms, 3000, &fit) == 0 && fabs(fit.tall_tflops - 11) < 0.2,
          "the N path's rate over all samples: %.3f TFLOP/s (want 11)", fit.tall_tflops);
    CHECK(rates_fit(k, GEMM_F64, some, 4, sms, 3000, &fit) == 0 &&
              fabs(fit.tall_tflops - 11) < 0.2,
          "the N path's rate from the part-full block alone: %.3f TFLOP/s (want 11, not %.2f)",
          fit.tall_tflops, 11 * busy);
}

/* A calibration times again the kernel whose least time is out of line:
 * float16's floors of one H100 calibration (us), `f16_gemv` at 43.7. */
static void test_stalled(void)
{
    double f[] = { 7.7, 6.8, 9.9, 8.0, 43.7, 7.3, 8.8, 10.4, 6.9, 0 };
    int n = (int)(sizeof f / sizeof f[0]);
    CHECK(rates_stalled(f, n, 43.7) && !rates_stalled(f, n, 10.4) && !rates_stalled(f, n, 6.8),
          "43.7 us among floors of 7-10 is out of line; 10.4 and 6.8 are not");
    CHECK(!rates_stalled(f, 2, 43.7) && !rates_stalled(f + 9, 1, 43.7),
          "two floors (or one measured) say nothing");
    double g[] = { 10, 10, 29.9, 30.1 };
    CHECK(!rates_stalled(g, 4, 29.9) && !rates_stalled(g, 4, 30.1) && rates_stalled(g, 3, 30.1),
          "over %.0f times the median, not at it", RATES_STALL_FLOOR);
}

int main(void)
{
    test_stalled();
    test_text();
    test_store();
    test_scaled();
    test_fit();
    test_stream();
    test_busy();
    printf("rates: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
