/* auto's rates: the table built in, scaled to a GPU, or measured on it
 * (src/plan/rates.h says which wins and what the file holds). */
#include "src/plan/rates.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/plan/tune_cache.h"

#define HEADER_FMT "# gemmcli rates %d"

static struct model_rates active;
static int active_set;

const struct model_rates *rates_active(void)
{
    if (!active_set) {
        rates_table(&active);
        active_set = 1;
    }
    return &active;
}

void rates_use(const struct model_rates *r)
{
    active = *r;
    active_set = 1;
}

void rates_table(struct model_rates *out)
{
    memset(out, 0, sizeof *out);
    out->source = RATES_TABLE;
    snprintf(out->measured_on, sizeof out->measured_on, "%s", auto_rate_device);
    snprintf(out->date, sizeof out->date, "%s", auto_rate_date);
    out->sm_count = auto_rate_sm_count;
    out->copy_gbps = auto_rate_copy_gbps;
    out->compute_scale = out->memory_scale = 1;
    for (size_t i = 0; i < auto_rate_count && out->count < RATES_MAX; i++) {
        struct rate_entry *e = &out->e[out->count++];
        snprintf(e->type, sizeof e->type, "%s", auto_rates[i].type);
        snprintf(e->kernel, sizeof e->kernel, "%s", auto_rates[i].kernel);
        e->tflops = auto_rates[i].tflops;
        e->gbps = auto_rates[i].gbps;
        e->slice_eff = auto_rates[i].slice_eff > 0 ? auto_rates[i].slice_eff : 1;
        e->ragged_eff = auto_rates[i].ragged_eff > 0 ? auto_rates[i].ragged_eff : 1;
    }
}

void rates_scaled(const struct rates_device *d, struct model_rates *out)
{
    rates_table(out);
    out->source = RATES_SCALED;
    out->device = *d;
    /* A figure the device does not give leaves its side unscaled. */
    double sms = d->sm_count > 0 ? (double)d->sm_count / auto_rate_sm_count : 1;
    double clock = d->clock_mhz > 0 ? (double)d->clock_mhz / auto_rate_clock_mhz : 1;
    double mem = d->mem_gbps > 0 ? d->mem_gbps / auto_rate_mem_gbps : 1;
    out->compute_scale = sms * clock;
    out->memory_scale = mem;
    out->sm_count = d->sm_count > 0 ? d->sm_count : auto_rate_sm_count;
    out->copy_gbps *= mem;
    for (size_t i = 0; i < out->count; i++) {
        out->e[i].tflops *= out->compute_scale;
        out->e[i].gbps *= mem;
        out->e[i].tall_tflops *= out->compute_scale;
        out->e[i].tall_gbps *= mem;
    }
}

const struct rate_entry *rates_find(const struct model_rates *r, const char *type,
                                    const char *kernel)
{
    for (size_t i = 0; i < r->count; i++)
        if (!strcmp(r->e[i].type, type) && !strcmp(r->e[i].kernel, kernel))
            return &r->e[i];
    return NULL;
}

/* ---- the fingerprint ---- */

static void fnv(unsigned long long *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= p[i];
        *h *= 0x100000001b3ull;
    }
}

static void fnv_str(unsigned long long *h, const char *s)
{
    fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

const char *rates_fingerprint(void)
{
    static char text[17];
    if (text[0])
        return text;
    unsigned long long h = 0xcbf29ce484222325ull;
    /* What the rates depend on: the kernels auto may pick, their
     * geometry, and the table the scaled rates start from. */
    for (size_t i = 0; i < gemm_kernel_count; i++) {
        const struct gemm_kernel *k = &gemm_kernels[i];
        fnv_str(&h, k->name);
        fnv(&h, &k->sigs, sizeof k->sigs);
        fnv(&h, &k->flags, sizeof k->flags);
        if (k->geometry) {
            const struct gemm_geometry *g = k->geometry;
            int v[6] = { g->tile_m, g->tile_n, g->per_sm, g->k_fill, (int)g->spread, g->slice_k };
            fnv(&h, v, sizeof v);
        }
    }
    for (size_t i = 0; i < auto_rate_count; i++) {
        fnv_str(&h, auto_rates[i].type);
        fnv_str(&h, auto_rates[i].kernel);
    }
    snprintf(text, sizeof text, "%016llx", h);
    return text;
}

/* ---- the file ---- */

static void word_of(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = s[i] == ' ' || s[i] == '\t' ? '_' : s[i];
    out[i] = '\0';
}

int rates_path(const struct rates_device *d, char *buf, size_t n)
{
    char dir[TUNE_PATH_MAX], name[128];
    if (tune_cache_dir(dir, sizeof dir) != 0 || !d->name[0])
        return -1;
    size_t i = 0;
    for (; d->name[i] && i + 1 < sizeof name; i++) {
        char c = d->name[i];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '-';
        name[i] = keep ? c : '_';
    }
    name[i] = '\0';
    int w = snprintf(buf, n, "%s/rates-%s-%d-%d.txt", dir, name, d->cc, d->sm_count);
    return w > 0 && (size_t)w < n ? 0 : -1;
}

size_t rates_text(const struct model_rates *r, char *buf, size_t n)
{
    char name[256];
    size_t used = 0;
    const struct rates_device *d = &r->device;
    word_of(d->name, name, sizeof name);
#define PUT(...)                                                                   \
    do {                                                                           \
        int w_ = snprintf(buf + used, n - used, __VA_ARGS__);                      \
        used += w_ > 0 && (size_t)w_ < n - used ? (size_t)w_ : 0;                  \
    } while (0)
    PUT(HEADER_FMT "\n", RATES_VERSION);
    PUT("device %s %d.%d %d %d %.0f %d\n", name, d->cc / 10, d->cc % 10, d->sm_count,
        d->clock_mhz, d->mem_gbps, d->driver);
    PUT("build %s %s %.1f %.1f\n", rates_fingerprint(), r->date, r->copy_gbps, r->seconds);
    for (size_t i = 0; i < r->count; i++)
        PUT("rate %s %s %.3f %.1f %.3f %.3f %.1f %.3f %.3f %.3f %.1f %.3f %.3f\n",
            r->e[i].type, r->e[i].kernel, r->e[i].tflops, r->e[i].gbps, r->e[i].slice_eff,
            r->e[i].ragged_eff, r->e[i].floor_ms * 1e3, r->e[i].odd_eff, r->e[i].few_eff,
            r->e[i].tall_tflops, r->e[i].tall_gbps, r->e[i].short_eff, r->e[i].stream_eff);
#undef PUT
    return used;
}

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ", or -1. */
static double utc_seconds(const char *s)
{
    int y, mo, d, h, mi, se;
    char z;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &z) != 7 || z != 'Z')
        return -1;
    /* Days from the civil date (proleptic Gregorian). */
    int yy = y - (mo <= 2), era = (yy >= 0 ? yy : yy - 399) / 400;
    int yoe = yy - era * 400, mp = (mo + 9) % 12;
    int doy = (153 * mp + 2) / 5 + d - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    double days = (double)era * 146097 + doe - 719468;
    return days * 86400 + h * 3600 + mi * 60 + se;
}

#define STALE(...) (snprintf(why, n, __VA_ARGS__), RATES_STALE)

int rates_read_head(const char *text, struct rates_head *h, const char **body)
{
    int major, minor, used = 0;
    memset(h, 0, sizeof *h);
    if (sscanf(text, "# gemmcli rates %d\n%n", &h->version, &used) != 1 || !used)
        return -1;
    text += used;
    used = 0;
    if (sscanf(text, "device %255s %d.%d %d %d %lf %d\n%n", h->name, &major, &minor,
               &h->sm_count, &h->clock_mhz, &h->mem_gbps, &h->driver, &used) != 7 || !used)
        return -1;
    h->cc = major * 10 + minor;
    text += used;
    used = 0;
    if (sscanf(text, "build %31s %23s %lf %lf\n%n", h->fingerprint, h->date, &h->copy_gbps,
               &h->seconds, &used) != 4 || !used)
        return -1;
    text += used;
    *body = text;
    for (const char *q = text; (q = strstr(q, "rate ")) != NULL; q++)
        h->rates += q == text || q[-1] == '\n';
    return 0;
}

/* The header, device and build lines: RATES_LOADED when they are this
 * build's and d's, with *body after them. */
static enum rates_state parse_head(const char *text, const struct rates_device *d, time_t now,
                                   struct model_rates *out, const char **body, char *why,
                                   size_t n)
{
    struct rates_head h;
    char dev_name[256];
    if (rates_read_head(text, &h, body) != 0 || h.version != RATES_VERSION)
        return STALE("not a rates file of this version");
    word_of(d->name, dev_name, sizeof dev_name);
    if (strcmp(h.name, dev_name) != 0 || h.cc != d->cc || h.sm_count != d->sm_count)
        return STALE("measured on another GPU (%s)", h.name);
    if (strcmp(h.fingerprint, rates_fingerprint()) != 0)
        return STALE("measured with another build of gemmcli");
    if (h.driver != d->driver)
        return STALE("measured under driver %d, this is %d", h.driver, d->driver);
    double when = utc_seconds(h.date);
    if (when < 0)
        return STALE("no date");
    if ((double)now - when > RATES_STALE_DAYS * 86400.0)
        return STALE("measured more than %d days ago", RATES_STALE_DAYS);
    if (!(h.copy_gbps > 0))
        return STALE("no copy bandwidth");
    memset(out, 0, sizeof *out);
    out->source = RATES_MEASURED;
    out->device = *d;
    snprintf(out->measured_on, sizeof out->measured_on, "%s", d->name);
    snprintf(out->date, sizeof out->date, "%s", h.date);
    out->sm_count = d->sm_count;
    out->copy_gbps = h.copy_gbps;
    out->seconds = h.seconds;
    out->compute_scale = out->memory_scale = 1;
    return RATES_LOADED;
}

enum rates_state rates_parse(const char *text, const struct rates_device *d, time_t now,
                             struct model_rates *out, char *why, size_t n)
{
    const char *p;
    enum rates_state st = parse_head(text, d, now, out, &p, why, n);
    if (st != RATES_LOADED)
        return st;
    while (*p) {
        struct rate_entry e;
        double floor_us;
        int used = 0;
        if (sscanf(p, "rate %15s %47s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf\n%n", e.type,
                   e.kernel, &e.tflops, &e.gbps, &e.slice_eff, &e.ragged_eff, &floor_us,
                   &e.odd_eff, &e.few_eff, &e.tall_tflops, &e.tall_gbps, &e.short_eff,
                   &e.stream_eff, &used) != 13 ||
            !used || !(e.tflops >= 0) || !(e.gbps >= 0) || !(e.slice_eff > 0) ||
            !(e.ragged_eff > 0) || !(floor_us >= 0) || !(e.odd_eff >= 0) || !(e.few_eff >= 0) ||
            !(e.tall_tflops >= 0) || !(e.tall_gbps >= 0) || !(e.short_eff >= 0) ||
            !(e.stream_eff >= 0) ||
            !isfinite(e.tflops + e.gbps + e.slice_eff + e.ragged_eff + floor_us + e.odd_eff +
                      e.few_eff + e.tall_tflops + e.tall_gbps + e.short_eff + e.stream_eff))
            return STALE("a malformed rate line");
        e.floor_ms = floor_us / 1e3;
        if (out->count == RATES_MAX)
            return STALE("more than %d rates", RATES_MAX);
        out->e[out->count++] = e;
        p += used;
    }
    return out->count ? RATES_LOADED : STALE("no rates");
}

enum rates_state rates_load(const struct rates_device *d, time_t now, struct model_rates *out,
                            char *why, size_t n)
{
    char path[TUNE_PATH_MAX];
    char *text = NULL;
    size_t len = 0;
    if (rates_path(d, path, sizeof path) != 0)
        return RATES_MISSING;
    int st = tune_cache_read_text(path, &text, &len);
    if (st == TUNE_CACHE_MISSING)
        return RATES_MISSING;
    if (st != TUNE_CACHE_OK)
        return STALE("unreadable, or not a text file");
    enum rates_state r = rates_parse(text, d, now, out, why, n);
    free(text);
    return r;
}

int rates_store(const struct model_rates *r, char *why, size_t n)
{
    char path[TUNE_PATH_MAX];
    if (rates_path(&r->device, path, sizeof path) != 0) {
        snprintf(why, n, "no cache location: XDG_CACHE_HOME and HOME are unset, empty or "
                 "relative paths");
        return -1;
    }
    char *text = malloc(RATES_TEXT_MAX);
    if (!text) {
        snprintf(why, n, "out of host memory");
        return -1;
    }
    size_t len = rates_text(r, text, RATES_TEXT_MAX);
    int rc = tune_cache_write_text(path, text, len, why, n);
    free(text);
    return rc;
}

const char *rates_source_name(enum rates_source s)
{
    return s == RATES_MEASURED ? "measured" : s == RATES_SCALED ? "scaled" : "table";
}

void rates_describe(const struct model_rates *r, char *buf, size_t n)
{
    switch (r->source) {
    case RATES_MEASURED:
        snprintf(buf, n, "measured on this GPU (%s, driver %d.%d, %s)", r->measured_on,
                 r->device.driver / 1000, r->device.driver % 1000 / 10, r->date);
        break;
    case RATES_SCALED:
        snprintf(buf, n, "the table's (%s, %s) scaled to %s: compute x%.2f, memory x%.2f; "
                 "not yet measured here", r->measured_on, r->date, r->device.name,
                 r->compute_scale, r->memory_scale);
        break;
    default:
        snprintf(buf, n, "the table's (%s, %s)", r->measured_on, r->date);
        break;
    }
}
