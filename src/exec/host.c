/* The host executors: the product on host memory (--kernel cpu), in the
 * kernel's types, checked against a long double or exact product; and
 * the empty product, which has nothing to multiply. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/exec/steps.h"

/* The operands in the kernel's type, C in its own and C0 in C's (floats
 * with beta != 0), then the timed runs. */
static int host_run(struct mul_run *r, const struct product_pick *p, struct gc_tensor *bufs)
{
    const struct gc_opts *o = r->o;
    const struct matmul_plan *mm = &r->plan->mm;
    const struct gemm_sig_info *si = &gemm_sigs[p->sig];
    struct gc_tensor *a = &bufs[0], *b = &bufs[1], *c = &bufs[2], *c0 = &bufs[3];
    int float_beta = o->beta != 0 && !mm->exact && r->c0->data;
    int rc;
    *c = exec_shape(mm, si->out);
    if ((rc = exec_operand(r->a, si->in, a)) || (rc = exec_operand(r->b, si->in, b)))
        return rc;
    if (gc_tensor_alloc(c, NULL))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    if (float_beta && (rc = exec_operand(r->c0, si->out, c0)))
        return rc;
    struct exec_launch l = { mm, p->kern, { 0 }, gc_dtypes[si->in].size,
                             gc_dtypes[si->out].size, c0->data,
                             exec_count(mm) * gc_dtypes[si->out].size, 1, o->threads, { 0 } };
    matmul_problem(mm, p->sig, mm->exact ? 1 : o->alpha, float_beta ? o->beta : 0, &l.p);
    l.p.a = a->data;
    l.p.b = b->data;
    l.p.c = c->data;
    progress_phase(&r->job->progress, "running %s", p->kern->name);
    return job_time(r->job, exec_launches, float_beta ? exec_restore_c : NULL, &l, o->repeat,
                    &r->job->rep.kernel_ms);
}

int exec_host(struct mul_run *r)
{
    const struct gc_opts *o = r->o;
    const struct matmul_plan *mm = &r->plan->mm;
    int f64_exact = !mm->needs_bound || product_f64_exact(mm, exec_max_abs(r->a, o->threads),
                                                           exec_max_abs(r->b, o->threads));
    const struct product_route *route;
    int rc = exec_settle(r, f64_exact, &route);
    if (rc)
        return rc;
    struct gc_tensor bufs[4];
    memset(bufs, 0, sizeof bufs);
    if (!(rc = host_run(r, &route->pick, bufs)) && !(rc = exec_host_result(r, &bufs[2])) &&
        o->verify) {
        struct verify_product vp;
        exec_verify_begin(r, route->pick.sig, f64_exact, &vp);
        rc = verify_product(&vp, &r->job->rep.verify);
    }
    for (int i = 0; i < 4; i++)
        gc_tensor_free(&bufs[i]);
    return rc;
}

/* Nothing to multiply: NumPy's (m,0) @ (0,n) is zeros, and beta * C0 is
 * added to them. */
int exec_empty(struct mul_run *r)
{
    const struct matmul_plan *mm = &r->plan->mm;
    const struct gc_opts *o = r->o;
    r->job->rep.kernel = "none (empty product)";
    r->job->rep.compute = "none";
    size_t n = exec_count(mm);
    double *zero = calloc(n ? n : 1, sizeof *zero);
    if (!zero)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    r->result = exec_shape(mm, mm->result);
    int rc = 0;
    if (gc_tensor_alloc(&r->result, NULL)) {
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    } else if (mm->exact) {
        matmul_integer_result(zero, GC_F64, mm->alpha_i, mm->beta_i,
                              r->c0->data ? r->c0 : NULL, n, r->result.data, mm->result);
    } else {
        struct gc_tensor d = exec_shape(mm, GC_F64);
        d.data = zero;
        if (o->beta != 0 && r->c0->data)
            for (size_t i = 0; i < n; i++)
                zero[i] = o->beta * (double)gc_tensor_get(r->c0, i);
        gc_tensor_free(&r->result);
        if (gc_tensor_convert(&d, mm->result, NULL, &r->result))
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    }
    free(zero);
    return rc;
}
