/* Speed of formats/decimal.c, one thread: ns a value to parse and to
 * format float64 and float32, beside the C library doing the same
 * (strtod_l, snprintf "%.17g").  A benchmark, not a test; it checks only
 * that what it parsed is what it formatted.
 *
 *   make bench-decimal          (builds build/tests/bench_decimal and runs it)
 *   build/tests/bench_decimal [N]    N values a set (default 1000000)
 *
 * Sets: "normal" is standard normal values (what a matrix of noise holds),
 * "bits" is random bit patterns, every finite value alike (exponents from
 * subnormal to huge).  Each figure is the best of five passes. */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/decimal.h"

#define PASSES 5

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* n values of the set: standard normal (Box-Muller), or finite random bits
 * of a double or (f32) of a float. */
static void make_values(double *v, size_t n, int normal, int f32)
{
    uint64_t s = 42;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = rng_next(&s);
        if (normal) {
            double u1 = ((b >> 11) + 1) * 0x1p-53, u2 = (rng_next(&s) >> 11) * 0x1p-53;
            v[i] = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        } else if (f32) {
            float f;
            uint32_t b32 = (uint32_t)b;
            memcpy(&f, &b32, 4);
            v[i] = f;
            if (!isfinite(v[i]))
                i--;
        } else {
            memcpy(&v[i], &b, 8);
            if (!isfinite(v[i]))
                i--;
        }
    }
}

/* The values as text, one a line, NUL after the last. */
static char *make_text(const double *v, size_t n, int f32, int shortest, locale_t loc,
                       size_t *len)
{
    char *t = malloc(n * (DEC_MAX_TEXT + 1) + 1), *o = t;
    for (size_t i = 0; i < n; i++) {
        if (shortest)
            o += f32 ? dec_format_f32((float)v[i], 0, loc, o) : dec_format_f64(v[i], 0, loc, o);
        else
            o += sprintf(o, f32 ? "%.9g" : "%.17g", f32 ? (double)(float)v[i] : v[i]);
        *o++ = '\n';
    }
    *o = 0;
    *len = (size_t)(o - t);
    return t;
}

/* Best ns a value of PASSES parses of the text; checks the values. */
static double time_parse(const char *t, size_t len, const double *v, size_t n, int f32,
                         int libc, locale_t loc)
{
    double best = 1e300;
    size_t wrong = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        const char *p = t, *end = t + len;
        double t0 = now_ns();
        for (size_t i = 0; i < n; i++) {
            double d;
            float f;
            char *e;
            if (libc && f32) {
                f = strtof_l(p, &e, loc);
                p = e;
            } else if (libc) {
                d = strtod_l(p, &e, loc);
                p = e;
            } else if (f32) {
                p = dec_parse_f32(p, end, loc, &f);
            } else {
                p = dec_parse_f64(p, end, loc, &d);
            }
            if (!p)
                return -1;
            p++;
            if (pass == 0)
                wrong += f32 ? f != (float)v[i] : d != v[i];
        }
        double t1 = now_ns();
        if ((t1 - t0) / n < best)
            best = (t1 - t0) / n;
    }
    return wrong ? -1 : best;
}

/* Best ns a value of PASSES formattings. */
static double time_format(const double *v, size_t n, int f32, int libc, locale_t loc)
{
    double best = 1e300;
    char buf[64];
    size_t sink = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        double t0 = now_ns();
        for (size_t i = 0; i < n; i++) {
            if (libc)
                sink += (size_t)snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g",
                                         f32 ? (double)(float)v[i] : v[i]);
            else if (f32)
                sink += dec_format_f32((float)v[i], 0, loc, buf);
            else
                sink += dec_format_f64(v[i], 0, loc, buf);
        }
        double t1 = now_ns();
        if ((t1 - t0) / n < best)
            best = (t1 - t0) / n;
    }
    return sink ? best : -1;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t old = uselocale(loc);
    double *v = malloc(n * sizeof *v);
    printf("%-7s %-5s %12s %12s %12s %12s %12s\n", "set", "type", "parse %.17g", "parse short",
           "strtod_l", "shortest", "printf %.17g");
    for (int normal = 1; normal >= 0; normal--) {
        for (int f32 = 0; f32 <= 1; f32++) {
            make_values(v, n, normal, f32);
            size_t len_long, len_short;
            char *t_long = make_text(v, n, f32, 0, loc, &len_long);
            char *t_short = make_text(v, n, f32, 1, loc, &len_short);
            printf("%-7s %-5s %9.1f ns %9.1f ns %9.1f ns %9.1f ns %9.1f ns\n",
                   normal ? "normal" : "bits", f32 ? "f32" : "f64",
                   time_parse(t_long, len_long, v, n, f32, 0, loc),
                   time_parse(t_short, len_short, v, n, f32, 0, loc),
                   time_parse(t_long, len_long, v, n, f32, 1, loc),
                   time_format(v, n, f32, 0, loc), time_format(v, n, f32, 1, loc));
            free(t_long);
            free(t_short);
        }
    }
    printf("(f32 rows: %%.9g text and printf; -1: a value read back wrong)\n");
    uselocale(old);
    freelocale(loc);
    free(v);
    return 0;
}
