/* NumPy's matmul, planned: what `mul` computes for two operands of any
 * dtypes and shapes, before anything runs.
 *
 *   - Result dtype: np.result_type(A, B) (core/dtype.h).
 *   - 1-D operands: (k,) as A is a 1 x k row, as B a k x 1 column; the
 *     added axis is removed from the result.
 *   - Stacks: N-D operands are stacks of matrices in their last two axes;
 *     the leading axes broadcast as NumPy's do.
 *   - Arithmetic: --compute auto computes each result dtype in its own
 *     precision (f64 in FP64, f32 in FP32, f16 with FP32 accumulation,
 *     integers exactly); fp32, fp64 and exact name one; f16, bf16 and tf32
 *     round the operands (lossy, asked for); tf32x3 runs float data on the
 *     tensor cores at FP32-class accuracy (kernels/sgemm/sgemm_21_tf32x3.cu).  The
 *     plan lists the
 *     kernel signatures (registry.h) that compute it, in order of
 *     preference.
 *   - The stack runs as `outer` launches of `inner` products each, the
 *     products of a launch a fixed stride apart (broadcast axes stride 0),
 *     as many axes merged into one launch as the strides allow. */
#ifndef GC_MATMUL_H
#define GC_MATMUL_H

#include "core/tensor.h"
#include "kernels/registry.h"

enum matmul_compute {
    COMPUTE_AUTO, COMPUTE_FP32, COMPUTE_FP64, COMPUTE_EXACT, COMPUTE_F16, COMPUTE_BF16,
    COMPUTE_TF32, COMPUTE_TF32X3, COMPUTE_OZAKI, COMPUTE_OZAKI32, COMPUTE_COUNT
};

/* "auto", "fp32", ... and back; -1 if unknown. */
extern const char *const matmul_compute_names[COMPUTE_COUNT];
int matmul_compute_parse(const char *s);

struct matmul_plan {
    enum gc_dtype result;          /* np.result_type(A, B) */
    enum gc_dtype a_dtype, b_dtype; /* the operands' own */
    size_t a_count, b_count;       /* their elements */
    int out_ndim;
    size_t out_shape[GC_MAX_DIMS]; /* NumPy's shape of A @ B */
    int64_t m, n, k;
    /* The broadcast stack: nbatch axes of bshape, and each operand's
     * stride along them in elements (0 where it is broadcast). */
    int nbatch;
    size_t bshape[GC_MAX_DIMS];
    int64_t a_stride[GC_MAX_DIMS], b_stride[GC_MAX_DIMS];
    int64_t batch;                 /* products: the product of bshape */
    /* Launches: the last `inner_axes` axes run in one launch of `inner`
     * products, A's and B's matrices inner_sa and inner_sb apart. */
    int inner_axes;
    int64_t inner, inner_sa, inner_sb, outer;
    /* The signatures that compute it, preferred first. */
    enum gemm_sig sigs[GEMM_SIG_COUNT];
    int n_sigs;
    int exact;                     /* integer result: computed exactly, then wrapped */
    /* An integer result's alpha and beta, exact, as 64-bit patterns (1 and
     * 0 until matmul_integer_scalars): alpha * A@B + beta * C0 is summed
     * modulo 2^64 and truncated to the result's dtype, NumPy's wrap-around. */
    int64_t alpha_i, beta_i;
    int needs_bound;               /* the f64 signature is exact only below 2^53 */
};

/* Plans A @ B.  `names` are A's and B's names for messages.  Returns 0, or
 * GC_EXIT_INPUT (shapes, dtypes) / GC_EXIT_USAGE (a compute mode the data
 * cannot take) after saying why. */
int matmul_plan(const struct gc_tensor *a, const struct gc_tensor *b, int compute,
                const char *a_name, const char *b_name, struct matmul_plan *plan);

/* An integer result's --alpha and --beta from their text as given (NULL:
 * 1 and 0) into plan->alpha_i and beta_i, as NumPy 2 takes a Python int
 * against an array of the result's dtype: an integer within that dtype's
 * range (bool: 0 or 1, as False and True keep a bool product bool); one
 * out of range is an error (NumPy's OverflowError), and so is a float such
 * as 2.5 or 2.0, which would make NumPy's product float64.  Nothing to do
 * for a float result.  Returns 0 or GC_EXIT_USAGE after saying the range. */
int matmul_integer_scalars(struct matmul_plan *plan, const char *alpha, const char *beta);

/* Element offsets of launch number `i` < outer into A, B and C. */
void matmul_launch_offsets(const struct matmul_plan *plan, int64_t i, int64_t *a, int64_t *b,
                           int64_t *c);

/* The problem of one launch, pointers at the stack's start (add offsets). */
void matmul_problem(const struct matmul_plan *plan, enum gemm_sig sig, double alpha,
                    double beta, struct gemm_problem *p);

/* 0 when `c0`'s shape broadcasts to the result's (NumPy's rules), else
 * GC_EXIT_INPUT after saying so. */
int matmul_c0_check(const struct matmul_plan *plan, const struct gc_tensor *c0,
                    const char *c0_name);

/* C0 as the result's dtype and full shape: converted (gc_tensor_convert's
 * rules) and broadcast.  Returns 0 or GC_EXIT_INPUT (host memory). */
int matmul_c0_expand(const struct matmul_plan *plan, const struct gc_tensor *c0,
                     struct gc_tensor *out);

/* The host's side of an integer result: out (the result's dtype) =
 * alpha * acc + beta * c0 modulo 2^64, truncated as NumPy's integers wrap
 * (bool: nonzero), alpha and beta a plan's alpha_i and beta_i; acc holds
 * exact products as int64 or as integral doubles (`acc_type` GC_I64 or
 * GC_F64), or their low 32 bits (GC_I32: results of 32 bits or fewer);
 * c0 (the result's dtype and shape) is not read when beta == 0 or NULL. */
void matmul_integer_result(const void *acc, enum gc_dtype acc_type, int64_t alpha, int64_t beta,
                           const struct gc_tensor *c0, size_t count, void *out,
                           enum gc_dtype result);

/* An integer (or bool) tensor's elements as int64, uint64 by its bits
 * (modulo 2^64), in C order. */
void matmul_to_i64(const struct gc_tensor *t, int64_t *out);

/* Element i (C order) of an integer (or bool) tensor as its 64-bit
 * pattern: uint64 values above 2^63 - 1 kept, not clamped. */
uint64_t matmul_int_at(const struct gc_tensor *t, size_t i);

/* Checks a float result's alpha and beta for the signature (finite in
 * FP32): 0 or GC_EXIT_USAGE after naming the option.  An integer result's
 * are checked once, by matmul_integer_scalars. */
int matmul_check_scalars(const struct matmul_plan *plan, enum gemm_sig sig, double alpha,
                         double beta);

#endif
