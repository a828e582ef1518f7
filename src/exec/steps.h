/* The steps the executors share: the route settled into the report, the
 * stack's launches, operands and the result in host memory, and the
 * check's common part. */
#ifndef GC_EXEC_STEPS_H
#define GC_EXEC_STEPS_H

#include "src/exec/exec.h"
#include "src/job/verify.h"

/* One timed run of the product: the plan's launches, each `inner`
 * products, on the device or (on_host) the host. */
struct exec_launch {
    const struct matmul_plan *mm;
    const struct gemm_kernel *kern;
    struct gemm_problem p;          /* pointers at the stack's start */
    size_t in_es, out_es;           /* element sizes of the kernel's operands and C */
    const void *c0;                 /* C0 in C's type, restored before each run (beta != 0) */
    size_t c_bytes;
    int on_host;
    int threads;
    struct launch_env env;
};

/* job_time's run and before: the launches of one run, and C restored to
 * C0 ahead of it. */
int exec_launches(void *arg, int i);
int exec_restore_c(void *arg, int i);

/* Elements of the result, and a tensor of its shape in `dt` (no data). */
size_t exec_count(const struct matmul_plan *mm);
struct gc_tensor exec_shape(const struct matmul_plan *mm, enum gc_dtype dt);

/* The route for the FP64 bound's outcome, and the report's kernel, arithmetic and
 * tolerance from its pick. */
int exec_settle(struct mul_run *r, int f64_exact, const struct product_route **route);

/* The report's kernel, arithmetic, tolerance and auto's source for `p`. */
void exec_report_pick(struct mul_run *r, const struct product_pick *p, const char *auto_source);

/* Largest |x| of an integer tensor in host memory, for the FP64 bound. */
uint64_t exec_max_abs(const struct gc_tensor *t, int threads);

/* `t` in the kernel's operand type `to`, C order, into `out` (new). */
int exec_operand(const struct gc_tensor *t, enum gc_dtype to, struct gc_tensor *out);

/* r->result in the result's dtype from C in the signature's C type, on the
 * host: an integer one through its epilogue (alpha, beta and C0 modulo
 * 2^64), a float one converted, or C itself, taken over, where the types
 * agree. */
int exec_host_result(struct mul_run *r, struct gc_tensor *c);

/* The parts of a check every executor fills alike: the plan, the result,
 * the operands as read (when the host still holds them), C0, the scalars,
 * the threads and the progress line. */
void exec_verify_begin(struct mul_run *r, enum gemm_sig sig, int f64_exact,
                       struct verify_product *vp);

#endif
