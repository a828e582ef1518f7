/* The timing summary every run prints: one phase per line on stderr, or
 * the same as one JSON object with --json. */
#ifndef GC_REPORT_H
#define GC_REPORT_H

#include <stdio.h>
#include <stddef.h>

#include "core/clock.h"
#include "core/tensor.h"

struct gc_verify_result {
    int done;
    int exact;                /* integers: compared bit for bit */
    const char *reference;    /* what the result was compared with */
    /* The library kernel timed on the same inputs and signature, and its
     * own error against the reference (negative: not measured). */
    const char *timed;        /* "cublas", or NULL */
    double ref_ms;
    /* Its output stored as the result's dtype (timed_as), rounded as the
     * result is, so that the two carry the same output rounding. */
    double timed_rel_fro, timed_max_rel;
    const char *timed_as;
    /* Where that dtype is narrower than its output (timed_acc_dtype: f32
     * beside a 16-bit result), its errors before that rounding: the
     * accumulator's.  NULL: not measured. */
    const char *timed_acc_dtype;
    double timed_acc_rel_fro, timed_acc_max_rel;
    /* Errors over the elements finite in both the result and the reference. */
    double max_abs, max_rel, rel_fro, tol;
    /* The sums of squares behind rel_fro, each term divided by
     * 4^square_exp (2^square_exp: the largest |reference| rounded down to
     * a power of two, within 2^+-1022), so that neither underflows nor
     * overflows. */
    double diff2, ref2;
    int square_exp;
    /* Where the two disagree about being finite: inf or nan in the result
     * where the reference is finite, the reverse, and both non-finite but
     * not the same (nan against inf, or infinities of opposite signs). */
    size_t nonfinite_got, nonfinite_ref, nonfinite_diff;
    size_t mismatches, count;  /* exact: elements that differ, of count */
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
    const char *auto_source;  /* where auto's choice came from: NULL the shipped
                                 choice, "cache" the tune cache, "tuned" tuned in
                                 this run (mul --tune) */
    const char *rates_source; /* auto's model choosing: its rates' source
                                 (src/plan/rates.h: "measured", "scaled", "table") */
    char rates[512];          /* and where they came from, in words */
    const char *device;       /* device name, or "cpu" */
    const char *dtype;        /* the result's */
    const char *compute;      /* mul: the arithmetic, as a signature's words */
    struct gc_report_shape {
        int ndim;
        size_t dims[GC_MAX_DIMS];
    } shape_a, shape_b, shape_out;   /* transpose: shape_a is the input's */
    size_t m, n, k;           /* of one product; transpose: rows, cols */
    size_t batch;             /* products (matrices) in the stack */
    double work;              /* FLOPs (mul) or bytes moved (transpose) */
    int repeat;
    double read_ms, h2d_ms, kernel_ms, d2h_ms, write_ms, total_ms;
    double start_ms;          /* waiting for the GPU to start, after the read */
    int uploaded_while_read;  /* operands copied to the device as they were read */
    char tiles[512];          /* a product computed in tiles: how, and on which GPUs */
    char ranks[160];          /* a product shared by MPI ranks: how */
    char panels[192];         /* their parts read in panels along K: how many, how moved */
    struct gc_verify_result verify;
};

/* A report's shape from a tensor's shape. */
void report_shape(struct gc_report_shape *s, int ndim, const size_t *dims);

void report_print(FILE *f, const struct gc_report *r);
/* The report as one JSON object on one line (src/job/json.h). */
void report_json(FILE *f, const struct gc_report *r);

/* Milliseconds on a monotonic clock (core/clock.h). */
static inline double now_ms(void) { return clock_ms(); }

#endif
