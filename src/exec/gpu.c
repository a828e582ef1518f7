/* The one-GPU executor: the product in one GPU's memory.
 *
 * The operands go up as they were read (or were uploaded while read);
 * there they are checked for the FP64 bound of an integer product (their
 * largest magnitudes), which settles the plan's route, converted to the
 * type the kernel takes, multiplied (the stack in as few launches as its
 * broadcasting allows), and the result converted to its dtype before it
 * is streamed or copied back.  --verify times cuBLAS beside the kernel and
 * checks the result against an FP64 product of the operands as read, on
 * the device (src/job/verify.h). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/convert.h"
#include "kernels/reference/ref_ddgemm.h"
#include "src/bench/tune.h"
#include "src/exec/steps.h"
#include "src/job/result.h"

struct dev_bufs {
    void *raw_a, *raw_b, *a, *b, *c, *c0, *res, *ref_a, *ref_b, *ref, *tc, *c0_ref;
    unsigned long long *max;
};

struct gpu {
    struct mul_run *r;
    struct job *jb;
    const struct gc_opts *o;
    const struct matmul_plan *mm;
    struct product_pick pick;      /* the route's, or the tuner's */
    int f64_exact, host_check, with_c0, float_beta, cc;
    size_t nc, out_es;
    struct dev_bufs d;
    struct exec_launch run;
};

/* Buffers may alias (an operand already in the kernel's type is its own
 * converted copy): each distinct one is freed once. */
static void free_bufs(struct dev_bufs *d)
{
    void *ps[] = { d->raw_a, d->raw_b, d->a, d->b, d->c, d->c0, d->res, d->ref_a, d->ref_b,
                   d->ref, d->tc, d->c0_ref, d->max };
    size_t n = sizeof ps / sizeof ps[0];
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = ps[k] == ps[i];
        if (ps[i] && !seen)
            cudaFree(ps[i]);
    }
    memset(d, 0, sizeof *d);
}

/* *dst = the tensor at `raw` (as read: dtype, order) in type `to`: `raw`
 * itself when it is that already, else a new buffer. */
static int device_operand(struct job *jb, const struct gc_tensor *t, void *raw, enum gc_dtype to,
                          void **dst)
{
    size_t n = gc_tensor_count(t);
    int column = gc_tensor_column_major(t);
    if (t->dtype == to && !column) {
        *dst = raw;
        return 0;
    }
    int rc;
    if ((rc = CUDA_CALL(cudaMalloc(dst, (n ? n : 1) * gc_dtypes[to].size))))
        return rc;
    size_t rows = column ? t->shape[0] : 0, cols = column ? t->shape[1] : 0;
    return CUDA_CALL(convert_operand_launch(raw, t->dtype, column, rows, cols, n, *dst, to,
                                            jb->dev.stream));
}

static int device_max_abs(struct job *jb, const struct gc_tensor *t, const void *raw,
                          unsigned long long *d_max, uint64_t *out)
{
    unsigned long long h = 0;
    int rc;
    if ((rc = CUDA_CALL(convert_max_abs_launch(raw, t->dtype, gc_tensor_count(t), d_max,
                                               jb->dev.stream))) ||
        (rc = CUDA_CALL(cudaMemcpyAsync(&h, d_max, sizeof h, cudaMemcpyDeviceToHost,
                                        jb->dev.stream))) ||
        (rc = CUDA_CALL(cudaStreamSynchronize(jb->dev.stream))))
        return rc;
    *out = h;
    return 0;
}

/* A and B on the device as read, and the FP64 bound measured there. */
static int gpu_upload(struct gpu *g)
{
    struct mul_run *r = g->r;
    struct dev_bufs *d = &g->d;
    int rc;
    progress_phase(&g->jb->progress, "copying the operands to the GPU");
    d->raw_a = upload_take(&r->up[0]);
    d->raw_b = upload_take(&r->up[1]);
    if ((!d->raw_a && (rc = job_upload(g->jb, r->a->data, gc_tensor_count(r->a) *
                                       gc_dtypes[r->a->dtype].size, &d->raw_a))) ||
        (!d->raw_b && (rc = job_upload(g->jb, r->b->data, gc_tensor_count(r->b) *
                                       gc_dtypes[r->b->dtype].size, &d->raw_b))))
        return rc;
    g->f64_exact = 1;
    if (g->mm->needs_bound) {
        uint64_t ma, mb;
        if ((rc = CUDA_CALL(cudaMalloc((void **)&d->max, sizeof *d->max))) ||
            (rc = device_max_abs(g->jb, r->a, d->raw_a, d->max, &ma)) ||
            (rc = device_max_abs(g->jb, r->b, d->raw_b, d->max, &mb)))
            return rc;
        g->f64_exact = product_f64_exact(g->mm, ma, mb);
    }
    return 0;
}

/* mul --tune on a miss in the tune cache: the fastest of auto's candidates
 * timed now on the product's own operands (d's raw copies; with C0, into
 * scratch memory), stored for next time.  A store that fails only warns:
 * the product goes on. */
static int gpu_tune(struct gpu *g)
{
    struct job *jb = g->jb;
    const struct gc_opts *o = g->o;
    const struct gc_tensor *c0 = g->r->c0;
    progress_phase(&jb->progress, "tuning auto's choice");
    size_t c0_bytes = g->float_beta ? gc_tensor_count(c0) * gc_dtypes[c0->dtype].size : 0;
    void *raw_c0 = NULL;
    struct tune_result *res = malloc(sizeof *res);
    int rc = res ? 0 : gc_fail(GC_EXIT_INPUT, "out of host memory");
    if (!rc && g->float_beta && !(rc = CUDA_CALL(cudaMalloc(&raw_c0, c0_bytes ? c0_bytes : 1))) &&
        !(rc = CUDA_CALL(cudaMemcpyAsync(raw_c0, c0->data, c0_bytes, cudaMemcpyHostToDevice,
                                         jb->dev.stream))))
        rc = CUDA_CALL(cudaStreamSynchronize(jb->dev.stream));
    if (!rc) {
        struct tune_target t = { g->mm, g->f64_exact, g->mm->exact ? 1 : o->alpha,
                                 g->float_beta ? o->beta : 0, { g->r->a, g->d.raw_a },
                                 { g->r->b, g->d.raw_b }, { c0, raw_c0 } };
        rc = tune_product(&jb->dev, &t, res);
    }
    cudaFree(raw_c0);
    if (!rc && res->best >= 0) {
        g->pick = (struct product_pick){ res->choices[res->best].kern,
                                         res->choices[res->best].sig };
        exec_report_pick(g->r, &g->pick, "tuned");
        char path[TUNE_PATH_MAX], why[512];
        if (tune_store_result(&jb->dev, g->mm, res, why, sizeof why) != 0) {
            if (tune_cache_path(path, sizeof path) == 0)
                gc_warn("%s: the tuned choice was not stored: %s", path, why);
            else
                gc_warn("the tuned choice was not stored: %s", why);
        }
    }
    free(res);
    return rc;
}

/* Device memory this run will take, to fail early and clearly. */
static size_t device_need(const struct gpu *g)
{
    const struct gemm_sig_info *si = &gemm_sigs[g->pick.sig];
    const struct gc_tensor *a = g->r->a, *b = g->r->b;
    size_t na = gc_tensor_count(a), nb = gc_tensor_count(b), nc = g->nc;
    size_t need = na * gc_dtypes[a->dtype].size + nb * gc_dtypes[b->dtype].size +
                  (na + nb) * gc_dtypes[si->in].size + nc * gc_dtypes[si->out].size * 2 +
                  nc * gc_dtypes[g->mm->result].size;
    if (g->o->verify)
        need += (na + nb + nc) * sizeof(double) + nc * gc_dtypes[si->out].size;
    struct gemm_problem p;
    matmul_problem(g->mm, g->pick.sig, 1, 0, &p);
    return need + gemm_workspace_bytes(g->pick.kern, &p);
}

/* C0 on the device: in C's type for the kernel (floats), as int64 for the
 * integer epilogue, and as double for the reference. */
static int gpu_c0(struct gpu *g, const struct gemm_sig_info *si)
{
    struct dev_bufs *d = &g->d;
    const struct gc_tensor *c0 = g->r->c0;
    void *raw_c0;
    enum gc_dtype c0_to = g->mm->exact ? GC_I64 : si->out;
    int rc = job_upload(g->jb, c0->data, g->nc * gc_dtypes[c0->dtype].size, &raw_c0);
    if (rc)
        return rc;
    rc = device_operand(g->jb, c0, raw_c0, c0_to, &d->c0);
    if (!rc && g->o->verify && !g->mm->exact)
        rc = device_operand(g->jb, c0, raw_c0, GC_F64, &d->c0_ref);
    if (raw_c0 != d->c0 && raw_c0 != d->c0_ref) {
        /* The conversions read it on the stream: wait for them. */
        if (!rc)
            rc = CUDA_CALL(cudaStreamSynchronize(g->jb->dev.stream));
        cudaFree(raw_c0);
    }
    return rc;
}

/* The operands in the kernel's type, C, C0 and the reference's FP64
 * operands on the device; the host copies freed unless the host checks
 * the result, which keeps the peak at inputs or output, not both. */
static int gpu_operands(struct gpu *g)
{
    struct mul_run *r = g->r;
    struct dev_bufs *d = &g->d;
    const struct gc_opts *o = g->o;
    int rc;
    if ((rc = device_check_memory(&g->jb->dev, device_need(g), "this product")))
        return rc;
    if (((g->pick.kern->flags & KERNEL_REFERENCE) || o->verify) &&
        (rc = device_cublas(&g->jb->dev)))
        return rc;
    const struct gemm_sig_info *si = &gemm_sigs[g->pick.sig];
    g->out_es = gc_dtypes[si->out].size;
    if ((rc = device_operand(g->jb, r->a, d->raw_a, si->in, &d->a)) ||
        (rc = device_operand(g->jb, r->b, d->raw_b, si->in, &d->b)) ||
        (rc = CUDA_CALL(cudaMalloc(&d->c, (g->nc ? g->nc : 1) * g->out_es))))
        return rc;
    if (g->with_c0 && (rc = gpu_c0(g, si)))
        return rc;
    if (o->verify && (!g->mm->exact || g->f64_exact) &&
        ((rc = device_operand(g->jb, r->a, d->raw_a, GC_F64, &d->ref_a)) ||
         (rc = device_operand(g->jb, r->b, d->raw_b, GC_F64, &d->ref_b))))
        return rc;
    if (!g->host_check) {
        gc_tensor_free(r->a);
        gc_tensor_free(r->b);
    }
    return 0;
}

/* The timed runs, then the result in its dtype on the device, streamed
 * to the output or copied to the host. */
static int gpu_run(struct gpu *g)
{
    const struct gc_opts *o = g->o;
    struct job *jb = g->jb;
    const struct matmul_plan *mm = g->mm;
    const struct gemm_sig_info *si = &gemm_sigs[g->pick.sig];
    struct dev_bufs *d = &g->d;
    g->run = (struct exec_launch){ mm, g->pick.kern, { 0 }, gc_dtypes[si->in].size, g->out_es,
                                   d->c0, g->nc * g->out_es, 0, o->threads,
                                   device_launch_env(&jb->dev) };
    matmul_problem(mm, g->pick.sig, mm->exact ? 1 : o->alpha, g->float_beta ? o->beta : 0,
                   &g->run.p);
    g->run.p.a = d->a;
    g->run.p.b = d->b;
    g->run.p.c = d->c;
    g->run.p.cc = g->cc;
    progress_phase(&jb->progress, "running %s", g->pick.kern->name);
    int rc = job_time(jb, exec_launches, g->float_beta ? exec_restore_c : NULL, &g->run,
                      o->repeat, &jb->rep.kernel_ms);
    if (rc)
        return rc;
    void *res = d->c;
    size_t res_bytes = (g->nc ? g->nc : 1) * gc_dtypes[mm->result].size;
    if (mm->exact) {
        if ((rc = CUDA_CALL(cudaMalloc(&d->res, res_bytes))) ||
            (rc = CUDA_CALL(convert_integer_result_launch(d->c, si->out, mm->alpha_i,
                                                          mm->beta_i, g->with_c0 ? d->c0 : NULL,
                                                          g->nc, d->res, mm->result,
                                                          jb->dev.stream))))
            return rc;
        res = d->res;
    } else if (si->out != mm->result) {
        if ((rc = CUDA_CALL(cudaMalloc(&d->res, res_bytes))) ||
            (rc = CUDA_CALL(convert_result_launch(d->c, si->out, g->nc, d->res, mm->result,
                                                  jb->dev.stream))))
            return rc;
        res = d->res;
    }
    struct gc_tensor shape = exec_shape(mm, mm->result);
    int out_dtype = o->out_dtype >= 0 ? o->out_dtype : (int)mm->result;
    return result_from_device(jb, res, &shape, !o->verify && out_dtype == (int)mm->result,
                              &g->r->result);
}

/* The double-double reference of an FP64 product (kernels/reference/ref_ddgemm.cu):
 * launch by launch of the plan, from the operands as doubles, C0 as
 * doubles at c0 (NULL when beta == 0), into out. */
static int run_ddref(const struct gpu *g, const double *c0, double alpha, double beta,
                     double *out)
{
    const struct matmul_plan *mm = g->mm;
    const double *a = g->d.ref_a, *b = g->d.ref_b;
    for (int64_t l = 0; l < mm->outer; l++) {
        int64_t oa, ob, oc;
        matmul_launch_offsets(mm, l, &oa, &ob, &oc);
        cudaError_t err = ref_ddgemm((int)mm->m, (int)mm->n, (int)mm->k, (int)mm->inner,
                                     mm->inner_sa, mm->inner_sb, alpha, a + oa, b + ob, beta,
                                     c0 ? c0 + oc : NULL, out + oc, g->run.env.stream);
        if (err != cudaSuccess)
            return device_cuda_fail(err, "double-double reference", __FILE__, __LINE__);
    }
    return 0;
}

/* verify_product's reference on this GPU: the operands as read in FP64,
 * multiplied by cuBLAS DGEMM (exact for integers below 2^53) or as a
 * double-double product, into host doubles. */
static int gpu_fp64(void *arg, int double_double, double *out)
{
    struct gpu *g = arg;
    struct dev_bufs *d = &g->d;
    const struct gc_opts *o = g->o;
    const struct matmul_plan *mm = g->mm;
    struct exec_launch f = g->run;
    f.kern = gemm_kernel_find("cublas");
    f.in_es = f.out_es = sizeof(double);
    matmul_problem(mm, GEMM_F64, mm->exact ? 1 : o->alpha, g->float_beta ? o->beta : 0, &f.p);
    f.p.a = d->ref_a;
    f.p.b = d->ref_b;
    f.p.cc = g->cc;
    int rc = CUDA_CALL(cudaMalloc(&d->ref, (g->nc ? g->nc : 1) * sizeof(double)));
    if (rc)
        return rc;
    f.p.c = d->ref;
    if (double_double)
        rc = run_ddref(g, g->float_beta ? d->c0_ref : NULL, o->alpha, g->float_beta ? o->beta : 0,
                       d->ref);
    else if (!(g->float_beta && (rc = CUDA_CALL(cudaMemcpyAsync(d->ref, d->c0_ref,
                                                                g->nc * sizeof(double),
                                                                cudaMemcpyDeviceToDevice,
                                                                g->jb->dev.stream)))))
        rc = exec_launches(&f, 0);
    return rc ? rc : device_download(&g->jb->dev, out, d->ref, g->nc * sizeof(double));
}

/* --verify: cuBLAS in this product's signature timed on the same operands
 * (for tf32x3, which cuBLAS lacks, SGEMM: the accuracy it aims at), then
 * the check. */
static int gpu_check(struct gpu *g)
{
    struct job *jb = g->jb;
    struct gc_verify_result *v = &jb->rep.verify;
    const struct gemm_kernel *cublas = gemm_kernel_find("cublas");
    void *tc_host = NULL;
    int rc = 0;
    progress_phase(&jb->progress, "checking against an FP64 product");
    struct gemm_problem tp = g->run.p;
    tp.sig = gemm_sigs[tp.sig].reference;
    if (cublas && gemm_can_implement(cublas, &tp, (char[8]){ 0 }, 8) &&
        !(rc = CUDA_CALL(cudaMalloc(&g->d.tc, (g->nc ? g->nc : 1) * g->out_es)))) {
        struct exec_launch t = g->run;
        t.kern = cublas;
        t.p.sig = tp.sig;
        t.p.c = g->d.tc;
        v->timed = "cublas";
        if (!(rc = job_time(jb, exec_launches, g->float_beta ? exec_restore_c : NULL, &t,
                            g->o->repeat, &v->ref_ms)) &&
            !(tc_host = malloc((g->nc ? g->nc : 1) * g->out_es)))
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory");
        if (!rc)
            rc = device_download(&jb->dev, tc_host, g->d.tc, g->nc * g->out_es);
    }
    if (!rc) {
        struct verify_product vp;
        exec_verify_begin(g->r, g->pick.sig, g->f64_exact, &vp);
        vp.device_fp64 = gpu_fp64;
        vp.device_arg = g;
        vp.timed = tc_host;
        vp.timed_type = gemm_sigs[g->pick.sig].out;
        rc = verify_product(&vp, v);
    }
    free(tc_host);
    return rc;
}

int exec_gpu(struct mul_run *r)
{
    struct gpu g = { .r = r, .jb = r->job, .o = r->o, .mm = &r->plan->mm };
    const struct product_route *route;
    g.cc = g.jb->dev.cc_major * 10 + g.jb->dev.cc_minor;
    g.nc = exec_count(g.mm);
    g.host_check = g.o->verify && g.mm->exact;
    g.with_c0 = g.o->beta != 0 && r->c0->data;
    g.float_beta = g.with_c0 && !g.mm->exact;
    int rc = gpu_upload(&g);
    if (!rc && !(rc = exec_settle(r, g.f64_exact, &route))) {
        g.pick = route->pick;
        if (!(route->tune_now && (rc = gpu_tune(&g))) && !(rc = gpu_operands(&g)) &&
            !(rc = gpu_run(&g)) && g.o->verify)
            rc = gpu_check(&g);
    }
    free_bufs(&g.d);
    return rc;
}
