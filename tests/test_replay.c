/* auto's choice replayed on measured times, no GPU needed: the calibration's
 * fit (src/plan/fit.c) runs over every stage's times at the calibration's
 * shapes, recorded on an H100 (tests/data/replay-h100.csv, set cal); the
 * model (src/plan/model.c) with those rates then picks a stage for each of
 * 80 shapes a type of a sweep (set eval), whose every stage's time was
 * recorded too.  The checks hold the picks to the stage that ran fastest:
 * a change to the fit or the model that picks worse on real times fails
 * here.  The thresholds are this build's figures less a margin; the times
 * are one day's on one GPU, so a stage rewritten since runs otherwise, and
 * the file is re-recorded then (its head says how): last with the thin
 * stages' balanced slices (kernels/memory_bound/thin.cuh, thin_balance),
 * and with `splitk_64x128` and `splitk_32x128` among the candidates; the
 * float32 rows again with `splitk_128x64`; the float64 and float16 stages
 * at 128x128x262144 (stream_eff's shape) added later.  A stage without
 * rows (float16 `mma_sync_128x128` and `mma_sync_128x64`, added since) has
 * no rate and is never picked; `f16_thin`'s N path, the `mma_sync`
 * stages' 4-byte copies and the float64 DMMA stages (A's copies in whole
 * sectors: 1-16% faster) have run faster since their rows were recorded.
 *
 * Usage: test_replay [FILE] (default tests/data/replay-h100.csv); with
 * REPLAY_SHAPES set in the environment it lists the shapes whose pick ran
 * more than 10% over the fastest stage; REPLAY_SHOW=MxNxK prints every
 * stage's estimate and time at that shape; REPLAY_RATES prints the rates
 * the fit gave. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/plan/fit.h"
#include "src/plan/model.h"
#include "src/plan/rates.h"
#include "src/plan/select.h"
#include "tests/check.h"
#include "tests/problem.h"

#define ROWS_MOST 8192
#define SHAPES_MOST 512
#define WITHIN 1.10               /* a pick this close to the fastest stage is as good */

struct timing {
    int eval;                    /* set eval, else cal */
    enum gemm_sig sig;
    char kernel[48];
    long m, n, k;
    double ms;
};

static struct timing rows[ROWS_MOST];
static int nrows;

static int sig_of(const char *type, enum gemm_sig *sig)
{
    static const struct {
        const char *name;
        enum gemm_sig sig;
    } types[] = { { "f32", GEMM_F32 }, { "f16", GEMM_F16 }, { "f64", GEMM_F64 } };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(type, types[i].name)) {
            *sig = types[i].sig;
            return 0;
        }
    return -1;
}

/* The file's rows and its device line into *d and *copy_gbps. */
static int load(const char *path, struct rates_device *d, double *copy_gbps)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("FAIL: cannot open %s\n", path);
        return -1;
    }
    char line[512];
    memset(d, 0, sizeof *d);
    *copy_gbps = 0;
    while (fgets(line, sizeof line, f)) {
        char name[256], type[16], set[8], kernel[48];
        int major, minor;
        double mem;
        struct timing t;
        if (sscanf(line, "# device %255s %d.%d %d %d %lf copy %lf", name, &major, &minor,
                   &d->sm_count, &d->clock_mhz, &mem, copy_gbps) == 7) {
            snprintf(d->name, sizeof d->name, "%s", name);
            d->cc = major * 10 + minor;
            d->mem_gbps = mem;
            continue;
        }
        if (line[0] == '#' || !strncmp(line, "set,", 4))
            continue;
        if (sscanf(line, "%7[^,],%15[^,],%47[^,],%ld,%ld,%ld,%lf", set, type, kernel, &t.m, &t.n,
                   &t.k, &t.ms) != 7 || sig_of(type, &t.sig) != 0 || nrows == ROWS_MOST) {
            printf("FAIL: %s: a row not understood: %s", path, line);
            fclose(f);
            return -1;
        }
        t.eval = !strcmp(set, "eval");
        snprintf(t.kernel, sizeof t.kernel, "%s", kernel);
        rows[nrows++] = t;
    }
    fclose(f);
    return d->sm_count > 0 && *copy_gbps > 0 && nrows > 0 ? 0 : -1;
}

static int auto_candidate(const struct gemm_kernel *k, enum gemm_sig sig)
{
    return k && k->geometry && select_auto_candidate(k->flags) && (k->sigs & (1u << sig));
}

/* Every candidate's rate fitted from the cal rows, over the table's rates
 * scaled to the device (for a stage the cal rows cannot fit: the stacks'
 * stage, measured on stacks of products the file does not hold). */
static void fit_all(const struct rates_device *d, double copy_gbps, struct model_rates *r)
{
    rates_scaled(d, r);
    r->source = RATES_MEASURED;
    r->copy_gbps = copy_gbps;
    static const enum gemm_sig sigs[] = { GEMM_F32, GEMM_F16, GEMM_F64 };
    static struct rate_sample s[64];
    for (size_t si = 0; si < sizeof sigs / sizeof sigs[0]; si++) {
        for (size_t i = 0; i < gemm_kernel_count; i++) {
            const struct gemm_kernel *k = &gemm_kernels[i];
            if (!auto_candidate(k, sigs[si]))
                continue;
            int n = 0;
            for (int j = 0; j < nrows && n < 64; j++)
                if (!rows[j].eval && rows[j].sig == sigs[si] && !strcmp(rows[j].kernel, k->name)) {
                    s[n].p = problem(sigs[si], 1, rows[j].m, rows[j].n, rows[j].k);
                    s[n].ms = rows[j].ms;
                    n++;
                }
            struct rate_entry e;
            if (n == 0 || rates_fit(k, sigs[si], s, n, d->sm_count, copy_gbps, &e) != 0)
                continue;
            struct rate_entry *old = (struct rate_entry *)rates_find(r, e.type, e.kernel);
            if (old)
                *old = e;
            else if (r->count < RATES_MAX)
                r->e[r->count++] = e;
        }
    }
}

struct shape {
    enum gemm_sig sig;
    long m, n, k;
    double cublas_ms;
    const char *pick, *best;
    double pick_ms, best_ms, pick_est;
};

static struct shape shapes[SHAPES_MOST];
static int nshapes;

/* The model's pick and the fastest stage of each eval shape, among the
 * candidates with a time. */
static void replay(int sm_count)
{
    /* (REPLAY_SHOW=MxNxK: every stage's estimate and time there) */
    const char *show = getenv("REPLAY_SHOW");
    long sm = -1, sn = -1, sk = -1;
    if (show && sscanf(show, "%ldx%ldx%ld", &sm, &sn, &sk) != 3)
        sm = -1;
    for (int j = 0; j < nrows; j++) {
        if (!rows[j].eval)
            continue;
        int s = 0;
        while (s < nshapes && !(shapes[s].sig == rows[j].sig && shapes[s].m == rows[j].m &&
                                shapes[s].n == rows[j].n && shapes[s].k == rows[j].k))
            s++;
        if (s == nshapes) {
            if (nshapes == SHAPES_MOST)
                continue;
            shapes[nshapes++] = (struct shape){ rows[j].sig, rows[j].m, rows[j].n, rows[j].k,
                                                0, NULL, NULL, INFINITY, INFINITY, INFINITY };
        }
        struct shape *sh = &shapes[s];
        if (!strcmp(rows[j].kernel, "cublas")) {
            sh->cublas_ms = rows[j].ms;
            continue;
        }
        const struct gemm_kernel *k = gemm_kernel_find(rows[j].kernel);
        if (!auto_candidate(k, rows[j].sig))
            continue;
        struct gemm_problem p = problem(rows[j].sig, 1, rows[j].m, rows[j].n, rows[j].k);
        struct model_estimate me = model_estimate(k, &p, sm_count);
        double est = me.ms;
        if (sm == sh->m && sn == sh->n && sk == sh->k)
            printf("  %s %ldx%ldx%ld %-20s estimated %.4f ms, ran %.4f (compute %.4f, "
                   "memory %.4f, store %.4f, reduce %.4f, %d slices, util %.2f)\n",
                   gemm_sigs[rows[j].sig].name, sh->m, sh->n, sh->k, k->name, est, rows[j].ms,
                   me.compute_ms, me.memory_ms, me.store_ms, me.reduce_ms, me.slices, me.util);
        /* (a vector's pick, as select.c's: among the memory-bound stages) */
        int weighed = (sh->m != 1 && sh->n != 1) || select_vector_candidate(k);
        if (weighed && est < sh->pick_est) {
            sh->pick_est = est;
            sh->pick = k->name;
            sh->pick_ms = rows[j].ms;
        }
        if (rows[j].ms < sh->best_ms) {
            sh->best_ms = rows[j].ms;
            sh->best = k->name;
        }
    }
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static const struct shape *find(enum gemm_sig sig, long m, long n, long k)
{
    for (int s = 0; s < nshapes; s++)
        if (shapes[s].sig == sig && shapes[s].m == m && shapes[s].n == n && shapes[s].k == k)
            return &shapes[s];
    return NULL;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/data/replay-h100.csv";
    struct rates_device d;
    double copy_gbps;
    if (load(path, &d, &copy_gbps) != 0) {
        printf("replay: 0 passed, 1 failed (no timings read from %s)\n", path);
        return 1;
    }
    static struct model_rates r;
    fit_all(&d, copy_gbps, &r);
    rates_use(&r);
    if (getenv("REPLAY_RATES")) {   /* (the fitted rates, as a rates file holds them) */
        static char text[1 << 20];
        rates_text(&r, text, sizeof text);
        fputs(text, stdout);
    }
    replay(d.sm_count);

    /* Per type: the share of shapes whose pick ran within 10% of the
     * fastest stage, and the geometric mean of fastest / picked. */
    static const struct {
        enum gemm_sig sig;
        const char *name;
        double within_least, mean_least;
    } types[] = {
        { GEMM_F32, "f32", 0.80, 0.94 },
        { GEMM_F16, "f16", 0.72, 0.91 },
        { GEMM_F64, "f64", 0.78, 0.93 },
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        int n = 0, good = 0, nc = 0;
        double log_sum = 0, err[SHAPES_MOST], pick_pct[SHAPES_MOST], best_pct[SHAPES_MOST];
        for (int s = 0; s < nshapes; s++) {
            const struct shape *sh = &shapes[s];
            if (sh->sig != types[t].sig || !sh->pick)
                continue;
            good += sh->pick_ms <= WITHIN * sh->best_ms;
            if (getenv("REPLAY_SHAPES") && sh->pick_ms > WITHIN * sh->best_ms)
                printf("  %s %ldx%ldx%ld: %s %.4f ms (estimated %.4f), %s %.4f\n", types[t].name,
                       sh->m, sh->n, sh->k, sh->pick, sh->pick_ms, sh->pick_est, sh->best,
                       sh->best_ms);
            log_sum += log(sh->best_ms / sh->pick_ms);
            err[n++] = fabs(sh->pick_est - sh->pick_ms) / sh->pick_ms;
            if (sh->cublas_ms > 0) {
                pick_pct[nc] = 100 * sh->cublas_ms / sh->pick_ms;
                best_pct[nc++] = 100 * sh->cublas_ms / sh->best_ms;
            }
        }
        qsort(err, (size_t)n, sizeof err[0], cmp_double);
        qsort(pick_pct, (size_t)nc, sizeof pick_pct[0], cmp_double);
        qsort(best_pct, (size_t)nc, sizeof best_pct[0], cmp_double);
        double within = n ? (double)good / n : 0, mean = n ? exp(log_sum / n) : 0;
        printf("replay %s: %d shapes, the pick within 10%% of the fastest stage on %.0f%%, "
               "fastest / picked %.3f (geometric mean), the pick's estimate off by %.0f%% "
               "(median)\n",
               types[t].name, n, 100 * within, mean, n ? 100 * err[n / 2] : 0);
        /* (as a sweep sums them up: cuBLAS's recorded time over the
         * pick's, and over the fastest stage's, what a perfect pick among
         * these stages would reach: worst / 10th percentile / median) */
        if (nc)
            printf("replay %s: %% of cuBLAS on %d shapes, the picks %.0f / %.0f / %.0f%%, the "
                   "fastest stages %.0f / %.0f / %.0f%%\n",
                   types[t].name, nc, pick_pct[0], pick_pct[nc / 10], pick_pct[nc / 2],
                   best_pct[0], best_pct[nc / 10], best_pct[nc / 2]);
        CHECK(n >= 40, "%s: %d shapes replayed", types[t].name, n);
        CHECK(within >= types[t].within_least, "%s: the pick within 10%% of the fastest on "
              "%.0f%% of the shapes, under %.0f%%", types[t].name, 100 * within,
              100 * types[t].within_least);
        CHECK(mean >= types[t].mean_least, "%s: fastest / picked %.3f, under %.2f",
              types[t].name, mean, types[t].mean_least);
        CHECK(n && err[n / 2] <= 0.25, "%s: the picks' estimates off by %.0f%% (median)",
              types[t].name, n ? 100 * err[n / 2] : 0);
    }

    /* Picks the model once got wrong on these times. */
    static const struct {
        enum gemm_sig sig;
        long m, n, k;
        const char *not_this;
        const char *why;
    } cases[] = {
        { GEMM_F32, 3281, 503, 283, "stream_k",
          "a last wave shared out over a short K: its runs' atomics" },
        { GEMM_F32, 56, 2517, 1164, "stream_k", "the same, few tiles" },
        { GEMM_F64, 15, 33780, 530, "f64_thin", "the thin stages' M path at its own rate" },
        { GEMM_F16, 23, 339, 555, "f16_thin", "the M path's compute ceiling, the least measured" },
        { GEMM_F16, 443, 160, 63172, "cluster_multicast",
          "A's narrow loads alone, at the bandwidth: their factor on the compute, by A's share" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct shape *sh = find(cases[c].sig, cases[c].m, cases[c].n, cases[c].k);
        if (!sh)
            continue;   /* (a shape the file does not hold) */
        CHECK(sh->pick && strcmp(sh->pick, cases[c].not_this) != 0,
              "%ldx%ldx%ld: auto picks %s (%s); the fastest was %s", cases[c].m, cases[c].n,
              cases[c].k, sh->pick ? sh->pick : "nothing", cases[c].why, sh->best);
    }

    /* The thin stages read the wide operand once, whatever the thin side:
     * the estimate of a row vector over a wide B is its time, near enough. */
    const struct gemm_kernel *thin = gemm_kernel_find("thin");
    for (int j = 0; j < nrows; j++) {
        if (rows[j].eval || rows[j].sig != GEMM_F32 || strcmp(rows[j].kernel, "thin") ||
            rows[j].m != 1 || rows[j].n != 8192)
            continue;
        struct gemm_problem p = problem(GEMM_F32, 1, rows[j].m, rows[j].n, rows[j].k);
        double est = model_estimate(thin, &p, d.sm_count).ms;
        CHECK(fabs(est - rows[j].ms) <= 0.25 * rows[j].ms,
              "thin 1x8192x%ld: estimated %.4f ms, ran %.4f", rows[j].k, est, rows[j].ms);
    }
    printf("replay: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
