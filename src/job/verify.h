/* Checking a result: comparisons with a reference, and the host
 * references used without a GPU (FP64 or better for floats, exact for
 * integers). */
#ifndef GC_VERIFY_H
#define GC_VERIFY_H

#include <stddef.h>

#include "src/plan/matmul.h"
#include "src/job/report.h"

/* Fills max_abs, max_rel, rel_fro, the non-finite counts and ok (against
 * v->tol) for a float result (f16, f32 or f64, C order) against a double
 * reference.  max_rel divides by |ref| where |ref| is above 1e-6 of the
 * largest finite |ref|, so that values that cancel to near zero do not
 * dominate it. */
void verify_compare_float(const struct gc_tensor *got, const double *ref,
                          struct gc_verify_result *v);

/* An integer (or bool) result against the exact one of the same dtype:
 * bit for bit. */
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
 * GC_F32 or GC_F64). */
void verify_errors(const void *x, int dt, const double *ref, size_t n, double *rel_fro,
                   double *max_rel);

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
