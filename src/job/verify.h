/* Checking a result: one entry point for a product, whatever ran it
 * (verify_product), the comparisons with a reference, and the host
 * references used without a GPU (FP64 or better for floats, exact for
 * integers). */
#ifndef GC_VERIFY_H
#define GC_VERIFY_H

#include <stddef.h>

#include "src/plan/matmul.h"
#include "src/job/progress.h"
#include "src/job/report.h"

/* What a product's check goes on.  The reference is the first of a table
 * of references, in order of preference, that can be had for this product
 * where it ran, as the CUTLASS profiler picks its reference providers:
 *   1. the one its executor computed beside it (FP64 tile by tile, sums
 *      panel by panel), when there is one;
 *   2. on its GPU, the operands as read in FP64: a double-double product
 *      for FP64 arithmetic (so that the error of DGEMM beside it means
 *      something), else cuBLAS DGEMM, exact for integers within 2^53;
 *   3. on the host, from the operands as read: exact integers modulo 2^64,
 *      or sums of products in long double.
 * Integers are compared bit for bit, floats by their relative Frobenius
 * error against the report's tolerance. */
struct verify_product {
    const struct matmul_plan *plan;
    enum gemm_sig sig;              /* the arithmetic the product ran in */
    int f64_exact;                  /* an integer product within the FP64 bound */
    const struct gc_tensor *result; /* host, the result's dtype, C order */
    const struct gc_tensor *a, *b;  /* host, as read; NULL: not kept */
    const struct gc_tensor *c0;     /* the result's dtype and shape; NULL: none */
    double alpha, beta;             /* as given (an integer result's are the plan's) */
    int threads;
    /* Computed beside the product: the reference in doubles, or an integer
     * product's exact sums as int64 or integral doubles (alpha, beta and
     * C0 not applied); its words for the report.  NULL: none. */
    const void *beside;
    enum gc_dtype beside_type;
    const char *beside_words;
    /* One GPU's FP64 product of the operands as read into `out` (host,
     * doubles), as a double-double product when `double_double`: 0 or a
     * status.  NULL: no GPU. */
    int (*device_fp64)(void *arg, int double_double, double *out);
    void *device_arg;
    /* The library's result timed beside, as it came out (C's type,
     * timed_type: f32 or f64), whose own errors the report gives too:
     * stored as the result's dtype, rounded to it as the product's own C
     * is, so that both carry the same last rounding; and, where that
     * rounding narrows it, as it came out.  NULL: none. */
    const void *timed;
    enum gc_dtype timed_type;
    struct gc_progress *progress;
};

/* Checks vp->result into *v (its tol set by the caller): 0, or a status
 * after saying why no reference could be had (memory, the GPU).  A result
 * that disagrees is not an error here: v->ok says so. */
int verify_product(const struct verify_product *vp, struct gc_verify_result *v);

/* Fills max_abs, max_rel, rel_fro, the non-finite counts and ok (against
 * v->tol) for a float result (f16, f32 or f64, C order) against a double
 * reference.  max_rel divides by |ref| where |ref| is above 1e-6 of the
 * largest finite |ref|, so that values that cancel to near zero do not
 * dominate it. */
void verify_compare_float(const struct gc_tensor *got, const double *ref,
                          struct gc_verify_result *v);

/* An integer (or bool) result against the exact one of the same dtype:
 * bit for bit. */
/* Adds one block's sums of squares (each divided by 4^more_exp, as
 * verify_compare_float leaves them with square_exp) to running ones
 * divided by 4^*exp, keeping the larger exponent: blocks of any magnitude
 * add up without overflow or underflow. */
void verify_add_squares(double *diff2, double *ref2, int *exp, double more_diff2,
                        double more_ref2, int more_exp);

/* The float comparison's verdict from its sums: errors, the relative
 * Frobenius error sqrt(diff2 / ref2) against v->tol, and the elements that
 * disagree about being finite; also for blocks compared apart and added
 * up (MPI ranks). */
void verify_settle_float(struct gc_verify_result *v, double max_abs, double max_rel,
                         double diff2, double ref2, size_t got_only, size_t ref_only,
                         size_t differ);

void verify_compare_exact(const struct gc_tensor *got, const void *ref,
                          struct gc_verify_result *v);

/* ||x - ref|| / ||ref|| and the max relative error (as verify_compare_float
 * takes it) over the elements finite in both, for n floats or doubles (`dt`
 * GC_F32 or GC_F64) each stored first as the float dtype `as` (f16, bf16,
 * f32 or f64), rounded to nearest even as a product's result is. */
void verify_errors(const void *x, enum gc_dtype dt, enum gc_dtype as, const double *ref,
                   size_t n, double *rel_fro, double *max_rel);

/* The product of the plan on the host from A and B as read (C order) and
 * C0 as the result's dtype and shape (or NULL): for a float result, sums
 * of products in long double, rounded once to the double `out`; for an
 * integer result, exact modulo 2^64 and truncated as NumPy wraps, into
 * `out` of the result's dtype.  alpha and beta are a float result's; an
 * integer result's are the plan's alpha_i and beta_i.  Returns 0 or
 * GC_EXIT_INPUT (memory). */
int verify_host_reference(const struct matmul_plan *plan, const struct gc_tensor *a,
                          const struct gc_tensor *b, const struct gc_tensor *c0, double alpha,
                          double beta, int threads, void *out);

#endif
