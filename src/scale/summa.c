#include "src/scale/summa.h"

#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/convert.h"
#include "src/job/device.h"
#include "src/scale/tiled_run.h"
#include "src/job/verify.h"

/* One panel's buffers: A's and B's parts as they came, and as the kernel
 * takes them. */
struct panel {
    void *raw[2], *conv[2];
    size_t conv_bytes[2];
    struct gc_tensor part[2];      /* in raw: the dtype and order as read */
    struct gc_tensor op[2];        /* in conv: the kernel's operand type, C order */
    int64_t kn;                    /* its width */
};

struct summa {
    struct dist *d;
    struct job *j;
    const struct gc_opts *o;
    const struct matmul_plan *pl;  /* the block's product */
    const struct product_route *route;   /* its plan's kernels and tiles */
    enum gemm_sig sig;
    const struct gemm_kernel *host;   /* --kernel cpu; NULL: the GPU */
    struct panel panel[2];
    size_t count;                  /* the block's elements */
    void *c;                       /* the block's sum, the signature's C type */
    void *ref;                     /* --verify: the reference so far (doubles, or int64) */
    void *ref_panel;               /* on the host: a panel's reference, added into ref */
    void *locked[8];               /* page-locked for the GPU's copies */
    int n_locked;
    unsigned pinned[2];            /* each panel's TILED_PINNED_*: what tiled_run copies
                                      straight from */
    struct tiled_job tj;           /* the last panel's tiles, for the summary */
    /* The block kept on the GPU across panels (see resident_begin): */
    int resident;
    void *d_c, *d_a, *d_b;         /* the sum, a panel's operands */
    double *d_ref, *d_a64, *d_b64; /* --verify: the FP64 sum, the panel in doubles */
    const struct gemm_kernel *kern[2];   /* the kernels the panels ran, for the summary */
    /* The product of panel q, on its own thread: */
    int64_t q;
    int status;
    double product_ms;
};

/* One panel's product: the block's, K the panel's width. */
static struct matmul_plan panel_plan(const struct summa *s, int64_t kn)
{
    struct matmul_plan pp = *s->pl;
    pp.k = kn;
    return pp;
}

/* x += y, n elements: int64 modulo 2^64, or doubles. */
static void add_into(void *x, const void *y, size_t n, int exact)
{
    if (exact)
        for (size_t i = 0; i < n; i++)
            ((uint64_t *)x)[i] += ((const uint64_t *)y)[i];
    else
        for (size_t i = 0; i < n; i++)
            ((double *)x)[i] += ((const double *)y)[i];
}

static int on_host_panel(struct summa *s, const struct panel *p, void *c)
{
    struct matmul_plan pp = panel_plan(s, p->kn);
    struct gemm_problem gp;
    /* Floats sum in C itself; integers each panel apart. */
    /* Each panel after the first sums into C (integers too: int64 kernels
     * take a nonzero beta as "add"). */
    matmul_problem(&pp, s->sig, pp.exact ? 1 : s->o->alpha, s->q ? 1 : 0, &gp);
    gp.a = p->op[0].data;
    gp.b = p->op[1].data;
    gp.c = c;
    struct launch_env env = { 0 };
    cudaError_t err = gemm_run(s->host, &gp, &env, s->o->threads);
    return err == cudaSuccess ? 0 : device_cuda_fail(err, s->host->name, __FILE__, __LINE__);
}

static int on_gpu_panel(struct summa *s, const struct panel *p, void *c)
{
    struct matmul_plan pp = panel_plan(s, p->kn);
    struct tiled_job *tj = &s->tj;
    memset(tj, 0, sizeof *tj);
    tj->plan = &pp;
    /* The plan's tiles of the first panel, of one between, of the last. */
    tj->tiles = &s->route->panel_tiles[s->q == 0 ? 0 : s->q + 1 == s->d->n_panels ? 2 : 1];
    tj->sig = s->sig;
    tj->alpha = pp.exact ? 1 : s->o->alpha;
    tj->beta = 1;
    tj->c_in = s->q > 0;
    tj->pinned = s->pinned[s->q % 2];
    tj->a = p->op[0].data;
    tj->b = p->op[1].data;
    tj->c = c;
    tj->ref = pp.exact ? NULL : s->ref;
    tj->n_devices = 1;
    tj->devices[0] = s->j->dev.ordinal;
    tj->host_threads = s->o->threads;
    int rc = tiled_run(tj);
    tj->plan = NULL;
    return rc;
}

/* ---- the block kept on the GPU ---- */

/* Device memory for the block's sum and one panel (and their FP64 twins
 * with --verify), where the plan keeps the block on the GPU. */
static int resident_begin(struct summa *s)
{
    const struct gemm_sig_info *si = &gemm_sigs[s->sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    size_t rows = (size_t)(s->pl->batch * s->pl->m), kb = (size_t)s->d->kb;
    size_t na = rows * kb, nb = kb * (size_t)s->pl->n;
    int ref = s->o->verify && !s->pl->exact, rc;
    if ((ref && (rc = device_cublas(&s->j->dev))) ||
        (rc = CUDA_CALL(cudaMalloc(&s->d_c, s->count * out_es))) ||
        (rc = CUDA_CALL(cudaMalloc(&s->d_a, na * in_es))) ||
        (rc = CUDA_CALL(cudaMalloc(&s->d_b, nb * in_es))))
        return rc;
    if (ref && ((rc = CUDA_CALL(cudaMalloc((void **)&s->d_ref, s->count * sizeof(double)))) ||
                (rc = CUDA_CALL(cudaMalloc((void **)&s->d_a64, na * sizeof(double)))) ||
                (rc = CUDA_CALL(cudaMalloc((void **)&s->d_b64, nb * sizeof(double))))))
        return rc;
    return 0;
}

static void resident_end(struct summa *s)
{
    void *ps[] = { s->d_c, s->d_a, s->d_b, s->d_ref, s->d_a64, s->d_b64 };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        if (ps[i])
            cudaFree(ps[i]);
}

/* The plan's kernel for a panel of width kn: the full width's, or the
 * last's; kept for the summary. */
static const struct gemm_kernel *resident_kernel(struct summa *s, int64_t kn)
{
    int last = kn != s->d->kb;
    const struct gemm_kernel *k = s->route->panel_pick[last].kern;
    s->kern[last] = k;
    return k;
}

/* Panel q into the block on the GPU: its operands copied in (from
 * page-locked buffers where they could be locked), the product summed
 * into the block, and with --verify the same in FP64 beside it. */
static int resident_panel(struct summa *s, const struct panel *p)
{
    struct gc_device *dev = &s->j->dev;
    const struct gemm_sig_info *si = &gemm_sigs[s->sig];
    size_t in_es = gc_dtypes[si->in].size;
    size_t na = gc_tensor_count(&p->op[0]), nb = gc_tensor_count(&p->op[1]);
    const struct gemm_kernel *kern = resident_kernel(s, p->kn);
    if (!kern)
        return GC_EXIT_GPU;
    int rc;
    if ((rc = CUDA_CALL(cudaMemcpyAsync(s->d_a, p->op[0].data, na * in_es,
                                        cudaMemcpyHostToDevice, dev->stream))) ||
        (rc = CUDA_CALL(cudaMemcpyAsync(s->d_b, p->op[1].data, nb * in_es,
                                        cudaMemcpyHostToDevice, dev->stream))))
        return rc;
    struct matmul_plan pp = panel_plan(s, p->kn);
    struct gemm_problem gp;
    matmul_problem(&pp, s->sig, pp.exact ? 1 : s->o->alpha, s->q ? 1 : 0, &gp);
    gp.a = s->d_a;
    gp.b = s->d_b;
    gp.c = s->d_c;
    struct launch_env env = device_launch_env(dev);
    gp.cc = env.cc;
    cudaError_t err = gemm_run(kern, &gp, &env, s->o->threads);
    if (err != cudaSuccess)
        return device_cuda_fail(err, kern->name, __FILE__, __LINE__);
    if (s->d_ref) {
        if ((rc = CUDA_CALL(convert_operand_launch(s->d_a, si->in, 0, 0, 0, na, s->d_a64, GC_F64,
                                                   dev->stream))) ||
            (rc = CUDA_CALL(convert_operand_launch(s->d_b, si->in, 0, 0, 0, nb, s->d_b64, GC_F64,
                                                   dev->stream))))
            return rc;
        struct gemm_problem f = gp;
        f.sig = GEMM_F64;
        f.a = s->d_a64;
        f.b = s->d_b64;
        f.c = s->d_ref;
        if ((err = gemm_run(gemm_kernel_find("cublas"), &f, &env, s->o->threads)) != cudaSuccess)
            return device_cuda_fail(err, "the FP64 reference", __FILE__, __LINE__);
    }
    /* The panel's host buffers are refilled once this returns. */
    return CUDA_CALL(cudaStreamSynchronize(dev->stream));
}

/* The block (and its reference) back to host memory, once. */
static int resident_fetch(struct summa *s)
{
    size_t out_es = gc_dtypes[gemm_sigs[s->sig].out].size;
    int rc = device_download(&s->j->dev, s->c, s->d_c, s->count * out_es);
    if (!rc && s->d_ref)
        rc = device_download(&s->j->dev, s->ref, s->d_ref, s->count * sizeof(double));
    return rc;
}

/* --verify on the host: the panel's reference from its parts as read,
 * summed into the reference so far. */
static int host_reference(struct summa *s, const struct panel *p)
{
    struct matmul_plan pp = panel_plan(s, p->kn);
    /* Integers: the exact int64 sum, alpha and the dtype after. */
    if (pp.exact)
        pp.result = GC_I64;
    void *out = s->q ? s->ref_panel : s->ref;
    int rc = verify_host_reference(&pp, &p->part[0], &p->part[1], NULL,
                                   pp.exact ? 1 : s->o->alpha, 0, s->o->threads, out);
    if (!rc && s->q)
        add_into(s->ref, s->ref_panel, s->count, pp.exact);
    return rc;
}

/* The thread of panel q's product (and its reference). */
static void *multiply(void *arg)
{
    struct summa *s = arg;
    const struct panel *p = &s->panel[s->q % 2];
    int exact = s->pl->exact;
    void *c = s->c;
    if (!s->count) {
        s->status = 0;
        return NULL;
    }
    double t = now_ms();
    /* A new thread starts on device 0: this rank's GPU first. */
    if (!s->host && (s->status = CUDA_CALL(cudaSetDevice(s->j->dev.ordinal))))
        return NULL;
    s->status = s->host ? on_host_panel(s, p, c) : s->resident ? resident_panel(s, p)
                                                               : on_gpu_panel(s, p, c);
    if (!s->status && s->resident && s->q + 1 == s->d->n_panels)
        s->status = resident_fetch(s);
    s->product_ms += now_ms() - t;
    if (!s->status && s->ref && (s->host || exact))
        s->status = host_reference(s, p);
    return NULL;
}

/* An allocator that hands out the room given, so that a conversion
 * writes into a panel's buffer instead of new memory. */
struct room {
    void *p;
    size_t bytes;
};

static void *room_take(void *ctx, size_t bytes)
{
    struct room *r = ctx;
    return bytes <= r->bytes ? r->p : NULL;
}

static void room_keep(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

/* The panel's parts in the kernel's operand type, C order. */
static int convert_panel(struct summa *s, struct panel *p)
{
    enum gc_dtype to = gemm_sigs[s->sig].in;
    for (int i = 0; i < 2; i++) {
        struct gc_tensor *t = &p->op[i];
        if (to == GC_I64) {
            *t = p->part[i];
            t->dtype = GC_I64;
            t->fortran_order = 0;
            t->data = p->conv[i];
            t->alloc = NULL;
            matmul_to_i64(&p->part[i], t->data);
            continue;
        }
        struct room r = { p->conv[i], p->conv_bytes[i] };
        struct gc_alloc in_room = { room_take, room_keep, &r };
        if (gc_tensor_convert(&p->part[i], to, &in_room, t))
            return gc_fail(GC_EXIT_INPUT, "a panel does not fit its buffer");
        t->alloc = NULL;
    }
    return 0;
}

/* Panel q into its buffers: moved (collective), then converted. */
static int fetch(struct summa *s, int64_t q)
{
    struct panel *p = &s->panel[q % 2];
    struct dist *d = s->d;
    int64_t k0;
    double t = now_ms();
    dist_panel_range(d->plan.k, d->kb, q, &k0, &p->kn);
    int rc = dist_panel(d, s->o, q, p->raw[0], p->raw[1], &p->part[0], &p->part[1]);
    if (!rc && s->count)
        rc = convert_panel(s, p);
    s->j->rep.read_ms += now_ms() - t;
    return rc;
}

/* The panels in turn: panel q + 1 moved while q is multiplied, an
 * agreement after each. */
static int run_panels(struct summa *s)
{
    struct dist *d = s->d;
    int rc = fetch(s, 0);
    for (int64_t q = 0;; q++) {
        if ((rc = dist_agree(d, rc)) || q == d->n_panels)
            return rc;
        progress_phase(&s->j->progress, "panel %lld of %lld", (long long)q + 1,
                       (long long)d->n_panels);
        s->q = q;
        pthread_t thread;
        int apart = pthread_create(&thread, NULL, multiply, s) == 0;
        /* Without a thread the product comes first, then the next panel. */
        if (!apart)
            multiply(s);
        if (q + 1 < d->n_panels)
            rc = fetch(s, q + 1);
        if (apart)
            pthread_join(thread, NULL);
        rc = rc ? rc : s->status;
    }
}

/* A buffer of `bytes`, unless an earlier one failed (*rc said why); a
 * large one on huge pages, as tensors are (locked the faster). */
static void *take(size_t bytes, int *rc)
{
    void *p = *rc ? NULL : gc_alloc_malloc.alloc(gc_alloc_malloc.ctx, bytes);
    if (!p && !*rc)
        *rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the panels (%zu bytes)", bytes);
    return p;
}

/* Page-locks a buffer the GPU copies from or to: 1 when it did; one it
 * cannot lock goes through tiled_run's slots. */
static int lock_for_gpu(struct summa *s, void *p, size_t bytes)
{
    if (!p || !bytes || s->n_locked == (int)(sizeof s->locked / sizeof s->locked[0]) ||
        !device_pin(p, bytes))
        return 0;
    s->locked[s->n_locked++] = p;
    return 1;
}

/* The buffers: two panels as they come and converted, the block's sum
 * and what is summed into it. */
static int take_buffers(struct summa *s)
{
    const struct gemm_sig_info *si = &gemm_sigs[s->sig];
    size_t out_es = gc_dtypes[si->out].size, in_es = gc_dtypes[si->in].size;
    int exact = s->pl->exact, host_ref = s->o->verify && (s->host || exact), rc = 0;
    for (int x = 0; x < 2; x++)
        for (int i = 0; i < 2; i++) {
            struct panel *p = &s->panel[x];
            size_t raw = dist_panel_room(s->d, i);
            p->conv_bytes[i] = raw / gc_dtypes[s->d->whole[i].dtype].size * in_es;
            p->raw[i] = take(raw, &rc);
            p->conv[i] = take(p->conv_bytes[i], &rc);
        }
    s->c = take(s->count * out_es, &rc);
    if (s->o->verify)
        s->ref = take(s->count * sizeof(double), &rc);
    if (host_ref)
        s->ref_panel = take(s->count * sizeof(double), &rc);
    if (rc || s->host || !s->count)
        return rc;
    static const unsigned operand[2] = { TILED_PINNED_A, TILED_PINNED_B };
    int c_locked = lock_for_gpu(s, s->c, s->count * out_es);
    for (int x = 0; x < 2; x++) {
        for (int i = 0; i < 2; i++)
            if (lock_for_gpu(s, s->panel[x].conv[i], s->panel[x].conv_bytes[i]))
                s->pinned[x] |= operand[i];
        s->pinned[x] |= c_locked ? TILED_PINNED_C : 0;
    }
    return 0;
}

static void release(struct summa *s)
{
    for (int i = 0; i < s->n_locked; i++)
        cudaHostUnregister(s->locked[i]);
    for (int x = 0; x < 2; x++)
        for (int i = 0; i < 2; i++) {
            free(s->panel[x].raw[i]);
            free(s->panel[x].conv[i]);
        }
    free(s->c);
    free(s->ref);
    free(s->ref_panel);
}

/* The plan's kernel and signature for a full panel (integers in int64);
 * on the GPU the block's sum in device memory where the plan keeps it
 * there; then the buffers. */
static int begin(struct summa *s)
{
    struct gc_report *rep = &s->j->rep;
    rep->repeat = 1;
    if (!s->count) {
        rep->kernel = "none (empty block)";
        rep->compute = "none";
        return take_buffers(s);
    }
    s->sig = s->route->pick.sig;
    int rc;
    if (!s->host) {
        if ((rc = job_open_device(s->j, 0)))
            return rc;
        s->resident = s->route->resident;
        if (s->resident && (rc = resident_begin(s)))
            return rc;
    }
    return take_buffers(s);
}

/* How the panels moved, as the summary says it: [A by offset][B by offset]. */
static const char *const moved_words[2][2] = {
    { "each sent by rank 0", "A's sent by rank 0, B's read once and broadcast down grid columns" },
    { "A's read once and broadcast along grid rows, B's sent by rank 0",
      "each read once and broadcast along grid rows and columns" },
};

/* The block in the result's dtype, its verification, the summary. */
static int finish(struct summa *s, struct gc_tensor *result)
{
    const struct matmul_plan *pl = s->pl;
    struct gc_report *rep = &s->j->rep;
    struct dist *d = s->d;
    snprintf(rep->panels, sizeof rep->panels, "%lld of %lld along K, %s", (long long)d->n_panels,
             (long long)d->kb, moved_words[d->by_offset[0]][d->by_offset[1]]);
    if (s->resident)
        snprintf(rep->tiles, sizeof rep->tiles, "none: the block's sum stays on the GPU across "
                 "the panels, kernels %s%s%s", s->kern[0] ? s->kern[0]->name : "",
                 s->kern[1] && s->kern[1] != s->kern[0] ? ", " : "",
                 s->kern[1] && s->kern[1] != s->kern[0] ? s->kern[1]->name : "");
    else if (!s->host && s->count)
        snprintf(rep->tiles, sizeof rep->tiles, "the last panel's: %lld of %lldx%lld, K in steps "
                 "of %lld, %.2f GiB on the GPU, kernels %s",
                 (long long)(s->tj.tp.tiles_m * s->tj.tp.tiles_n), (long long)s->tj.tp.tm,
                 (long long)s->tj.tp.tn, (long long)s->tj.tp.tk, s->tj.tp.bytes / 1073741824.0,
                 s->tj.kernels);
    rep->kernel_ms = s->product_ms;
    memset(result, 0, sizeof *result);
    result->ndim = pl->out_ndim;
    memcpy(result->shape, pl->out_shape, sizeof pl->out_shape);
    result->dtype = pl->result;
    struct gc_tensor c = *result;
    c.dtype = gemm_sigs[s->sig].out;
    c.data = s->c;
    if (pl->exact ? gc_tensor_alloc(result, NULL) : gc_tensor_convert(&c, pl->result, NULL, result))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    /* An integer block summed in its kernel's type: int64, or integral
     * doubles under --compute fp64. */
    if (pl->exact)
        matmul_integer_result(s->c, c.dtype, pl->alpha_i, 0, NULL, s->count, result->data,
                              pl->result);
    if (!s->o->verify || !s->count)
        return 0;
    /* The reference summed beside the block: FP64, or an integer block's
     * exact int64 sums, whose alpha and dtype come after as the result's. */
    struct verify_product vp = { .plan = pl, .sig = s->sig, .result = result,
                                 .alpha = s->o->alpha, .threads = s->o->threads,
                                 .beside = s->ref, .beside_type = pl->exact ? GC_I64 : GC_F64 };
    vp.beside_words = pl->exact ? "exact (cpu, modulo 2^64), panel by panel"
                      : s->host ? "cpu (long double), panel by panel"
                                : "cublas FP64, tile by tile, panel by panel";
    return verify_product(&vp, &rep->verify);
}

int summa_mul(struct dist *d, struct job *j, const struct product_plan *pp,
              const struct product_route *route, struct gc_tensor *result)
{
    struct summa *s = calloc(1, sizeof *s);
    int rc = s ? 0 : gc_fail(GC_EXIT_INPUT, "out of host memory");
    if (s) {
        *s = (struct summa){ .d = d, .j = j, .o = j->o, .pl = &pp->mm, .route = route,
                             .host = pp->on_host ? route->pick.kern : NULL,
                             .sig = GEMM_F64, .count = (size_t)(pp->mm.batch * pp->mm.m *
                                                               pp->mm.n) };
        rc = begin(s);
    }
    /* Every rank ready (a device, a kernel, the buffers) before any panel. */
    if (!(rc = dist_agree(d, rc)) && !(rc = run_panels(s)))
        rc = finish(s, result);
    if (s) {
        resident_end(s);
        release(s);
        free(s);
    }
    return rc;
}
