/* The tiles executor: a product larger than the device memory it may use
 * (--device-memory, else what is free), or shared among GPUs (--devices),
 * in the plan's tiles (src/scale/tiled_run.h).  The operands go to the
 * host in the kernel's type, C order; C0 (floats) is C's first value, and
 * an integer result's alpha, beta and C0 are applied on the host after,
 * as on one GPU.  A regular .npy or raw output takes each tile's rows at
 * their offsets while the next tiles run: C is the file's payload mapped
 * (core/pwrite.h), where its file system allows, so that a tile lands in
 * the file's pages as it comes off its GPU; else each tile is written
 * once it lands in host memory. */
#include <string.h>

#include "core/error.h"
#include "core/pwrite.h"
#include "src/exec/steps.h"
#include "src/job/result.h"
#include "src/scale/tiled_run.h"

/* Host operands of tiles this large are page-locked in place. */
#define PIN_FROM ((size_t)64 << 20)

struct tiles {
    struct mul_run *r;
    struct job *jb;
    const struct gc_opts *o;
    const struct matmul_plan *mm;
    const struct product_route *route;
    int f64_exact, host_check, float_beta, to_file;
    struct file_map c_map;             /* C is the output file's payload, mapped */
    struct gc_tensor a, b, c, ref;     /* the kernel's operands when converted, C, the reference */
    const struct gc_tensor *ha, *hb;   /* the operands the tiles read */
    int pinned[3];
    struct tiled_job tj;
};

/* Operand i went to the device as it was read: back to the host. */
static int sunk_to_host(struct mul_run *r, int i)
{
    struct gc_tensor *t = i ? r->b : r->a;
    void *d = upload_take(&r->up[i]);
    if (!d)
        return 0;
    t->data = NULL;
    t->alloc = NULL;
    size_t bytes = gc_tensor_count(t) * gc_dtypes[t->dtype].size;
    int rc = gc_tensor_alloc(t, NULL)
                 ? gc_fail(GC_EXIT_INPUT, "out of host memory for an operand")
                 : CUDA_CALL(cudaMemcpy(t->data, d, bytes, cudaMemcpyDeviceToHost));
    cudaFree(d);
    return rc;
}

/* The output for rows at their offsets: not with --verify (a failed check
 * writes nothing, so the check comes first), nor when C's type is not the
 * output's.  Any other output (begun here all the same) is written whole
 * at the end. */
static int tiles_output(struct tiles *t)
{
    const struct gc_opts *o = t->o;
    const struct matmul_plan *mm = t->mm;
    int out_dtype = o->out_dtype >= 0 ? o->out_dtype : (int)mm->result;
    if (o->verify || mm->exact || gemm_sigs[t->route->pick.sig].out != mm->result ||
        out_dtype != (int)mm->result || t->jb->no_stream ||
        (t->jb->fmt != GC_FMT_NPY && t->jb->fmt != GC_FMT_RAW))
        return 0;
    struct gc_tensor whole = exec_shape(mm, mm->result);
    return result_open_rows(t->jb, &whole, 0, &t->to_file);
}

/* The operands in the kernel's type, C order (an integer one's host copy
 * kept beside it when the host checks the result), C starting as C0 in
 * C's type, and the reference as C0 in doubles. */
static int tiles_operands(struct tiles *t)
{
    struct mul_run *r = t->r;
    const struct gemm_sig_info *si = &gemm_sigs[t->route->pick.sig];
    int rc;
    t->ha = r->a;
    t->hb = r->b;
    if (t->mm->exact) {
        if ((rc = exec_operand(r->a, si->in, &t->a)) || (rc = exec_operand(r->b, si->in, &t->b)))
            return rc;
        t->ha = &t->a;
        t->hb = &t->b;
        if (!t->host_check) {
            gc_tensor_free(r->a);
            gc_tensor_free(r->b);
        }
    } else if ((rc = io_to_c_order(r->a, si->in)) || (rc = io_to_c_order(r->b, si->in))) {
        return rc;
    }
    t->c = exec_shape(t->mm, si->out);
    t->ref = exec_shape(t->mm, GC_F64);
    /* A C that starts empty, bound for a file at offsets, is the file's
     * payload mapped where the file system allows: the tiles land in the
     * file's pages as they come off the GPUs, in one copy, where a C in
     * memory took them and a writer then copied them again, behind. */
    if (t->to_file && !t->float_beta &&
        (t->c.data = file_map_range(t->jb->at.fd, exec_count(t->mm) * gc_dtypes[si->out].size,
                                    t->jb->at.payload, &t->c_map))) {
        /* Its pages made from the start while the GPUs open and compute:
         * faulted by the threads that scatter the tiles, 2.4 GB took
         * 0.92-1.41 s on the two-H200 host (2026-11-28), twice the GPU's
         * 0.64 s; made ahead, the tiles ran in 0.64-0.67 s. */
        file_map_ahead(&t->c_map, FILE_AHEAD_THREADS);
        return 0;
    }
    if (t->float_beta ? gc_tensor_convert(r->c0, si->out, NULL, &t->c)
                      : gc_tensor_alloc(&t->c, NULL))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    if (t->o->verify && !t->host_check &&
        (t->float_beta ? gc_tensor_convert(r->c0, GC_F64, NULL, &t->ref)
                       : gc_tensor_alloc(&t->ref, NULL)))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
    return 0;
}

/* Large operands (and a C0 to start from) page-locked in place, where
 * the system allows: copied straight from, not through the slots.  Small
 * ones go through the slots, which costs less than locking them; so does a
 * C that starts empty, whose pages the threads that scatter tiles into it
 * fault in side by side, where locking would first fill all of them on
 * one thread.  (Locking beside the GPUs' start and allocation gains
 * nothing: the driver takes them one after the other.) */
static void tiles_pin(struct tiles *t)
{
    const struct gemm_sig_info *si = &gemm_sigs[t->route->pick.sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    size_t na = gc_tensor_count(t->ha), nb = gc_tensor_count(t->hb), nc = exec_count(t->mm);
    double start = now_ms();
    t->pinned[0] = na * in_es >= PIN_FROM && device_pin(t->ha->data, na * in_es);
    t->pinned[1] = nb * in_es >= PIN_FROM && device_pin(t->hb->data, nb * in_es);
    t->pinned[2] = t->float_beta && nc * out_es >= PIN_FROM && device_pin(t->c.data, nc * out_es);
    t->jb->rep.h2d_ms += now_ms() - start;
}

static void tiles_unpin(struct tiles *t)
{
    void *p[3] = { t->ha ? t->ha->data : NULL, t->hb ? t->hb->data : NULL, t->c.data };
    for (int i = 0; i < 3; i++)
        if (t->pinned[i])
            cudaHostUnregister(p[i]);
    memset(t->pinned, 0, sizeof t->pinned);
}

/* The summary's tiles line and times: the tiles' phase ends when the last
 * tile is in host memory; writing the file went on beside it, and only
 * what outlasted it counts as writing. */
static void tiles_report(struct tiles *t, double ms)
{
    struct gc_report *rep = &t->jb->rep;
    const struct tiled_job *tj = &t->tj;
    double sink_ms = 0;
    for (int i = 0; i < tj->n_devices; i++)
        sink_ms = tj->stats[i].sink_ms > sink_ms ? tj->stats[i].sink_ms : sink_ms;
    rep->kernel_ms = ms - sink_ms;
    rep->write_ms = sink_ms;
    rep->repeat = 1;
    rep->kernel = tj->kernels[0] ? strdup(tj->kernels) : "none";
    int len = snprintf(rep->tiles, sizeof rep->tiles,
                       "%lld of %lldx%lld, K in steps of %lld,%s %.2f GiB a GPU, %.1f GB "
                       "copied:", (long long)(t->mm->batch * tj->tp.tiles_m * tj->tp.tiles_n),
                       (long long)tj->tp.tm, (long long)tj->tp.tn, (long long)tj->tp.tk,
                       tj->tp.keep_b ? " B kept," : "", tj->tp.bytes / 1073741824.0,
                       tj->traffic / 1e9);
    for (int i = 0; i < tj->n_devices && len > 0 && (size_t)len < sizeof rep->tiles; i++)
        len += snprintf(rep->tiles + len, sizeof rep->tiles - (size_t)len,
                        "%s GPU %d %lld in %.3f s", i ? "," : "", tj->stats[i].ordinal,
                        (long long)tj->stats[i].tiles, tj->stats[i].ms / 1000.0);
    if (t->r->plan->shared && len > 0 && (size_t)len < sizeof rep->tiles)
        snprintf(rep->tiles + len, sizeof rep->tiles - (size_t)len,
                 " (the host's GPUs, auto's choice; --devices 0 keeps one)");
}

/* The tiles on the plan's GPUs. */
static int tiles_run(struct tiles *t)
{
    const struct gc_opts *o = t->o;
    struct tiled_job *tj = &t->tj;
    const struct device_facts *f = &t->r->plan->facts;
    tiles_pin(t);
    tj->plan = t->mm;
    tj->tiles = &t->route->tiles;
    tj->sig = t->route->pick.sig;
    tj->alpha = t->mm->exact ? 1 : o->alpha;
    tj->beta = t->float_beta ? o->beta : 0;
    tj->c_in = t->float_beta;
    tj->a = t->ha->data;
    tj->b = t->hb->data;
    tj->c = t->c.data;
    tj->pinned = (t->pinned[0] ? TILED_PINNED_A : 0) | (t->pinned[1] ? TILED_PINNED_B : 0) |
                 (t->pinned[2] ? TILED_PINNED_C : 0);
    struct tiled_sink sink = { result_put_rows, t->jb };
    tj->sink = t->to_file && !t->c_map.base ? &sink : NULL;
    tj->ref = t->ref.data;
    tj->host_threads = o->threads;
    tj->n_devices = f->n_devices;
    for (int i = 0; i < f->n_devices; i++)
        tj->devices[i] = f->devices[i].ordinal;
    progress_phase(&t->jb->progress, t->to_file ? "running in tiles, writing %s as they finish"
                                                : "running in tiles",
                   gc_display_name(o->output, 1));
    double start = now_ms();
    int rc = tiled_run(tj);
    /* Unlocked now: C may become the result, freed as any tensor. */
    tiles_unpin(t);
    tiles_report(t, now_ms() - start);
    if (t->c_map.base) {
        /* The file's pages hold C: what is left of writing is the unmapping. */
        double unmap = now_ms();
        file_unmap(&t->c_map);
        t->c.data = NULL;
        t->jb->rep.write_ms += now_ms() - unmap;
    }
    return rc;
}

/* --verify: against the FP64 reference the tiles computed beside the
 * product, or for integers beyond 2^53 the exact one on the host. */
static int tiles_check(struct tiles *t)
{
    struct verify_product vp;
    exec_verify_begin(t->r, t->route->pick.sig, t->f64_exact, &vp);
    if (t->ref.data) {
        vp.beside = t->ref.data;
        vp.beside_type = GC_F64;
        vp.beside_words = t->mm->exact ? "exact (cuBLAS DGEMM below 2^53, tile by tile)"
                                       : "cublas FP64, tile by tile";
    }
    return verify_product(&vp, &t->jb->rep.verify);
}

int exec_tiles(struct mul_run *r)
{
    struct tiles t = { .r = r, .jb = r->job, .o = r->o, .mm = &r->plan->mm };
    const struct gc_opts *o = r->o;
    progress_phase(&t.jb->progress, "preparing the operands for tiles");
    int rc = sunk_to_host(r, 0);
    if (rc || (rc = sunk_to_host(r, 1)))
        return rc;
    /* An integer product: FP64 below 2^53, else int64 (as on one GPU). */
    t.f64_exact = !t.mm->needs_bound || product_f64_exact(t.mm, exec_max_abs(r->a, o->threads),
                                                           exec_max_abs(r->b, o->threads));
    if ((rc = exec_settle(r, t.f64_exact, &t.route)))
        return rc;
    /* The exact host reference beyond 2^53 reads the operands as read, so
     * they stay beside their int64 copies. */
    t.host_check = o->verify && t.mm->exact && !t.f64_exact;
    t.float_beta = o->beta != 0 && r->c0->data && !t.mm->exact;
    if (!(rc = tiles_output(&t)) && !(rc = tiles_operands(&t)) && !(rc = tiles_run(&t))) {
        t.jb->written = t.to_file;
        if (!t.to_file && !(rc = exec_host_result(r, &t.c)) && o->verify)
            rc = tiles_check(&t);
    }
    tiles_unpin(&t);
    if (t.c_map.base) {
        file_unmap(&t.c_map);
        t.c.data = NULL;
    }
    gc_tensor_free(&t.a);
    gc_tensor_free(&t.b);
    gc_tensor_free(&t.c);
    gc_tensor_free(&t.ref);
    return rc;
}
