/* The timing summary every run prints: one phase per line on stderr, or
 * the same as one JSON object with --json. */
#ifndef GC_REPORT_H
#define GC_REPORT_H

#include <stdio.h>
#include <stddef.h>

/* Milliseconds on a monotonic clock. */
double now_ms(void);

struct gc_verify_result {
    int done;
    const char *reference;    /* "cublas" or "cpu-fp64" */
    double ref_ms;            /* the reference's kernel time (0 if not timed) */
    double max_abs, max_rel, rel_fro, tol;
    int ok;
};

struct gc_report {
    const char *command;      /* "mul", "transpose" */
    const char *kernel;
    int kernel_auto;          /* chosen by auto */
    const char *device;       /* device name, or "cpu" */
    const char *dtype;
    size_t m, n, k;           /* transpose: m x n is the input's shape */
    double work;              /* FLOPs (mul) or bytes moved (transpose) */
    int repeat;
    double read_ms, h2d_ms, kernel_ms, d2h_ms, write_ms, total_ms;
    struct gc_verify_result verify;
};

void report_print(FILE *f, const struct gc_report *r);
void report_json(FILE *f, const struct gc_report *r);

/* Writes `s` as a JSON string literal. */
void json_string(FILE *f, const char *s);

#endif
