/* Choosing a kernel: by name (--kernel NAME) or for a problem (auto); every
 * candidate is asked can_implement. */
#ifndef GC_SELECT_H
#define GC_SELECT_H

#include <stddef.h>

#include "src/plan/matmul.h"

/* The kernel for the plan into *kern: the one named, in the first of the
 * plan's signatures it computes, or for auto the model's fastest
 * (src/plan/model.c) over every signature (GEMM_F64 only when `f64_exact`
 * for an exact plan); sets *sig and *is_auto.  `cc` is the device's
 * compute capability (0: no device) and `sm_count` its SMs (0: the model's
 * own device).  Returns 0, or when none fits a status after saying why: an
 * unknown name or a named kernel that cannot compute this product
 * (GC_EXIT_USAGE), or no own kernel for it (GC_EXIT_GPU). */
int select_gemm_kernel(const char *name, const struct matmul_plan *plan, int cc, int sm_count,
                       int f64_exact, const struct gemm_kernel **kern, enum gemm_sig *sig,
                       int *is_auto);

/* The transpose kernel for a dtype into *kern: auto's, or the one named.
 * Returns 0, or a status after saying why none fits. */
int select_transpose_kernel(const char *name, size_t rows, size_t cols, enum gc_dtype dtype,
                            const struct transpose_kernel **kern, int *is_auto);

/* Whether a transpose kernel moves `dtype`'s elements faithfully. */
int select_transpose_takes(const struct transpose_kernel *kern, enum gc_dtype dtype);

/* Whether the plan may run in `sig`: an exact plan's f64 only below the
 * 2^53 bound (`f64_exact`). */
int select_sig_usable(const struct matmul_plan *plan, enum gemm_sig sig, int f64_exact);

/* What running the plan in `sig` costs beyond its kernel, by the active
 * rates' copy bandwidth: the operands converted to the signature's input
 * type where theirs differs (float16 data on a float32 kernel), and, with
 * `result`, its output to the result's type where that differs. */
double select_convert_ms(const struct matmul_plan *plan, enum gemm_sig sig, int result);

/* Whether auto may pick rows with these flags. */
int select_auto_candidate(unsigned flags);

/* Whether auto weighs stage k for a vector times a matrix or a matrix
 * times a vector (M or N = 1), where one such stage can take it: the
 * memory-bound stages that stream the wide operand once (gemv's and
 * thin's, their geometry 1 x 1), not the tiles nor small's and small_k's
 * blocks of C. */
int select_vector_candidate(const struct gemm_kernel *k);

#endif
