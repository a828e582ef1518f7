/* gemmcli tune: auto's candidates timed on random operands at the sizes
 * given (src/bench/tune.h), each signature's fastest kept in the cache of tuned
 * choices (src/plan/tune_cache.h) that `mul` consults; --show prints the cache
 * and --clear removes it, neither needing a GPU.
 *
 *   gemmcli tune --dtype f32,f16 4096 1000x3000x500 16x1024x1024x1024
 *   gemmcli tune --show */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/cli/commands.h"
#include "src/job/calibrate.h"
#include "src/job/device.h"
#include "src/plan/matmul.h"
#include "src/job/options.h"
#include "src/bench/tune.h"
#include "src/plan/rates.h"
#include "src/plan/tune_cache.h"

/* As bench's --sizes takes them. */
struct tune_size {
    size_t batch, m, n, k;
    int stacked;                /* given as BATCHxMxNxK */
    const char *label;
};

static int parse_size(const char *s, struct tune_size *out)
{
    struct gc_shape_opt sh;
    if (options_parse_shape(s, &sh))
        return gc_fail(GC_EXIT_USAGE, "tune: size '%s' is not a list of numbers joined by x", s);
    size_t *d = sh.dims;
    if (sh.ndim == 1)
        *out = (struct tune_size){ 1, d[0], d[0], d[0], 0, s };
    else if (sh.ndim == 3)
        *out = (struct tune_size){ 1, d[0], d[1], d[2], 0, s };
    else if (sh.ndim == 4)
        *out = (struct tune_size){ d[0], d[1], d[2], d[3], 1, s };
    else
        return gc_fail(GC_EXIT_USAGE, "tune: size '%s' is not N, MxNxK or BATCHxMxNxK", s);
    if (!out->batch || !out->m || !out->n || !out->k || out->m > 1u << 30 ||
        out->n > 1u << 30 || out->k > 1u << 30 || out->batch > 1u << 24)
        return gc_fail(GC_EXIT_USAGE, "tune: size '%s' is out of range (each of M, N, K from 1 "
                       "to 2^30, BATCH to 2^24)", s);
    return 0;
}

/* --dtype for tune: a comma-separated list of operand dtypes; f32 alone
 * by default. */
static int parse_dtypes(const char *list, enum gc_dtype *out, int *n)
{
    *n = 0;
    if (!list) {
        out[(*n)++] = GC_F32;
        return 0;
    }
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf)
        return gc_fail(GC_EXIT_USAGE, "--dtype: the list is too long");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int t = gc_dtype_parse(tok);
        if (t < 0)
            return gc_fail(GC_EXIT_USAGE, "--dtype: unknown dtype '%s' (f16 bf16 f32 f64 i8 i16 "
                           "i32 i64 u8 u16 u32 u64 bool)", tok);
        int seen = 0;
        for (int i = 0; i < *n; i++)
            seen |= out[i] == (enum gc_dtype)t;
        if (!seen)
            out[(*n)++] = (enum gc_dtype)t;
    }
    return *n ? 0 : gc_fail(GC_EXIT_USAGE, "--dtype: no dtype given");
}

/* ---- --show and --clear ---- */

/* The rates measured for each GPU model, kept beside the cache
 * (src/plan/rates.h): one line a file, from its first three lines. */
static void show_rates(void)
{
    char dir[TUNE_PATH_MAX], path[TUNE_PATH_MAX + 256];
    DIR *d = tune_cache_dir(dir, sizeof dir) == 0 ? opendir(dir) : NULL;
    if (!d)
        return;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (strncmp(ent->d_name, "rates-", 6) != 0 || len < 10 ||
            strcmp(ent->d_name + len - 4, ".txt") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        char *text = NULL;
        const char *body;
        size_t n = 0;
        struct rates_head h;
        if (tune_cache_read_text(path, &text, &n) != TUNE_CACHE_OK ||
            rates_read_head(text, &h, &body) != 0) {
            printf("rates %s: not a rates file of format %d (measured again on next use)\n",
                   path, RATES_VERSION);
            free(text);
            continue;
        }
        printf("rates %s: %s, compute capability %d.%d, %d SMs, driver %d.%d, measured %s, "
               "%zu kernels%s\n", path, h.name, h.cc / 10, h.cc % 10, h.sm_count,
               h.driver / 1000, h.driver % 1000 / 10, h.date, h.rates,
               h.version != RATES_VERSION ? "; another format: measured again on next use"
               : strcmp(h.fingerprint, rates_fingerprint()) != 0
                   ? "; another build of gemmcli: measured again on next use" : "");
        free(text);
    }
    closedir(d);
}

static int show(void)
{
    struct tune_cache_listing l;
    if (tune_cache_list(&l))
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    switch (l.state) {
    case TUNE_CACHE_NONE:
        printf("no tune cache: XDG_CACHE_HOME and HOME are unset, empty or relative paths\n");
        break;
    case TUNE_CACHE_MISSING:
        printf("%s: no entries (no file)\n", l.path);
        break;
    case TUNE_CACHE_FOREIGN:
        if (l.stored)
            printf("%s: no entries (not a tune cache of format %d: the next store replaces "
                   "it)\n", l.path, TUNE_CACHE_VERSION);
        else
            printf("%s: no entries (%s: a store leaves it as it is and stores nothing)\n",
                   l.path, l.kept);
        break;
    case TUNE_CACHE_OK:
        printf("%s: %zu entr%s", l.path, l.count, l.count == 1 ? "y" : "ies");
        if (l.malformed)
            printf(", %zu malformed line%s skipped", l.malformed, l.malformed == 1 ? "" : "s");
        if (!l.stored)
            printf(" (%s: a store leaves it as it is)", l.kept);
        printf("\n");
        break;
    }
    if (l.count) {
        char f[8][TUNE_KEY_MAX];
        int width = 6;
        for (size_t i = 0; i < l.count; i++) {
            int len = (int)strcspn(l.entries[i].key.text, " ");
            width = len > width ? len : width;
        }
        printf("%-*s %-4s %4s %-6s %-6s %-6s %-6s %-6s %-18s %10s %10s %9s  %s\n", width,
               "device", "cc", "SMs", "type", "batch", "m", "n", "k", "kernel", "ms",
               "cuBLAS ms", "of cuBLAS", "stored");
        for (size_t i = 0; i < l.count; i++) {
            const struct tune_entry *e = &l.entries[i];
            if (sscanf(e->key.text, "%383s %383s %383s %383s %383s %383s %383s %383s", f[0],
                       f[1], f[2], f[3], f[4], f[5], f[6], f[7]) != 8)
                continue;
            char cublas[32] = "-", pct[16] = "-";
            if (e->cublas_ms > 0) {
                snprintf(cublas, sizeof cublas, "%.4f", e->cublas_ms);
                snprintf(pct, sizeof pct, "%.0f%%", 100.0 * e->cublas_ms / e->ms);
            }
            printf("%-*s %-4s %4s %-6s %-6s %-6s %-6s %-6s %-18s %10.4f %10s %9s  %s\n", width,
                   f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], e->kernel, e->ms, cublas,
                   pct, e->date);
        }
    }
    tune_cache_listing_free(&l);
    show_rates();
    return 0;
}

static int clear(void)
{
    char path[TUNE_PATH_MAX], why[512];
    if (tune_cache_path(path, sizeof path) != 0) {
        printf("no tune cache: XDG_CACHE_HOME and HOME are unset, empty or relative paths\n");
        return 0;
    }
    int r = tune_cache_clear(why, sizeof why);
    if (r < 0)
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", path, why);
    printf(r == 0 ? "%s: removed\n" : "%s: nothing to remove\n", path);
    return 0;
}

/* ---- --calibrate ---- */

/* Measures this GPU's rates for auto, keeps them and prints them beside
 * the table's scaled to it. */
static int calibrate(const struct gc_opts *o)
{
    struct gc_device dev;
    struct model_rates *scaled = malloc(sizeof *scaled);
    char where[TUNE_PATH_MAX], line[512];
    int rc = scaled ? device_open(&dev, o->device, 0) : gc_fail(GC_EXIT_INPUT, "out of host memory");
    if (rc) {
        free(scaled);
        return rc;
    }
    struct rates_device d;
    calibrate_device_of(&dev, &d);
    rates_scaled(&d, scaled);
    if (!(rc = calibrate_ready(&dev, CALIBRATE_NOW, 1))) {
        const struct model_rates *r = rates_active();
        rates_describe(r, line, sizeof line);
        printf("rates %s\n%d SMs, %d MHz, memory %.0f GB/s\n", line, d.sm_count, d.clock_mhz,
               d.mem_gbps);
        printf("%-6s %-18s %10s %10s %8s %8s %8s %8s %8s %8s %9s %9s %9s %9s\n", "type",
               "kernel", "TFLOP/s", "GB/s", "sliced", "stream", "ragged", "odd", "few", "short",
               "floor us", "N GB/s", "N TFLOP/s", "of table");
        for (size_t i = 0; i < r->count; i++) {
            const struct rate_entry *e = &r->e[i];
            const struct rate_entry *t = rates_find(scaled, e->type, e->kernel);
            /* (against the table's own figure: bytes for a memory-bound
             * row, else FLOPs; a tiled kernel's GB/s are its stores) */
            int bytes = t && t->gbps > 0;
            double mine = bytes ? e->gbps : e->tflops;
            double theirs = !t ? 0 : bytes ? t->gbps : t->tflops;
            char pct[16] = "-";
            if (theirs > 0)
                snprintf(pct, sizeof pct, "%.0f%%", 100 * mine / theirs);
            char odd[16] = "-", few[16] = "-", shortk[16] = "-", stream[16] = "-";
            if (e->stream_eff > 0)
                snprintf(stream, sizeof stream, "%.2fx", e->stream_eff);
            if (e->short_eff > 0)
                snprintf(shortk, sizeof shortk, "%.2fx", e->short_eff);
            if (e->odd_eff > 0)
                snprintf(odd, sizeof odd, "%.2fx", e->odd_eff);
            if (e->few_eff > 0)
                snprintf(few, sizeof few, "%.2fx", e->few_eff);
            /* (a memory-bound kernel's path over more than 32 rows, where apart) */
            char tall_gbps[24] = "-", tall_tflops[24] = "-";
            if (e->tall_gbps > 0) {
                snprintf(tall_gbps, sizeof tall_gbps, "%.1f", e->tall_gbps);
                snprintf(tall_tflops, sizeof tall_tflops, "%.2f", e->tall_tflops);
            }
            printf("%-6s %-18s %10.2f %10.1f %7.2fx %8s %7.2fx %8s %8s %8s %9.1f %9s %9s %9s\n",
                   e->type, e->kernel, e->tflops, e->gbps, e->slice_eff, stream, e->ragged_eff,
                   odd, few, shortk, e->floor_ms * 1e3, tall_gbps, tall_tflops, pct);
        }
        printf("measured in %.1f s; device copy %.0f GB/s (the table's, scaled: %.0f)\n",
               r->seconds, r->copy_gbps, scaled->copy_gbps);
        if (rates_path(&d, where, sizeof where) == 0)
            printf("kept in %s\n", where);
    }
    device_close(&dev);
    free(scaled);
    return rc;
}

/* ---- tuning ---- */

/* A random operand of dtype dt and t's shape on the device: floats in
 * [-1, 1), integers from -8 to 7 (saturated for unsigned types), made on
 * the host as float32 and converted there. */
static int random_operand(struct gc_device *dev, const struct gc_tensor *t, enum gc_dtype dt,
                          unsigned long long seed, void **d)
{
    struct gc_tensor f = *t, conv;
    f.dtype = GC_F32;
    f.data = NULL;
    f.alloc = NULL;
    memset(&conv, 0, sizeof conv);
    if (gc_tensor_alloc(&f, NULL))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the operands");
    size_t n = gc_tensor_count(&f);
    float *x = f.data;
    double scale = gc_dtype_is_integral(dt) ? 8.0 : 1.0;
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)(scale * ((s >> 11) * (2.0 / 9007199254740992.0) - 1.0));
    }
    const struct gc_tensor *src = &f;
    int rc = 0;
    if (dt != GC_F32) {
        if (gc_tensor_convert(&f, dt, NULL, &conv)) {
            gc_tensor_free(&f);
            return gc_fail(GC_EXIT_INPUT, "out of host memory for the operands");
        }
        src = &conv;
    }
    size_t bytes = n * gc_dtypes[dt].size;
    /* On the device's stream, which does not wait for the legacy one. */
    if (!(rc = CUDA_CALL(cudaMalloc(d, bytes ? bytes : 1))) &&
        !(rc = CUDA_CALL(cudaMemcpyAsync(*d, src->data, bytes, cudaMemcpyHostToDevice,
                                         dev->stream))))
        rc = CUDA_CALL(cudaStreamSynchronize(dev->stream));
    gc_tensor_free(&f);
    gc_tensor_free(&conv);
    return rc;
}

static void shape_of(struct gc_tensor *t, enum gc_dtype dt, const struct tune_size *s,
                     size_t rows, size_t cols)
{
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = s->stacked ? 3 : 2;
    size_t *d = t->shape;
    if (s->stacked)
        *d++ = s->batch;
    d[0] = rows;
    d[1] = cols;
}

/* The rows of one signature; TFLOP/s from GFLOP per ms. */
static void print_rows(const struct tune_result *res, const struct tune_choice *c, double gflop)
{
    printf("  %-18s %-6s %10s %9s %10s\n", "kernel", "type", "ms", "TFLOP/s", "of cuBLAS");
    int shown = 0;
    for (int i = 0; i < res->n_rows; i++) {
        const struct tune_row *r = &res->rows[i];
        if (&res->choices[r->choice] != c)
            continue;
        shown++;
        if (!isfinite(r->ms)) {
            printf("  %-18s %-6s %10s %9s %10s  not run: no device memory for its workspace\n",
                   r->kern->name, gemm_sigs[r->sig].name, "-", "-", "-");
            continue;
        }
        char pct[16] = "-";
        if (c->cublas_ms > 0)
            snprintf(pct, sizeof pct, "%.0f%%", 100.0 * c->cublas_ms / r->ms);
        printf("  %-18s %-6s %10.4f %9.2f %10s%s\n", r->kern->name, gemm_sigs[r->sig].name, r->ms,
               gflop / r->ms, pct,
               r->dropped ? "  dropped: its first run took over 10x the best" : "");
    }
    if (!shown)
        printf("  (none run: the operands in this signature do not fit in free device memory)\n");
}

static int tune_one(struct gc_device *dev, enum gc_dtype dt, const struct tune_size *s,
                    const struct matmul_plan *plan, int f64_exact, int *not_stored)
{
    struct gc_tensor a, b;
    shape_of(&a, dt, s, s->m, s->k);
    shape_of(&b, dt, s, s->k, s->n);
    void *da = NULL, *db = NULL;
    struct tune_result *res = malloc(sizeof *res);
    int rc;
    if (!res)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    if ((rc = random_operand(dev, &a, dt, 1, &da)) || (rc = random_operand(dev, &b, dt, 2, &db)))
        goto out;
    struct tune_target t = { plan, f64_exact, 1.0, 0.0, { &a, da }, { &b, db }, { NULL, NULL } };
    if ((rc = tune_product(dev, &t, res)))
        goto out;
    double gflop = 2.0 * (double)s->batch * (double)s->m * (double)s->n * (double)s->k / 1e9;
    printf("tune %s %s on %s\n", gc_dtypes[dt].name, s->label, dev->name);
    for (int i = 0; i < res->n_choices; i++) {
        const struct tune_choice *c = &res->choices[i];
        struct tune_key key;
        tune_key_for(dev, plan, c->sig, &key);
        printf("signature %s, key '%s'\n", gemm_sigs[c->sig].name, key.text);
        print_rows(res, c, gflop);
    }
    if (res->best < 0) {
        printf("winner: none (no own kernel ran)\n\n");
        goto out;
    }
    const struct tune_choice *w = &res->choices[res->best];
    printf("winner: %s (%s), %.4f ms, %.2f TFLOP/s", w->kern->name, gemm_sigs[w->sig].name, w->ms,
           gflop / w->ms);
    if (w->cublas_ms > 0)
        printf(", %.0f%% of cuBLAS", 100.0 * w->cublas_ms / w->ms);
    char path[TUNE_PATH_MAX], why[512];
    int have_path = tune_cache_path(path, sizeof path) == 0;
    if (tune_store_result(dev, plan, res, why, sizeof why) == 0) {
        printf("; stored in %s\n\n", path);
    } else {
        printf("; not stored\n\n");
        if (have_path)
            gc_warn("%s: the tuned choice was not stored: %s", path, why);
        else
            gc_warn("the tuned choice was not stored: %s", why);
        *not_stored = 1;
    }
out:
    cudaFree(da);
    cudaFree(db);
    free(res);
    return rc;
}

int cmd_tune(const struct gc_opts *o)
{
    if (o->tune_show + o->tune_clear + o->calibrate > 1)
        return gc_fail(GC_EXIT_USAGE, "--show, --clear and --calibrate: one at a time");
    if ((o->tune_show || o->tune_clear || o->calibrate) && o->n_operands)
        return gc_fail(GC_EXIT_USAGE, "%s takes no sizes",
                       o->tune_show ? "--show" : o->tune_clear ? "--clear" : "--calibrate");
    if (o->calibrate)
        return calibrate(o);
    if (o->tune_show)
        return show();
    if (o->tune_clear)
        return clear();
    if (!o->n_operands)
        return gc_fail(GC_EXIT_USAGE, "tune needs sizes: N, MxNxK or BATCHxMxNxK (or --show, "
                       "--clear; see 'gemmcli tune --help')");
    struct tune_size sizes[GC_MAX_OPERANDS];
    enum gc_dtype dtypes[GC_DTYPE_COUNT];
    int n_dtypes, rc;
    for (int i = 0; i < o->n_operands; i++)
        if ((rc = parse_size(o->operands[i], &sizes[i])))
            return rc;
    if ((rc = parse_dtypes(o->bench_dtypes, dtypes, &n_dtypes)))
        return rc;
    /* Every plan before the device: a compute mode the data cannot take
     * is a usage error with a GPU or without. */
    struct matmul_plan *plans = malloc((size_t)(n_dtypes * o->n_operands) * sizeof *plans);
    if (!plans)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    for (int d = 0; d < n_dtypes && !rc; d++)
        for (int i = 0; i < o->n_operands && !rc; i++) {
            struct gc_tensor a, b;
            char a_name[64], b_name[96];
            shape_of(&a, dtypes[d], &sizes[i], sizes[i].m, sizes[i].k);
            shape_of(&b, dtypes[d], &sizes[i], sizes[i].k, sizes[i].n);
            snprintf(a_name, sizeof a_name, "--dtype %s", gc_dtypes[dtypes[d]].name);
            snprintf(b_name, sizeof b_name, "size %s", sizes[i].label);
            rc = matmul_plan(&a, &b, o->compute, a_name, b_name, &plans[d * o->n_operands + i]);
        }
    struct gc_device dev;
    memset(&dev, 0, sizeof dev);
    if (!rc)
        rc = device_open(&dev, o->device, 0);
    int not_stored = 0;
    for (int d = 0; d < n_dtypes && !rc; d++)
        for (int i = 0; i < o->n_operands && !rc; i++) {
            const struct matmul_plan *pl = &plans[d * o->n_operands + i];
            /* The random integers are at most 8 in magnitude. */
            int f64_exact = 64.0L * (long double)pl->k < 0x1p53L;
            rc = tune_one(&dev, dtypes[d], &sizes[i], pl, f64_exact, &not_stored);
            fflush(stdout);
        }
    device_close(&dev);
    free(plans);
    if (!rc && not_stored)
        rc = GC_EXIT_OUTPUT;
    return rc;
}
