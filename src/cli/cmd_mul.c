/* gemmcli mul: C = alpha * A @ B + beta * C0, with NumPy's matmul rules
 * (src/plan/matmul.h) for dtypes, vectors and stacks.
 *
 * On the GPU the operands go up as they were read; there they are checked
 * for the exact integer path (largest magnitudes), converted to the type
 * the kernel takes, multiplied (the stack in as few launches as its
 * broadcasting allows), and the result converted to its dtype before it is
 * streamed or copied back.  On the host (--kernel cpu) the same steps run
 * on host memory.  --verify compares with an FP64 product of the operands
 * as read (cuBLAS DGEMM, or long double on the host), or, for integers,
 * with the exact result. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "kernels/convert.h"
#include "kernels/reference/ref_ddgemm.h"
#include "src/cli/commands.h"
#include "src/job/device.h"
#include "src/scale/dist.h"
#include "src/job/io.h"
#include "src/job/job.h"
#include "src/plan/matmul.h"
#include "src/plan/model.h"
#include "src/plan/select.h"
#include "src/scale/summa.h"
#include "src/bench/tune.h"
#include "src/scale/tiled_run.h"
#include "src/job/upload.h"
#include "src/job/verify.h"

struct mul_job {
    struct job job;
    const struct gc_opts *o;
    struct gc_tensor a, b, c0;      /* as read; c0 as the result's dtype and shape */
    struct matmul_plan plan;
    const struct gemm_kernel *kern;
    enum gemm_sig sig;
    struct gc_tensor result;        /* host, the result's dtype */
    struct upload up[2];            /* A and B uploaded as they are read */
    /* --devices: the other GPUs that will take tiles, started while the
     * operands are read. */
    struct gc_device_warm others[TILED_MAX_DEVICES];
    int n_others;
};

/* Every GPU that --devices names (all: the first 16 there are) creates its
 * context on a thread of its own while the operands are read, as the
 * job's own GPU does, instead of when its first tile is due. */
static void warm_tile_devices(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    int n = o->n_devices < 0 ? 16 : o->n_devices;
    for (int i = 0; i < n && j->n_others < TILED_MAX_DEVICES; i++) {
        int ordinal = o->n_devices < 0 ? i : o->devices[i];
        if (ordinal != o->device)
            device_warm_start(&j->others[j->n_others++], ordinal);
    }
}

static void warm_tile_devices_wait(struct mul_job *j)
{
    for (int i = 0; i < j->n_others; i++)
        device_warm_wait(&j->others[i]);
}

/* The default tolerance of --verify: the larger of what the arithmetic and
 * what the result's dtype can hold; integers are exact. */
static double default_tol(const struct mul_job *j)
{
    enum gc_dtype r = j->plan.result;
    double by_dtype = r == GC_BF16 ? 3e-2 : r == GC_F16 ? 4e-3 : r == GC_F32 ? 1e-4 : 1e-10;
    double by_sig = j->sig == GEMM_F64 ? 1e-10 : j->sig == GEMM_F16 ? 2e-3
                  : j->sig == GEMM_BF16 ? 1.5e-2 : j->sig == GEMM_TF32 ? 2e-3 : 1e-4;
    return by_dtype > by_sig ? by_dtype : by_sig;
}

/* The arithmetic, as the summary names it. */
static const char *compute_words(const struct matmul_plan *pl, enum gemm_sig sig)
{
    if (pl->exact && pl->needs_bound)
        return sig == GEMM_F64 ? "exact: FP64, below 2^53" : "exact: int64 modulo 2^64";
    return gemm_sigs[sig].arith;
}

/* ---- one run of the product, device or host ---- */

struct run_arg {
    const struct mul_job *j;
    const struct gemm_kernel *kern;
    struct gemm_problem p;          /* pointers at the stack's start */
    size_t in_es, out_es;           /* element sizes of the kernel's operands and C */
    const void *c0;                 /* C0 in C's type, restored before each run (beta != 0) */
    size_t c_bytes;
    int on_host;
    struct launch_env env;
};

static int run_product(void *arg, int i)
{
    (void)i;
    const struct run_arg *r = arg;
    const struct matmul_plan *pl = &r->j->plan;
    for (int64_t l = 0; l < pl->outer; l++) {
        int64_t oa, ob, oc;
        matmul_launch_offsets(pl, l, &oa, &ob, &oc);
        struct gemm_problem q = r->p;
        q.a = (const char *)r->p.a + (size_t)oa * r->in_es;
        q.b = (const char *)r->p.b + (size_t)ob * r->in_es;
        q.c = (char *)r->p.c + (size_t)oc * r->out_es;
        cudaError_t err = gemm_run(r->kern, &q, &r->env, r->j->o->threads);
        if (err != cudaSuccess)
            return device_cuda_fail(err, r->kern->name, __FILE__, __LINE__);
    }
    return 0;
}

/* The double-double reference of an FP64 product (kernels/reference/ref_ddgemm.cu):
 * launch by launch of the plan, from the operands as doubles at a and b,
 * C0 as doubles at c0 (NULL when beta == 0), into out. */
static int run_ddref(const struct run_arg *r, const double *a, const double *b,
                     const double *c0, double alpha, double beta, double *out)
{
    const struct matmul_plan *pl = &r->j->plan;
    for (int64_t l = 0; l < pl->outer; l++) {
        int64_t oa, ob, oc;
        matmul_launch_offsets(pl, l, &oa, &ob, &oc);
        cudaError_t err = ref_ddgemm((int)pl->m, (int)pl->n, (int)pl->k, (int)pl->inner,
                                     pl->inner_sa, pl->inner_sb, alpha, a + oa, b + ob, beta,
                                     c0 ? c0 + oc : NULL, out + oc, r->env.stream);
        if (err != cudaSuccess)
            return device_cuda_fail(err, "double-double reference", __FILE__, __LINE__);
    }
    return 0;
}

static int restore_c(void *arg, int i)
{
    (void)i;
    const struct run_arg *r = arg;
    if (r->on_host) {
        memcpy(r->p.c, r->c0, r->c_bytes);
        return 0;
    }
    return CUDA_CALL(cudaMemcpyAsync(r->p.c, r->c0, r->c_bytes, cudaMemcpyDeviceToDevice,
                                     r->env.stream));
}

static size_t result_count(const struct matmul_plan *p)
{
    return (size_t)(p->batch * p->m * p->n);
}

static struct gc_tensor result_shape(const struct matmul_plan *p, enum gc_dtype dt)
{
    struct gc_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = p->out_ndim;
    memcpy(t.shape, p->out_shape, sizeof p->out_shape);
    t.dtype = dt;
    return t;
}

/* The result in its dtype from C in the signature's C type, on the host:
 * an integer one through its epilogue (alpha, beta and C0 applied modulo
 * 2^64), a float one converted, or C itself, taken over, where the types
 * agree. */
static int host_result(struct mul_job *j, struct gc_tensor *c)
{
    const struct matmul_plan *pl = &j->plan;
    if (pl->exact) {
        j->result = result_shape(pl, pl->result);
        if (gc_tensor_alloc(&j->result, NULL))
            return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
        matmul_integer_result(c->data, c->dtype, pl->alpha_i, pl->beta_i,
                              j->c0.data ? &j->c0 : NULL, result_count(pl), j->result.data,
                              pl->result);
        return 0;
    }
    if (c->dtype == pl->result) {
        j->result = *c;
        c->data = NULL;
        c->alloc = NULL;
        return 0;
    }
    if (gc_tensor_convert(c, pl->result, NULL, &j->result))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    return 0;
}

/* ---- the host ---- */

/* Largest |x| of an integer tensor, for the exact path's bound: each
 * thread its slice, the largest kept with a compare-and-swap. */
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

static uint64_t host_max_abs(const struct gc_tensor *t, int threads)
{
    struct max_abs_job mj = { .t = t };
    atomic_init(&mj.most, 0);
    parallel_for(threads, gc_tensor_count(t), (size_t)1 << 20, max_abs_slice, &mj);
    return atomic_load(&mj.most);
}

static int f64_exact_for(const struct matmul_plan *p, uint64_t max_a, uint64_t max_b)
{
    return (long double)max_a * (long double)max_b * (long double)(p->k ? p->k : 1) < 0x1p53L;
}

/* An operand in the kernel's type, C order. */
static int host_operand(const struct gc_tensor *t, enum gc_dtype to, struct gc_tensor *out)
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

static int mul_host(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    const struct matmul_plan *pl = &j->plan;
    int f64_exact = !pl->needs_bound || f64_exact_for(pl, host_max_abs(&j->a, o->threads),
                                                             host_max_abs(&j->b, o->threads));
    int rc, is_auto;
    j->kern = select_gemm(o->kernel, pl, 0, 0, f64_exact, &j->sig, &is_auto, &rc);
    if (!j->kern)
        return rc;
    if (!(j->kern->flags & KERNEL_HOST))
        return gc_fail(GC_EXIT_USAGE, "kernel '%s' runs on the GPU only", j->kern->name);
    if ((rc = matmul_check_scalars(pl, j->sig, o->alpha, o->beta)))
        return rc;
    j->job.rep.kernel = j->kern->name;
    j->job.rep.compute = compute_words(pl, j->sig);
    j->job.rep.verify.tol = o->tol >= 0 ? o->tol : default_tol(j);
    const struct gemm_sig_info *si = &gemm_sigs[j->sig];
    struct gc_tensor a = { 0 }, b = { 0 }, c = result_shape(pl, si->out), c0 = { 0 };
    int float_beta = o->beta != 0 && !pl->exact && j->c0.data;
    if ((rc = host_operand(&j->a, si->in, &a)) || (rc = host_operand(&j->b, si->in, &b)))
        goto out;
    if (gc_tensor_alloc(&c, NULL)) {
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
        goto out;
    }
    if (float_beta && (rc = host_operand(&j->c0, si->out, &c0)))
        goto out;
    struct run_arg r = { j, j->kern, { 0 }, gc_dtypes[si->in].size, gc_dtypes[si->out].size,
                         c0.data, result_count(pl) * gc_dtypes[si->out].size, 1, { 0 } };
    matmul_problem(pl, j->sig, pl->exact ? 1 : o->alpha, float_beta ? o->beta : 0, &r.p);
    r.p.a = a.data;
    r.p.b = b.data;
    r.p.c = c.data;
    progress_phase(&j->job.progress, "running %s", j->kern->name);
    if ((rc = job_time(&j->job, run_product, float_beta ? restore_c : NULL, &r, o->repeat,
                       &j->job.rep.kernel_ms)))
        goto out;

    if ((rc = host_result(j, &c)))
        goto out;

    if (o->verify) {
        struct gc_verify_result *v = &j->job.rep.verify;
        size_t n = result_count(pl);
        void *ref = malloc((n ? n : 1) * (pl->exact ? gc_dtypes[pl->result].size : sizeof(double)));
        if (!ref) {
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference product");
            goto out;
        }
        progress_phase(&j->job.progress, "checking against %s",
                       pl->exact ? "the exact product" : "a long double product");
        v->reference = pl->exact ? "exact (cpu, modulo 2^64)" : "cpu (long double)";
        if (!(rc = verify_host_reference(pl, &j->a, &j->b, j->c0.data ? &j->c0 : NULL, o->alpha,
                                         o->beta, o->threads, ref))) {
            if (pl->exact)
                verify_compare_exact(&j->result, ref, v);
            else
                verify_compare_float(&j->result, ref, v);
        }
        free(ref);
    }
out:
    gc_tensor_free(&a);
    gc_tensor_free(&b);
    gc_tensor_free(&c);
    gc_tensor_free(&c0);
    return rc;
}

/* ---- the device ---- */

struct dev_bufs {
    void *raw_a, *raw_b, *a, *b, *c, *c0, *res, *ref_a, *ref_b, *ref, *tc, *c0_ref;
    unsigned long long *max;
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

/* Device memory this run will take, to fail early and clearly. */
static size_t device_need(const struct mul_job *j)
{
    const struct matmul_plan *pl = &j->plan;
    const struct gemm_sig_info *si = &gemm_sigs[j->sig];
    size_t na = gc_tensor_count(&j->a), nb = gc_tensor_count(&j->b), nc = result_count(pl);
    size_t need = na * gc_dtypes[j->a.dtype].size + nb * gc_dtypes[j->b.dtype].size +
                  (na + nb) * gc_dtypes[si->in].size + nc * gc_dtypes[si->out].size * 2 +
                  nc * gc_dtypes[pl->result].size;
    if (j->o->verify)
        need += (na + nb + nc) * sizeof(double) + nc * gc_dtypes[si->out].size;
    struct gemm_problem p;
    matmul_problem(pl, j->sig, 1, 0, &p);
    return need + gemm_workspace_bytes(j->kern, &p);
}

/* auto's choice, after select_gemm's: the tune cache's when it has one
 * for this product on this device; on a miss with --tune, the fastest
 * candidate timed now on the product's own operands (d's raw copies;
 * with C0, into scratch memory), stored for next time.  A store that
 * fails only warns: the product goes on. */
static int auto_tuned(struct mul_job *j, const struct dev_bufs *d, int f64_exact)
{
    struct job *jb = &j->job;
    const struct gc_opts *o = j->o;
    const struct matmul_plan *pl = &j->plan;
    enum gemm_sig sig;
    const struct gemm_kernel *k = tune_cached_choice(&jb->dev, pl, f64_exact, &sig);
    if (k) {
        j->kern = k;
        j->sig = sig;
        jb->rep.auto_source = "cache";
        return 0;
    }
    if (!o->tune)
        return 0;
    progress_phase(&jb->progress, "tuning auto's choice");
    int float_beta = o->beta != 0 && j->c0.data && !pl->exact;
    size_t c0_bytes = float_beta ? gc_tensor_count(&j->c0) * gc_dtypes[j->c0.dtype].size : 0;
    void *raw_c0 = NULL;
    struct tune_result *res = malloc(sizeof *res);
    int rc = res ? 0 : gc_fail(GC_EXIT_INPUT, "out of host memory");
    if (!rc && float_beta && !(rc = CUDA_CALL(cudaMalloc(&raw_c0, c0_bytes ? c0_bytes : 1))) &&
        !(rc = CUDA_CALL(cudaMemcpyAsync(raw_c0, j->c0.data, c0_bytes, cudaMemcpyHostToDevice,
                                         jb->dev.stream))))
        rc = CUDA_CALL(cudaStreamSynchronize(jb->dev.stream));
    if (!rc) {
        struct tune_target t = { pl, f64_exact, pl->exact ? 1 : o->alpha, float_beta ? o->beta : 0,
                                 { &j->a, d->raw_a }, { &j->b, d->raw_b }, { &j->c0, raw_c0 } };
        rc = tune_product(&jb->dev, &t, res);
    }
    cudaFree(raw_c0);
    if (!rc && res->best >= 0) {
        j->kern = res->choices[res->best].kern;
        j->sig = res->choices[res->best].sig;
        jb->rep.auto_source = "tuned";
        char path[TUNE_PATH_MAX], why[512];
        if (tune_store_result(&jb->dev, pl, res, why, sizeof why) != 0) {
            if (tune_cache_path(path, sizeof path) == 0)
                gc_warn("%s: the tuned choice was not stored: %s", path, why);
            else
                gc_warn("the tuned choice was not stored: %s", why);
        }
    }
    free(res);
    return rc;
}

/* Operand i went to the device as it was read: back to the host, for a
 * product computed in tiles from host memory. */
static int sunk_to_host(struct mul_job *j, int i)
{
    struct gc_tensor *t = i ? &j->b : &j->a;
    void *d = upload_take(&j->up[i]);
    if (!d)
        return 0;
    t->data = NULL;
    t->alloc = NULL;
    size_t bytes = gc_tensor_count(t) * gc_dtypes[t->dtype].size;
    int rc = gc_tensor_alloc(t, NULL) ? gc_fail(GC_EXIT_INPUT, "out of host memory for an operand")
                                      : CUDA_CALL(cudaMemcpy(t->data, d, bytes, cudaMemcpyDeviceToHost));
    cudaFree(d);
    return rc;
}

/* Host operands of tiles this large are page-locked in place. */
#define PIN_FROM ((size_t)64 << 20)

/* Finished rows of C from the tiles into the output file at their offsets. */
struct file_sink_arg {
    const struct io_offsets *at;
};

static int file_sink_put(void *arg, size_t first, int64_t rows, int64_t cols, size_t ld,
                         const void *data)
{
    const struct file_sink_arg *fs = arg;
    return io_offsets_write(fs->at, first, rows, cols, ld, data);
}

/* The kernel's expected rate for the whole product, FLOP/s, from auto's
 * model (0 when it has none): what the tile plan weighs copies against. */
static double model_flops(const struct mul_job *j, const struct gemm_kernel *kern,
                          enum gemm_sig sig)
{
    const struct matmul_plan *pl = &j->plan;
    struct gemm_problem p;
    matmul_problem(pl, sig, 1, 0, &p);
    struct model_estimate e = model_estimate(kern, &p, j->job.dev.sm_count);
    double work = 2.0 * (double)pl->batch * (double)pl->m * (double)pl->n * (double)pl->k;
    return isfinite(e.ms) && e.ms > 0 ? work / (e.ms / 1000) : 0;
}

/* The product in tiles (src/scale/tiled_run.h) when it needs more device memory
 * than it may use (--device-memory, else what is free), or when --devices
 * shares it among GPUs; *done says whether it ran here.  Operands go to
 * the host in the kernel's type, C order; C0 (floats) is C's first value,
 * and an integer result's alpha, beta and C0 are applied on the host
 * after, as on the device in core. */
static int mul_tiled(struct mul_job *j, int *done)
{
    const struct gc_opts *o = j->o;
    struct job *jb = &j->job;
    const struct matmul_plan *pl = &j->plan;
    int cc = jb->dev.cc_major * 10 + jb->dev.cc_minor, rc = 0, is_auto;
    enum gemm_sig sig;
    *done = 0;
    /* The arithmetic and the memory in core; for integers, both exact
     * paths take 8 bytes an element, so the bound waits until tiles are
     * certain. */
    const struct gemm_kernel *kern = select_gemm(o->kernel, pl, cc, jb->dev.sm_count, 1, &sig,
                                                 &is_auto, &rc);
    if (!kern)
        return rc;
    size_t na = gc_tensor_count(&j->a), nb = gc_tensor_count(&j->b), nc = result_count(pl);
    size_t in_es = gc_dtypes[gemm_sigs[sig].in].size, out_es = gc_dtypes[gemm_sigs[sig].out].size;
    size_t need = (na + nb) * in_es + nc * out_es;
    if (gemm_sigs[sig].out != pl->result)
        need += nc * gc_dtypes[pl->result].size;
    if (o->verify)
        need += (na + nb + nc) * sizeof(double) + nc * out_es;
    size_t free_b = 0, total_b = 0;
    if ((rc = CUDA_CALL(cudaMemGetInfo(&free_b, &total_b))))
        return rc;
    /* Operands already on the device hold memory that in-core work reuses. */
    for (int i = 0; i < 2; i++)
        if (j->up[i].d)
            free_b += gc_tensor_count(i ? &j->b : &j->a) *
                      gc_dtypes[(i ? &j->b : &j->a)->dtype].size;
    size_t budget = o->device_memory ? o->device_memory : free_b / 20 * 19;
    if (!o->n_devices && need <= budget)
        return 0;
    *done = 1;

    struct tiled_job tj = { .plan = pl, .kernel = o->kernel, .budget = budget,
                            .host_threads = o->threads };
    if (o->n_devices < 0) {
        int n = 0;
        if ((rc = CUDA_CALL(cudaGetDeviceCount(&n))))
            return rc;
        tj.n_devices = n < TILED_MAX_DEVICES ? n : TILED_MAX_DEVICES;
        for (int i = 0; i < tj.n_devices; i++)
            tj.devices[i] = i;
    } else if (o->n_devices > 0) {
        tj.n_devices = o->n_devices;
        memcpy(tj.devices, o->devices, sizeof o->devices[0] * (size_t)o->n_devices);
    } else {
        tj.n_devices = 1;
        tj.devices[0] = jb->dev.ordinal;
    }
    warm_tile_devices_wait(j);
    progress_phase(&jb->progress, "preparing the operands for tiles");
    if ((rc = sunk_to_host(j, 0)) || (rc = sunk_to_host(j, 1)))
        return rc;
    /* An integer product: FP64 below 2^53, else int64 (as in core). */
    int f64_exact = 1;
    if (pl->needs_bound) {
        f64_exact = f64_exact_for(pl, host_max_abs(&j->a, o->threads),
                                  host_max_abs(&j->b, o->threads));
        if (!(kern = select_gemm(o->kernel, pl, cc, jb->dev.sm_count, f64_exact, &sig,
                                 &is_auto, &rc)))
            return rc;
    }
    if ((rc = matmul_check_scalars(pl, sig, o->alpha, o->beta)))
        return rc;
    const struct gemm_sig_info *si = &gemm_sigs[sig];
    int float_beta = o->beta != 0 && j->c0.data && !pl->exact;
    /* The exact host reference beyond 2^53 reads the operands as read, so
     * they stay beside their int64 copies. */
    int host_check = o->verify && pl->exact && !f64_exact;
    struct gc_tensor a = { 0 }, b = { 0 }, c = result_shape(pl, si->out);
    struct gc_tensor ref = result_shape(pl, GC_F64);
    const struct gc_tensor *ha = &j->a, *hb = &j->b;
    int pinned[3] = { 0 };
    /* A regular .npy or raw output file takes each tile's rows at their
     * offsets as the tile lands in host memory, while the next tiles run;
     * not with --verify (a failed check writes nothing, so the check comes
     * first), nor when C's type is not the output's.  Any other output
     * (begun here all the same) is written whole at the end. */
    int out_dtype = o->out_dtype >= 0 ? o->out_dtype : (int)pl->result;
    struct io_offsets at;
    struct file_sink_arg fs = { &at };
    struct tiled_sink sink = { file_sink_put, &fs };
    int to_file = 0, begun = 0;
    if (!o->verify && !pl->exact && si->out == pl->result && out_dtype == (int)pl->result &&
        !jb->no_stream && (jb->fmt == GC_FMT_NPY || jb->fmt == GC_FMT_RAW)) {
        struct gc_tensor whole = result_shape(pl, pl->result);
        if ((rc = output_begin(&jb->out, o->output, io_output_flags(o, jb->fmt))))
            return rc;
        begun = 1;
        if ((rc = io_offsets_begin(&jb->out, jb->fmt, &whole, &at)) < 0 || rc > 1)
            return rc;
        to_file = rc == 0;
        rc = 0;
    }
    if (pl->exact) {
        if ((rc = host_operand(&j->a, si->in, &a)) || (rc = host_operand(&j->b, si->in, &b)))
            goto out;
        ha = &a;
        hb = &b;
        if (!host_check) {
            gc_tensor_free(&j->a);
            gc_tensor_free(&j->b);
        }
    } else if ((rc = io_to_c_order(&j->a, si->in)) || (rc = io_to_c_order(&j->b, si->in))) {
        goto out;
    }
    /* C starts as C0 in C's type (and the reference as C0 in doubles). */
    if (float_beta ? gc_tensor_convert(&j->c0, si->out, NULL, &c) : gc_tensor_alloc(&c, NULL)) {
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
        goto out;
    }
    if (o->verify && !host_check &&
        (float_beta ? gc_tensor_convert(&j->c0, GC_F64, NULL, &ref) : gc_tensor_alloc(&ref, NULL))) {
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
        goto out;
    }
    /* Large operands (and a C0 to start from) page-locked in place, where
     * the system allows: copied straight from, not through the slots.
     * Small ones go through the slots, which costs less than locking them;
     * so does a C that starts empty, whose pages the threads that scatter
     * tiles into it fault in side by side, where locking would first fill
     * all of them on one thread. */
    double t = now_ms();
    pinned[0] = na * in_es >= PIN_FROM && device_pin(ha->data, na * in_es);
    pinned[1] = nb * in_es >= PIN_FROM && device_pin(hb->data, nb * in_es);
    pinned[2] = float_beta && nc * out_es >= PIN_FROM && device_pin(c.data, nc * out_es);
    jb->rep.h2d_ms += now_ms() - t;
    tj.pinned = (pinned[0] ? TILED_PINNED_A : 0) | (pinned[1] ? TILED_PINNED_B : 0) |
                (pinned[2] ? TILED_PINNED_C : 0);
    tj.sig = sig;
    tj.alpha = pl->exact ? 1 : o->alpha;
    tj.beta = float_beta ? o->beta : 0;
    tj.c_in = float_beta;
    tj.flops = model_flops(j, kern, sig);
    tj.a = ha->data;
    tj.b = hb->data;
    tj.c = c.data;
    tj.sink = to_file ? &sink : NULL;
    tj.ref = ref.data;
    progress_phase(&jb->progress, to_file ? "running in tiles, writing %s as they finish"
                                          : "running in tiles", gc_display_name(o->output, 1));
    t = now_ms();
    rc = tiled_run(&tj);
    /* Unlocked now: C may become the result, freed as any tensor. */
    for (int i = 0; i < 3; i++)
        if (pinned[i])
            cudaHostUnregister(i == 0 ? ha->data : i == 1 ? hb->data : c.data);
    memset(pinned, 0, sizeof pinned);
    /* The tiles' phase ends when the last tile is in host memory; writing
     * the file went on beside it, and only what outlasted it counts as
     * writing. */
    double sink_ms = 0;
    for (int i = 0; i < tj.n_devices; i++)
        sink_ms = tj.stats[i].sink_ms > sink_ms ? tj.stats[i].sink_ms : sink_ms;
    jb->rep.kernel_ms = now_ms() - t - sink_ms;
    jb->rep.write_ms = sink_ms;
    jb->rep.repeat = 1;
    jb->rep.kernel = tj.kernels[0] ? strdup(tj.kernels) : "none";
    jb->rep.kernel_auto = strcmp(o->kernel, "auto") == 0;
    jb->rep.compute = compute_words(pl, sig);
    int len = snprintf(jb->rep.tiles, sizeof jb->rep.tiles,
                       "%lld of %lldx%lld, K in steps of %lld, %.2f GiB a GPU, %.1f GB "
                       "copied:", (long long)(pl->batch * tj.tp.tiles_m * tj.tp.tiles_n),
                       (long long)tj.tp.tm, (long long)tj.tp.tn, (long long)tj.tp.tk,
                       tj.tp.bytes / 1073741824.0, tj.traffic / 1e9);
    for (int i = 0; i < tj.n_devices && len > 0 && (size_t)len < sizeof jb->rep.tiles; i++)
        len += snprintf(jb->rep.tiles + len, sizeof jb->rep.tiles - (size_t)len,
                        "%s GPU %d %lld in %.3f s", i ? "," : "", tj.stats[i].ordinal,
                        (long long)tj.stats[i].tiles, tj.stats[i].ms / 1000.0);
    if (rc)
        goto out;
    j->sig = sig;
    jb->streamed = begun;
    if (to_file || (rc = host_result(j, &c)))
        goto out;
    if (o->verify) {
        struct gc_verify_result *v = &jb->rep.verify;
        v->tol = o->tol >= 0 ? o->tol : default_tol(j);
        v->timed_rel_fro = -1;
        if (pl->exact) {
            void *exact = malloc((nc ? nc : 1) * gc_dtypes[pl->result].size);
            if (!exact) {
                rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
                goto out;
            }
            if (host_check) {
                v->reference = "exact (cpu, modulo 2^64)";
                rc = verify_host_reference(pl, &j->a, &j->b, j->c0.data ? &j->c0 : NULL,
                                           o->alpha, o->beta, o->threads, exact);
            } else {
                v->reference = "exact (cuBLAS DGEMM below 2^53, tile by tile)";
                matmul_integer_result(ref.data, GC_F64, pl->alpha_i, pl->beta_i,
                                      j->c0.data ? &j->c0 : NULL, nc, exact, pl->result);
            }
            if (!rc)
                verify_compare_exact(&j->result, exact, v);
            free(exact);
        } else {
            v->reference = "cublas FP64, tile by tile";
            verify_compare_float(&j->result, ref.data, v);
        }
    }
    /* An output begun for tiles that could not take them: the result whole. */
    if (begun && (rc = io_write_tensor(&jb->out, o, jb->fmt, &j->result)))
        goto out;
out:
    if (pinned[0])
        cudaHostUnregister(ha->data);
    if (pinned[1])
        cudaHostUnregister(hb->data);
    if (pinned[2])
        cudaHostUnregister(c.data);
    gc_tensor_free(&a);
    gc_tensor_free(&b);
    gc_tensor_free(&c);
    gc_tensor_free(&ref);
    return rc;
}

static int mul_device(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    struct job *jb = &j->job;
    const struct matmul_plan *pl = &j->plan;
    struct dev_bufs d = { 0 };
    int rc;
    if ((rc = job_open_device(jb, 0)))
        return rc;
    int cc = jb->dev.cc_major * 10 + jb->dev.cc_minor;
    int tiled;
    if ((rc = mul_tiled(j, &tiled)) || tiled)
        return rc;

    progress_phase(&jb->progress, "copying the operands to the GPU");
    d.raw_a = upload_take(&j->up[0]);
    d.raw_b = upload_take(&j->up[1]);
    if ((!d.raw_a && (rc = job_upload(jb, j->a.data, gc_tensor_count(&j->a) *
                                      gc_dtypes[j->a.dtype].size, &d.raw_a))) ||
        (!d.raw_b && (rc = job_upload(jb, j->b.data, gc_tensor_count(&j->b) *
                                      gc_dtypes[j->b.dtype].size, &d.raw_b))))
        goto out;
    /* The host copies are not needed again unless the host checks the
     * result; freeing them keeps the peak at inputs or output, not both. */
    int host_check = o->verify && pl->exact;
    int f64_exact = 1;
    if (pl->needs_bound) {
        uint64_t ma, mb;
        if ((rc = CUDA_CALL(cudaMalloc((void **)&d.max, sizeof *d.max))) ||
            (rc = device_max_abs(jb, &j->a, d.raw_a, d.max, &ma)) ||
            (rc = device_max_abs(jb, &j->b, d.raw_b, d.max, &mb)))
            goto out;
        f64_exact = f64_exact_for(pl, ma, mb);
    }
    int is_auto;
    if (!(j->kern = select_gemm(o->kernel, pl, cc, jb->dev.sm_count, f64_exact, &j->sig,
                                &is_auto, &rc)))
        goto out;
    if (is_auto && (rc = auto_tuned(j, &d, f64_exact)))
        goto out;
    jb->rep.kernel_auto = is_auto;
    jb->rep.kernel = j->kern->name;
    jb->rep.compute = compute_words(pl, j->sig);
    jb->rep.verify.tol = o->tol >= 0 ? o->tol : default_tol(j);
    if ((rc = matmul_check_scalars(pl, j->sig, o->alpha, o->beta)))
        goto out;
    if ((rc = device_check_memory(&jb->dev, device_need(j), "this product")))
        goto out;
    int need_cublas = (j->kern->flags & KERNEL_REFERENCE) || o->verify;
    if (need_cublas && (rc = device_cublas(&jb->dev)))
        goto out;

    const struct gemm_sig_info *si = &gemm_sigs[j->sig];
    size_t nc = result_count(pl), out_es = gc_dtypes[si->out].size;
    if ((rc = device_operand(jb, &j->a, d.raw_a, si->in, &d.a)) ||
        (rc = device_operand(jb, &j->b, d.raw_b, si->in, &d.b)) ||
        (rc = CUDA_CALL(cudaMalloc(&d.c, (nc ? nc : 1) * out_es))))
        goto out;
    /* C0: as C's type for the kernel (floats), as int64 for the integer
     * epilogue, and as double for the reference. */
    int with_c0 = o->beta != 0 && j->c0.data;
    if (with_c0) {
        void *raw_c0;
        enum gc_dtype c0_to = pl->exact ? GC_I64 : si->out;
        if ((rc = job_upload(jb, j->c0.data, nc * gc_dtypes[j->c0.dtype].size, &raw_c0)))
            goto out;
        rc = device_operand(jb, &j->c0, raw_c0, c0_to, &d.c0);
        if (!rc && o->verify && !pl->exact)
            rc = device_operand(jb, &j->c0, raw_c0, GC_F64, &d.c0_ref);
        if (raw_c0 != d.c0 && raw_c0 != d.c0_ref) {
            /* The conversions read it on the stream: wait for them. */
            if (!rc)
                rc = CUDA_CALL(cudaStreamSynchronize(jb->dev.stream));
            cudaFree(raw_c0);
        }
        if (rc)
            goto out;
    }
    if (o->verify && (!pl->exact || f64_exact) &&
        ((rc = device_operand(jb, &j->a, d.raw_a, GC_F64, &d.ref_a)) ||
         (rc = device_operand(jb, &j->b, d.raw_b, GC_F64, &d.ref_b))))
        goto out;
    if (!host_check) {
        gc_tensor_free(&j->a);
        gc_tensor_free(&j->b);
    }

    struct run_arg r = { j, j->kern, { 0 }, gc_dtypes[si->in].size, out_es, d.c0,
                         nc * out_es, 0, device_launch_env(&jb->dev) };
    int float_beta = with_c0 && !pl->exact;
    matmul_problem(pl, j->sig, pl->exact ? 1 : o->alpha, float_beta ? o->beta : 0, &r.p);
    r.p.a = d.a;
    r.p.b = d.b;
    r.p.c = d.c;
    r.p.cc = cc;
    progress_phase(&jb->progress, "running %s", j->kern->name);
    if ((rc = job_time(jb, run_product, float_beta ? restore_c : NULL, &r, o->repeat,
                       &jb->rep.kernel_ms)))
        goto out;

    /* The result's dtype, on the device. */
    void *res = d.c;
    if (pl->exact) {
        if ((rc = CUDA_CALL(cudaMalloc(&d.res, (nc ? nc : 1) * gc_dtypes[pl->result].size))) ||
            (rc = CUDA_CALL(convert_integer_result_launch(d.c, si->out, pl->alpha_i, pl->beta_i,
                                                          with_c0 ? d.c0 : NULL, nc, d.res,
                                                          pl->result, jb->dev.stream))))
            goto out;
        res = d.res;
    } else if (si->out != pl->result) {
        if ((rc = CUDA_CALL(cudaMalloc(&d.res, (nc ? nc : 1) * gc_dtypes[pl->result].size))) ||
            (rc = CUDA_CALL(convert_result_launch(d.c, si->out, nc, d.res, pl->result,
                                                  jb->dev.stream))))
            goto out;
        res = d.res;
    }
    struct gc_tensor shape = result_shape(pl, pl->result);
    int out_dtype = o->out_dtype >= 0 ? o->out_dtype : (int)pl->result;
    if ((rc = job_take_result(jb, res, &shape, !o->verify && out_dtype == (int)pl->result,
                              &j->result)))
        goto out;

    if (o->verify) {
        struct gc_verify_result *v = &jb->rep.verify;
        const struct gemm_kernel *cublas = gemm_kernel_find("cublas");
        double *ref = malloc((nc ? nc : 1) * sizeof *ref);
        void *tc_host = NULL;
        if (!ref) {
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference product");
            goto out;
        }
        progress_phase(&jb->progress, "checking against an FP64 product");
        /* cuBLAS in this product's signature, timed on the same operands;
         * for tf32x3, which cuBLAS lacks, SGEMM: the accuracy it aims at. */
        struct gemm_problem tp = r.p;
        if (tp.sig == GEMM_TF32X3)
            tp.sig = GEMM_F32;
        if (cublas && gemm_can_implement(cublas, &tp, (char[8]){ 0 }, 8) &&
            !(rc = CUDA_CALL(cudaMalloc(&d.tc, (nc ? nc : 1) * out_es)))) {
            struct run_arg t = r;
            t.kern = cublas;
            t.p.sig = tp.sig;
            t.p.c = d.tc;
            v->timed = "cublas";
            if (!(rc = job_time(jb, run_product, float_beta ? restore_c : NULL, &t, o->repeat,
                                &v->ref_ms)) &&
                !(tc_host = malloc((nc ? nc : 1) * out_es)))
                rc = gc_fail(GC_EXIT_INPUT, "out of host memory");
            if (!rc)
                rc = device_download(&jb->dev, tc_host, d.tc, nc * out_es);
        }
        if (rc) {
            free(ref);
            free(tc_host);
            goto out;
        }
        v->timed_rel_fro = -1;
        if (pl->exact && !f64_exact) {
            /* Beyond 2^53 only the host's int64 arithmetic is exact. */
            void *exact = malloc((nc ? nc : 1) * gc_dtypes[pl->result].size);
            v->reference = "exact (cpu, modulo 2^64)";
            rc = exact ? verify_host_reference(pl, &j->a, &j->b, with_c0 ? &j->c0 : NULL,
                                               o->alpha, o->beta, o->threads, exact)
                       : gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
            if (!rc)
                verify_compare_exact(&j->result, exact, v);
            free(exact);
        } else {
            /* DGEMM of the operands as read (exact for integers below 2^53). */
            struct run_arg f = r;
            f.kern = cublas;
            f.in_es = f.out_es = sizeof(double);
            matmul_problem(pl, GEMM_F64, pl->exact ? 1 : o->alpha, float_beta ? o->beta : 0,
                           &f.p);
            f.p.a = d.ref_a;
            f.p.b = d.ref_b;
            f.p.cc = cc;
            if ((rc = CUDA_CALL(cudaMalloc(&d.ref, (nc ? nc : 1) * sizeof(double)))))
                goto verify_out;
            f.p.c = d.ref;
            /* FP64 arithmetic is judged against a double-double product, so
             * that DGEMM's error beside it means something. */
            int dd = j->sig == GEMM_F64 && !pl->exact;
            if (dd)
                rc = run_ddref(&f, d.ref_a, d.ref_b, float_beta ? d.c0_ref : NULL, o->alpha,
                               float_beta ? o->beta : 0, d.ref);
            else if (!(float_beta && (rc = CUDA_CALL(cudaMemcpyAsync(d.ref, d.c0_ref,
                                                                     nc * sizeof(double),
                                                                     cudaMemcpyDeviceToDevice,
                                                                     jb->dev.stream)))))
                rc = run_product(&f, 0);
            if (rc || (rc = device_download(&jb->dev, ref, d.ref, nc * sizeof(double))))
                goto verify_out;
            if (pl->exact) {
                void *exact = malloc((nc ? nc : 1) * gc_dtypes[pl->result].size);
                if (!exact) {
                    rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
                    goto verify_out;
                }
                matmul_integer_result(ref, GC_F64, pl->alpha_i, pl->beta_i,
                                      with_c0 ? &j->c0 : NULL, nc, exact, pl->result);
                v->reference = "exact (cuBLAS DGEMM below 2^53)";
                verify_compare_exact(&j->result, exact, v);
                free(exact);
            } else {
                v->reference = dd ? "double-double (ref_ddgemm, the operands as read)"
                                  : "fp64 (cuBLAS DGEMM of the operands as read)";
                verify_compare_float(&j->result, ref, v);
                if (tc_host && !pl->exact)
                    verify_errors(tc_host, si->out, ref, nc, &v->timed_rel_fro,
                                  &v->timed_max_rel);
            }
        }
verify_out:
        free(ref);
        free(tc_host);
    }
out:
    free_bufs(&d);
    return rc;
}

/* An empty product: nothing to run; NumPy's (m,0) @ (0,n) is zeros. */
static int mul_empty(struct mul_job *j)
{
    const struct matmul_plan *pl = &j->plan;
    const struct gc_opts *o = j->o;
    j->job.rep.kernel = "none (empty product)";
    size_t n = result_count(pl);
    double *zero = calloc(n ? n : 1, sizeof *zero);
    if (!zero)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    j->result = result_shape(pl, pl->result);
    int rc = 0;
    if (gc_tensor_alloc(&j->result, NULL)) {
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    } else if (pl->exact) {
        matmul_integer_result(zero, GC_F64, pl->alpha_i, pl->beta_i, j->c0.data ? &j->c0 : NULL,
                              n, j->result.data, pl->result);
    } else {
        struct gc_tensor d = result_shape(pl, GC_F64);
        d.data = zero;
        if (o->beta != 0 && j->c0.data)
            for (size_t i = 0; i < n; i++)
                zero[i] = o->beta * (double)gc_tensor_get(&j->c0, i);
        gc_tensor_free(&j->result);
        if (gc_tensor_convert(&d, pl->result, NULL, &j->result))
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    }
    free(zero);
    return rc;
}

int mul_check_usage(const struct gc_opts *o)
{
    if (o->n_operands != 2)
        return gc_fail(GC_EXIT_USAGE, "mul takes two operands, A and B (see 'gemmcli mul --help')");
    if (!o->output)
        return gc_fail(GC_EXIT_USAGE, "mul needs an output: -o FILE ('-' for stdout)");
    if (o->beta != 0 && !o->c0_path)
        return gc_fail(GC_EXIT_USAGE, "--beta needs C0: -c FILE");
    int nstdin = (strcmp(o->operands[0], "-") == 0) + (strcmp(o->operands[1], "-") == 0) +
                 (o->c0_path && strcmp(o->c0_path, "-") == 0);
    if (nstdin > 1)
        return gc_fail(GC_EXIT_USAGE, "only one operand can be read from stdin");
    if (o->tune && strcmp(o->kernel, "auto") != 0)
        return gc_fail(GC_EXIT_USAGE, "--tune tunes auto's choice: it does not go with "
                       "--kernel %s", o->kernel);
    if (o->host_memory && !dist_wanted())
        return gc_fail(GC_EXIT_USAGE, "--host-memory applies to mul under an MPI launcher of "
                       "several processes: it bounds what each rank holds");
    if (!gemm_kernel_find(o->kernel) && strcmp(o->kernel, "auto") != 0)
        return gc_fail(GC_EXIT_USAGE, "unknown mul kernel '%s' (see 'gemmcli kernels')",
                       o->kernel);
    return 0;
}

int cmd_mul(const struct gc_opts *o)
{
    struct mul_job j;
    struct gc_tensor in[3];
    memset(&j, 0, sizeof j);
    memset(in, 0, sizeof in);
    const struct gemm_kernel *named = gemm_kernel_find(o->kernel);
    int on_host = named && (named->flags & KERNEL_HOST);
    /* One of several processes an MPI launcher started: this one computes
     * its block of C (src/scale/dist.h), with the options it gives. */
    struct dist dist;
    struct gc_opts local;
    int distributed = dist_wanted();
    if (distributed) {
        int rc = dist_begin(&dist, o, on_host, &local);
        if (rc)
            return dist_end(&dist, rc);
        o = &local;
    }
    j.o = o;
    int fb = format_by_extension(o->operands[0]);
    /* A and B go straight to the device as they are read, when they are
     * large float operands and nothing on the host reads them again: not
     * for a product that is to run in tiles from host memory (a budget,
     * several GPUs), nor for a rank's part of one. */
    const struct gc_sink *sinks[3] = { NULL, NULL, NULL };
    int read_to_host = o->device_memory || o->n_devices || distributed;
    for (int i = 0; i < 2; i++) {
        upload_init(&j.up[i], &j.job, UPLOAD_FLOATS | UPLOAD_FORTRAN_2D);
        if (!on_host && !read_to_host)
            sinks[i] = &j.up[i].sink;
    }
    int rc = job_begin(&j.job, o, "mul", on_host, fb >= 0 ? fb : GC_FMT_CSV);
    if (rc)
        goto out;
    j.job.no_stream = distributed;
    if (o->n_devices && !on_host)
        warm_tile_devices(&j);
    progress_phase(&j.job.progress, "reading the operands");
    const char *paths[3] = { o->operands[0], o->operands[1], o->c0_path };
    /* A C0 that is named is read, and must fit, even when beta is 0. */
    int read_as = -1;
    rc = distributed ? dist_read(&dist, o, paths, in, &read_as)
                     : io_read_operands(o, o->c0_path ? 3 : 2, paths, sinks, in, &read_as);
    j.a = in[0];
    j.b = in[1];
    in[0].data = in[1].data = NULL;
    if (rc)
        goto out;
    j.job.fmt = io_stdout_format(o, read_as, j.job.fmt);
    /* Only 2-D Fortran order converts on the device; more axes here. */
    if ((j.a.ndim > 2 && (rc = io_to_c_order(&j.a, -1))) ||
        (j.b.ndim > 2 && (rc = io_to_c_order(&j.b, -1))))
        goto out;
    if ((rc = matmul_plan(&j.a, &j.b, o->compute, gc_display_name(o->operands[0], 0),
                          gc_display_name(o->operands[1], 0), &j.plan)) ||
        (rc = matmul_integer_scalars(&j.plan, o->alpha_text, o->beta_text)))
        goto out;
    const struct matmul_plan *pl = &j.plan;
    int out_dtype = o->out_dtype >= 0 ? o->out_dtype : (int)pl->result;
    if ((rc = io_check_ndim(o, j.job.fmt, pl->out_ndim, pl->out_shape, out_dtype)))
        goto out;
    /* A named kernel that cannot compute this product is told before any
     * device is opened (the device's own limits are checked there). */
    if (named && !on_host) {
        enum gemm_sig sig;
        int is_auto;
        if (!select_gemm(o->kernel, pl, GEMM_CC_ANY, 0, 1, &sig, &is_auto, &rc))
            goto out;
    }
    if (o->c0_path) {
        if (!matmul_c0_fits(pl, &in[2], gc_display_name(o->c0_path, 0))) {
            rc = GC_EXIT_INPUT;
            goto out;
        }
        if (o->beta != 0 && (rc = matmul_c0_expand(pl, &in[2], &j.c0)))
            goto out;
    }

    struct gc_report *rep = &j.job.rep;
    rep->read_ms = now_ms() - j.job.t0;
    rep->dtype = gc_dtypes[out_dtype].name;
    report_shape(&rep->shape_a, j.a.ndim, j.a.shape);
    report_shape(&rep->shape_b, j.b.ndim, j.b.shape);
    report_shape(&rep->shape_out, pl->out_ndim, pl->out_shape);
    rep->m = (size_t)pl->m;
    rep->n = (size_t)pl->n;
    rep->k = (size_t)pl->k;
    rep->batch = (size_t)pl->batch;
    rep->work = 2.0 * (double)pl->batch * (double)pl->m * (double)pl->n * (double)pl->k;

    if (distributed && dist.panels) {
        /* Some rank cannot hold its parts whole: K in panels, on every
         * rank (src/scale/summa.h), an empty block's too. */
        if ((rc = summa_mul(&dist, &j.job, pl, &j.sig, &j.result)))
            goto out;
        rep->verify.tol = o->tol >= 0 ? o->tol : default_tol(&j);
    } else if (result_count(pl) == 0 || pl->k == 0) {
        rep->compute = "none";
        if ((rc = matmul_check_scalars(pl, GEMM_F64, o->alpha, o->beta)) || (rc = mul_empty(&j)))
            goto out;
    } else {
        rc = on_host ? mul_host(&j) : mul_device(&j);
        if (rc)
            goto out;
    }
    if (o->verify && !rep->verify.done) {
        rep->verify.reference = "none (empty product)";
        rep->verify.done = rep->verify.ok = 1;
    }
    rc = distributed ? dist_finish(&dist, &j.job, &j.result, (enum gc_dtype)out_dtype)
                     : job_finish(&j.job, &j.result, (enum gc_dtype)out_dtype);
out:
    warm_tile_devices_wait(&j);
    upload_release(&j.up[0]);
    upload_release(&j.up[1]);
    job_end(&j.job);
    gc_tensor_free(&j.a);
    gc_tensor_free(&j.b);
    gc_tensor_free(&in[2]);
    gc_tensor_free(&j.c0);
    gc_tensor_free(&j.result);
    return distributed ? dist_end(&dist, rc) : rc;
}
