#include "src/bench/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/convert.h"
#include "src/plan/select.h"

/* Device memory left free beside what the tuner allocates: the kernels'
 * own workspaces and the driver need some. */
#define SPARE_BYTES ((size_t)64 << 20)

static size_t free_device_bytes(void)
{
    size_t free_b = 0, total = 0;
    if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return free_b;
}

/* One kernel on the product, as the clock loop runs it. */
struct trial {
    struct gc_device *dev;
    const struct matmul_plan *plan;
    const struct gemm_kernel *kern;
    struct gemm_problem p;          /* pointers at the stack's start */
    size_t in_es, out_es;
    const void *c0;                 /* restored into C before each run; NULL: beta == 0 */
    size_t c_bytes;
    struct launch_env env;
};

/* The whole stack, launch by launch as the plan lays it out. */
static int trial_run(void *arg, int i)
{
    (void)i;
    const struct trial *t = arg;
    for (int64_t l = 0; l < t->plan->outer; l++) {
        int64_t oa, ob, oc;
        matmul_launch_offsets(t->plan, l, &oa, &ob, &oc);
        struct gemm_problem q = t->p;
        q.a = (const char *)t->p.a + (size_t)oa * t->in_es;
        q.b = (const char *)t->p.b + (size_t)ob * t->in_es;
        q.c = (char *)t->p.c + (size_t)oc * t->out_es;
        cudaError_t err = gemm_run(t->kern, &q, &t->env, 0);
        if (err != cudaSuccess)
            return device_cuda_fail(err, t->kern->name, __FILE__, __LINE__);
    }
    return 0;
}

static int trial_restore(void *arg, int i)
{
    (void)i;
    const struct trial *t = arg;
    return CUDA_CALL(cudaMemcpyAsync(t->p.c, t->c0, t->c_bytes, cudaMemcpyDeviceToDevice,
                                     t->env.stream));
}

static int trial_time(struct trial *t, const struct clock_plan *plan, double *ms)
{
    struct clock_timer timer = device_timer_clock(&t->dev->timer);
    t->dev->timer.err = cudaSuccess;
    int rc = clock_time_runs(&timer, trial_run, t->c0 ? trial_restore : NULL, t, plan, ms, NULL);
    if (rc == -1 && t->dev->timer.err != cudaSuccess)
        return device_cuda_fail(t->dev->timer.err, "timing", __FILE__, __LINE__);
    return rc == -1 ? gc_fail(GC_EXIT_INPUT, "out of host memory") : rc;
}

/* A warm-up and one timed run; unless that is over TUNE_DROP_FACTOR times
 * `best`, the median of more runs within the budget. */
static int time_kernel(struct trial *t, double best, double *ms, int *dropped)
{
    struct clock_plan first = { .repeat = 1, .warmup = 1 };
    double t1;
    int rc = trial_time(t, &first, &t1);
    if (rc)
        return rc;
    *dropped = isfinite(best) && t1 > TUNE_DROP_FACTOR * best;
    if (*dropped) {
        *ms = t1;
        return 0;
    }
    double fit = TUNE_BUDGET_MS / (t1 > 1e-3 ? t1 : 1e-3);
    struct clock_plan more = { .repeat = fit < TUNE_MIN_RUNS ? TUNE_MIN_RUNS
                                         : fit > TUNE_MAX_RUNS ? TUNE_MAX_RUNS : (int)fit };
    return trial_time(t, &more, ms);
}

static int needs_copy(const struct gc_tensor *t, enum gc_dtype to)
{
    return t->dtype != to || gc_tensor_column_major(t);
}

/* *dst = the operand in type `to`, C order: its own buffer when it is
 * that already, else a converted copy in *owned. */
static int operand_as(struct gc_device *dev, const struct tune_operand *o, enum gc_dtype to,
                      const void **dst, void **owned)
{
    const struct gc_tensor *t = o->t;
    *owned = NULL;
    if (!needs_copy(t, to)) {
        *dst = o->d;
        return 0;
    }
    size_t n = gc_tensor_count(t);
    int column = gc_tensor_column_major(t), rc;
    if ((rc = CUDA_CALL(cudaMalloc(owned, (n ? n : 1) * gc_dtypes[to].size))))
        return rc;
    *dst = *owned;
    size_t rows = column ? t->shape[0] : 0, cols = column ? t->shape[1] : 0;
    return CUDA_CALL(convert_operand_launch(o->d, t->dtype, column, rows, cols, n, *owned, to,
                                            dev->stream));
}

/* A row of the signature tuned last. */
static void add_row(struct tune_result *res, const struct gemm_kernel *k, enum gemm_sig sig,
                    double ms, int dropped, int reference)
{
    if (res->n_rows < TUNE_MAX_ROWS)
        res->rows[res->n_rows++] = (struct tune_row){ k, sig, ms, dropped, reference,
                                                      res->n_choices - 1 };
}

/* cuBLAS in the signature, or else in its reference (tf32x3's: SGEMM, the
 * accuracy that one aims at, on the same float operands). */
static int reference_sig(const struct gemm_kernel *ref, const struct gemm_problem *p,
                         enum gemm_sig *sig)
{
    char why[256];
    struct gemm_problem q = *p;
    if (gemm_can_implement(ref, &q, why, sizeof why)) {
        *sig = q.sig;
        return 1;
    }
    q.sig = gemm_sigs[p->sig].reference;
    if (q.sig != p->sig && gemm_can_implement(ref, &q, why, sizeof why)) {
        *sig = q.sig;
        return 1;
    }
    return 0;
}

static int tune_sig(struct gc_device *dev, const struct tune_target *t, enum gemm_sig s,
                    struct tune_result *res)
{
    const struct matmul_plan *pl = t->plan;
    const struct gemm_sig_info *si = &gemm_sigs[s];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    size_t na = gc_tensor_count(t->a.t), nb = gc_tensor_count(t->b.t);
    size_t nc = (size_t)(pl->batch * pl->m * pl->n);
    int with_c0 = t->beta != 0 && t->c0.d;
    struct tune_choice *ch = &res->choices[res->n_choices++];
    *ch = (struct tune_choice){ s, NULL, NAN, -1 };

    size_t need = nc * out_es + SPARE_BYTES;
    need += needs_copy(t->a.t, si->in) ? na * in_es : 0;
    need += needs_copy(t->b.t, si->in) ? nb * in_es : 0;
    need += with_c0 && needs_copy(t->c0.t, si->out) ? nc * out_es : 0;
    if (need > free_device_bytes())
        return 0;

    void *own_a = NULL, *own_b = NULL, *own_c0 = NULL, *c = NULL;
    const void *a, *b, *c0 = NULL;
    int rc;
    if ((rc = operand_as(dev, &t->a, si->in, &a, &own_a)) ||
        (rc = operand_as(dev, &t->b, si->in, &b, &own_b)) ||
        (with_c0 && (rc = operand_as(dev, &t->c0, si->out, &c0, &own_c0))) ||
        (rc = CUDA_CALL(cudaMalloc(&c, (nc ? nc : 1) * out_es))) ||
        (rc = CUDA_CALL(cudaStreamSynchronize(dev->stream))))
        goto out;

    struct trial tr = { dev, pl, NULL, { 0 }, in_es, out_es, c0, nc * out_es,
                        device_launch_env(dev) };
    matmul_problem(pl, s, t->alpha, with_c0 ? t->beta : 0, &tr.p);
    tr.p.a = a;
    tr.p.b = b;
    tr.p.c = c;
    tr.p.cc = dev->cc_major * 10 + dev->cc_minor;
    char why[512];
    int dropped;
    double ms;

    /* The reference first: it also brings the clocks up. */
    for (size_t j = 0; j < gemm_kernel_count; j++) {
        const struct gemm_kernel *k = &gemm_kernels[j];
        struct trial ref = tr;
        if (!(k->flags & KERNEL_REFERENCE) || (k->flags & KERNEL_HOST) ||
            !reference_sig(k, &tr.p, &ref.p.sig))
            continue;
        ref.kern = k;
        if ((rc = time_kernel(&ref, NAN, &ms, &dropped)))
            goto out;
        add_row(res, k, ref.p.sig, ms, 0, 1);
        if (ch->cublas_ms < 0)
            ch->cublas_ms = ms;
    }
    /* The table holds each ladder weakest first: from the top down, the
     * strong stages set the bar that drops the weak ones after one run. */
    for (size_t j = gemm_kernel_count; j-- > 0;) {
        const struct gemm_kernel *k = &gemm_kernels[j];
        if (!select_auto_candidate(k->flags) || !gemm_can_implement(k, &tr.p, why, sizeof why))
            continue;
        if (gemm_workspace_bytes(k, &tr.p) + SPARE_BYTES > free_device_bytes()) {
            add_row(res, k, s, NAN, 0, 0);
            continue;
        }
        tr.kern = k;
        if ((rc = time_kernel(&tr, ch->kern ? ch->ms : NAN, &ms, &dropped)))
            goto out;
        add_row(res, k, s, ms, dropped, 0);
        if (!dropped && (!ch->kern || ms < ch->ms)) {
            ch->kern = k;
            ch->ms = ms;
        }
    }
out:
    cudaFree(own_a);
    cudaFree(own_b);
    cudaFree(own_c0);
    cudaFree(c);
    return rc;
}

int tune_product(struct gc_device *dev, const struct tune_target *t, struct tune_result *res)
{
    memset(res, 0, sizeof *res);
    res->best = -1;
    int rc = device_cublas(dev);
    for (int i = 0; i < t->plan->n_sigs && !rc; i++)
        if (select_sig_usable(t->plan, t->plan->sigs[i], t->f64_exact))
            rc = tune_sig(dev, t, t->plan->sigs[i], res);
    for (int i = 0; i < res->n_choices; i++)
        if (res->choices[i].kern &&
            (res->best < 0 || res->choices[i].ms < res->choices[res->best].ms))
            res->best = i;
    return rc;
}

int tune_key_for(const struct gc_device *dev, const struct matmul_plan *plan, enum gemm_sig sig,
                 struct tune_key *key)
{
    return tune_key_make(key, dev->name, dev->cc_major, dev->cc_minor, dev->sm_count,
                         gemm_sigs[sig].name, plan->batch, plan->m, plan->n, plan->k);
}

int tune_store_result(const struct gc_device *dev, const struct matmul_plan *plan,
                      const struct tune_result *res, char *why, size_t n)
{
    struct tune_entry entries[GEMM_SIG_COUNT];
    int count = 0;
    for (int i = 0; i < res->n_choices && count < GEMM_SIG_COUNT; i++) {
        const struct tune_choice *c = &res->choices[i];
        struct tune_entry *e = &entries[count];
        memset(e, 0, sizeof *e);
        if (!c->kern || tune_key_for(dev, plan, c->sig, &e->key) != 0)
            continue;
        snprintf(e->kernel, sizeof e->kernel, "%s", c->kern->name);
        e->ms = c->ms;
        e->cublas_ms = c->cublas_ms;
        count++;
    }
    if (!count) {
        snprintf(why, n, "no kernel ran");
        return -1;
    }
    return tune_cache_store(entries, count, why, n);
}
