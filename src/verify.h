/* Comparing a result with a reference, and the FP64 host reference GEMM
 * used when --verify runs without a GPU. */
#ifndef GC_VERIFY_H
#define GC_VERIFY_H

#include <stddef.h>
#include "report.h"

/* Fills max_abs, max_rel, rel_fro and ok (against v->tol) for n values.
 * NaN anywhere in `got` that is not NaN in `ref` fails.  max_rel divides by
 * |ref| where |ref| is above 1e-6 of the largest |ref|, so that values that
 * cancel to near zero do not dominate it. */
void verify_compare_f32(const float *got, const float *ref, size_t n,
                        struct gc_verify_result *v);
void verify_compare_f32_f64(const float *got, const double *ref, size_t n,
                            struct gc_verify_result *v);

/* C = alpha*A*B + beta*C0 in double on `threads` host threads (0: all);
 * A is m x k, B is k x n, C0 (may be NULL) and C are m x n, row-major. */
int verify_host_dgemm(size_t m, size_t n, size_t k, double alpha, const float *a,
                      const float *b, double beta, const float *c0, double *c,
                      int threads);

#endif
