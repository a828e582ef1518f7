#include "src/exec/steps.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "src/plan/rates.h"

int exec_launches(void *arg, int i)
{
    (void)i;
    const struct exec_launch *r = arg;
    const struct matmul_plan *mm = r->mm;
    for (int64_t l = 0; l < mm->outer; l++) {
        int64_t oa, ob, oc;
        matmul_launch_offsets(mm, l, &oa, &ob, &oc);
        struct gemm_problem q = r->p;
        q.a = (const char *)r->p.a + (size_t)oa * r->in_es;
        q.b = (const char *)r->p.b + (size_t)ob * r->in_es;
        q.c = (char *)r->p.c + (size_t)oc * r->out_es;
        cudaError_t err = gemm_run(r->kern, &q, &r->env, r->threads);
        if (err != cudaSuccess)
            return device_cuda_fail(err, r->kern->name, __FILE__, __LINE__);
    }
    return 0;
}

int exec_restore_c(void *arg, int i)
{
    (void)i;
    const struct exec_launch *r = arg;
    if (r->on_host) {
        memcpy(r->p.c, r->c0, r->c_bytes);
        return 0;
    }
    return CUDA_CALL(cudaMemcpyAsync(r->p.c, r->c0, r->c_bytes, cudaMemcpyDeviceToDevice,
                                     r->env.stream));
}

size_t exec_count(const struct matmul_plan *mm)
{
    return (size_t)(mm->batch * mm->m * mm->n);
}

struct gc_tensor exec_shape(const struct matmul_plan *mm, enum gc_dtype dt)
{
    struct gc_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = mm->out_ndim;
    memcpy(t.shape, mm->out_shape, sizeof mm->out_shape);
    t.dtype = dt;
    return t;
}

void exec_report_pick(struct mul_run *r, const struct product_pick *p, const char *auto_source)
{
    struct gc_report *rep = &r->job->rep;
    const struct gc_opts *o = r->o;
    rep->kernel = p->kern->name;
    rep->kernel_auto = r->plan->is_auto;
    rep->auto_source = auto_source;
    rep->rates_source = NULL;
    if (rep->kernel_auto && !auto_source && !(p->kern->flags & KERNEL_HOST)) {
        const struct model_rates *rates = rates_active();
        rep->rates_source = rates_source_name(rates->source);
        rates_describe(rates, rep->rates, sizeof rep->rates);
    }
    rep->compute = product_compute_words(&r->plan->mm, p->sig);
    rep->verify.tol = o->tol >= 0 ? o->tol : gemm_sig_verify_tol(p->sig, r->plan->mm.result);
}

int exec_settle(struct mul_run *r, int f64_exact, const struct product_route **route)
{
    int rc = product_settle(r->plan, f64_exact, route);
    if (!rc)
        exec_report_pick(r, &(*route)->pick, (*route)->auto_source);
    return rc;
}

/* Largest |x| of an integer tensor: each thread its slice, the largest
 * kept with a compare-and-swap. */
struct max_abs_job {
    const struct gc_tensor *t;
    _Atomic uint64_t most;
};

static void max_abs_slice(void *arg, size_t begin, size_t end)
{
    struct max_abs_job *mj = arg;
    uint64_t m = 0;
    for (size_t i = begin; i < end; i++) {
        long double v = gc_tensor_get(mj->t, i);
        uint64_t a = v < 0 ? (uint64_t)(-v) : (uint64_t)v;
        m = a > m ? a : m;
    }
    uint64_t seen = atomic_load(&mj->most);
    while (m > seen && !atomic_compare_exchange_weak(&mj->most, &seen, m))
        ;
}

uint64_t exec_max_abs(const struct gc_tensor *t, int threads)
{
    struct max_abs_job mj = { .t = t };
    atomic_init(&mj.most, 0);
    parallel_for(threads, gc_tensor_count(t), (size_t)1 << 20, max_abs_slice, &mj);
    return atomic_load(&mj.most);
}

int exec_operand(const struct gc_tensor *t, enum gc_dtype to, struct gc_tensor *out)
{
    if (to == GC_I64) {
        *out = *t;
        out->dtype = GC_I64;
        out->fortran_order = 0;
        if (gc_tensor_alloc(out, NULL))
            return gc_fail(GC_EXIT_INPUT, "out of host memory for an operand");
        matmul_to_i64(t, out->data);
        return 0;
    }
    if (gc_tensor_convert(t, to, NULL, out))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for an operand");
    return 0;
}

int exec_host_result(struct mul_run *r, struct gc_tensor *c)
{
    const struct matmul_plan *mm = &r->plan->mm;
    if (mm->exact) {
        r->result = exec_shape(mm, mm->result);
        if (gc_tensor_alloc(&r->result, NULL))
            return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
        matmul_integer_result(c->data, c->dtype, mm->alpha_i, mm->beta_i,
                              r->c0->data ? r->c0 : NULL, exec_count(mm), r->result.data,
                              mm->result);
        return 0;
    }
    if (c->dtype == mm->result) {
        r->result = *c;
        c->data = NULL;
        c->alloc = NULL;
        return 0;
    }
    if (gc_tensor_convert(c, mm->result, NULL, &r->result))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    return 0;
}

void exec_verify_begin(struct mul_run *r, enum gemm_sig sig, int f64_exact,
                       struct verify_product *vp)
{
    memset(vp, 0, sizeof *vp);
    vp->plan = &r->plan->mm;
    vp->sig = sig;
    vp->f64_exact = f64_exact;
    vp->result = &r->result;
    vp->a = r->a->data ? r->a : NULL;
    vp->b = r->b->data ? r->b : NULL;
    vp->c0 = r->c0->data ? r->c0 : NULL;
    vp->alpha = r->o->alpha;
    vp->beta = r->o->beta;
    vp->threads = r->o->threads;
    vp->progress = &r->job->progress;
}
