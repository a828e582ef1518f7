/* The timing summary every run prints: one phase per line on stderr, or
 * the same as one JSON object with --json. */
#ifndef GC_REPORT_H
#define GC_REPORT_H

#include <stdio.h>
#include <stddef.h>

/* Milliseconds on a monotonic clock. */
double now_ms(void);

/* Times `repeat` runs of run(arg) on the host's clock (after one untimed
 * warm-up run when repeat > 1) and stores the median; `before`, if not
 * NULL, runs untimed ahead of each run.  A non-zero status from either
 * stops and is returned. */
int host_time_runs(int (*run)(void *), int (*before)(void *), void *arg, int repeat,
                   double *median_ms);

struct gc_verify_result {
    int done;
    const char *reference;    /* "cublas" or "cpu-fp64" */
    double ref_ms;            /* the reference's kernel time (0 if not timed) */
    /* Errors over the elements finite in both the result and the reference. */
    double max_abs, max_rel, rel_fro, tol;
    /* Where the two disagree about being finite: inf or nan in the result
     * where the reference is finite, the reverse, and both non-finite but
     * not the same (nan against inf, or infinities of opposite signs). */
    size_t nonfinite_got, nonfinite_ref, nonfinite_diff;
    int ok;
};

/* Why a verification failed, in words: "N elements are inf or nan where
 * the reference is finite; ..." or "relative Frobenius error X is above
 * the tolerance Y". */
void verify_describe_failure(const struct gc_verify_result *v, char *buf, size_t n);

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
