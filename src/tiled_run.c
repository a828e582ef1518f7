#include "tiled_run.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/convert.h"
#include "device.h"
#include "report.h"
#include "select.h"

/* The kernel for each distinct tile shape (at most two sizes a side and
 * two step lengths: full and the remainder). */
#define SHAPES 8

struct shape_kernel {
    int64_t m, n, k;
    const struct gemm_kernel *kern;
};

struct worker {
    struct tiled_job *tj;
    int index;                 /* into tj->devices and tj->stats */
    atomic_llong *next;        /* the next tile of the whole stack */
    int64_t items;             /* products times tiles */
    int status;
    struct gc_device dev;
    cudaStream_t copy_in, copy_out, copy_c;
    void *a[2], *b[2], *c[2];
    double *a64, *b64, *ref;
    cudaEvent_t loaded[2], used[2], done[2], c_free[2], c_loaded[2], ref_free;
    struct shape_kernel shapes[SHAPES];
    int n_shapes;
    pthread_mutex_t *names_lock;
};

/* The kernel for one tile shape, chosen once: the one named, or auto's
 * pick for that shape in the job's signature. */
static const struct gemm_kernel *kernel_for(struct worker *w, int64_t m, int64_t n, int64_t k)
{
    for (int i = 0; i < w->n_shapes; i++)
        if (w->shapes[i].m == m && w->shapes[i].n == n && w->shapes[i].k == k)
            return w->shapes[i].kern;
    struct matmul_plan sub = *w->tj->plan;
    sub.m = m;
    sub.n = n;
    sub.k = k;
    sub.nbatch = 0;
    sub.batch = sub.inner = sub.outer = 1;
    sub.inner_axes = 0;
    sub.sigs[0] = w->tj->sig;
    sub.n_sigs = 1;
    enum gemm_sig sig;
    int is_auto, status = 0;
    const struct gemm_kernel *kern =
        select_gemm(w->tj->kernel, &sub, w->dev.cc_major * 10 + w->dev.cc_minor,
                    w->dev.sm_count, 1, &sig, &is_auto, &status);
    if (!kern) {
        w->status = status ? status : GC_EXIT_GPU;
        return NULL;
    }
    if (w->n_shapes < SHAPES)
        w->shapes[w->n_shapes++] = (struct shape_kernel){ m, n, k, kern };
    /* The kernels' names for the summary, each once. */
    pthread_mutex_lock(w->names_lock);
    char *names = w->tj->kernels;
    size_t len = strlen(names), nl = strlen(kern->name);
    int seen = 0;
    for (const char *p = names; (p = strstr(p, kern->name)); p += nl)
        seen |= (p == names || p[-1] == ' ') && (p[nl] == ',' || p[nl] == 0);
    if (!seen && len + nl + 3 < sizeof w->tj->kernels)
        snprintf(names + len, sizeof w->tj->kernels - len, "%s%s", len ? ", " : "", kern->name);
    pthread_mutex_unlock(w->names_lock);
    return kern;
}

static int alloc_buffers(struct worker *w)
{
    const struct tiled_plan *tp = &w->tj->tp;
    const struct gemm_sig_info *si = &gemm_sigs[w->tj->sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    size_t ab = (size_t)tp->tm * (size_t)tp->tk, bb = (size_t)tp->tk * (size_t)tp->tn;
    size_t cb = (size_t)tp->tm * (size_t)tp->tn;
    for (int x = 0; x < 2; x++) {
        CUDA_TRY(cudaMalloc(&w->a[x], ab * in_es));
        CUDA_TRY(cudaMalloc(&w->b[x], bb * in_es));
        CUDA_TRY(cudaMalloc(&w->c[x], cb * out_es));
        CUDA_TRY(cudaEventCreateWithFlags(&w->loaded[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->used[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->done[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->c_free[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->c_loaded[x], cudaEventDisableTiming));
    }
    CUDA_TRY(cudaEventCreateWithFlags(&w->ref_free, cudaEventDisableTiming));
    CUDA_TRY(cudaStreamCreateWithFlags(&w->copy_in, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&w->copy_out, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&w->copy_c, cudaStreamNonBlocking));
    if (w->tj->ref) {
        /* FP64 operands are the reference's own; others get a double copy. */
        if (si->in != GC_F64) {
            CUDA_TRY(cudaMalloc((void **)&w->a64, ab * sizeof(double)));
            CUDA_TRY(cudaMalloc((void **)&w->b64, bb * sizeof(double)));
        }
        CUDA_TRY(cudaMalloc((void **)&w->ref, cb * sizeof(double)));
    }
    return 0;
}

static void free_buffers(struct worker *w)
{
    for (int x = 0; x < 2; x++) {
        cudaFree(w->a[x]);
        cudaFree(w->b[x]);
        cudaFree(w->c[x]);
        cudaEventDestroy(w->loaded[x]);
        cudaEventDestroy(w->used[x]);
        cudaEventDestroy(w->done[x]);
        cudaEventDestroy(w->c_free[x]);
        cudaEventDestroy(w->c_loaded[x]);
    }
    cudaEventDestroy(w->ref_free);
    cudaFree(w->a64);
    cudaFree(w->b64);
    cudaFree(w->ref);
    if (w->copy_in)
        cudaStreamDestroy(w->copy_in);
    if (w->copy_out)
        cudaStreamDestroy(w->copy_out);
    if (w->copy_c)
        cudaStreamDestroy(w->copy_c);
}

/* Product p of the stack: its first elements in A, B and C. */
static void product_offsets(const struct matmul_plan *pl, int64_t p, int64_t *oa, int64_t *ob,
                            int64_t *oc)
{
    int64_t l = p / pl->inner, i = p % pl->inner;
    matmul_launch_offsets(pl, l, oa, ob, oc);
    *oa += i * pl->inner_sa;
    *ob += i * pl->inner_sb;
    *oc += i * pl->m * pl->n;
}

/* One tile: its steps' copies in, the kernel (and the FP64 reference) for
 * each, then the copy out.  `g` counts steps across tiles, for the A and B
 * buffers; `t` counts this GPU's tiles, for the C buffers. */
static int run_tile(struct worker *w, int64_t item, int64_t *g, int64_t t)
{
    struct tiled_job *tj = w->tj;
    const struct tiled_plan *tp = &tj->tp;
    const struct matmul_plan *pl = tj->plan;
    const struct gemm_sig_info *si = &gemm_sigs[tj->sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    int64_t tiles = tp->tiles_m * tp->tiles_n;
    int64_t oa, ob, oc;
    product_offsets(pl, item / tiles, &oa, &ob, &oc);
    struct tiled_rect r = tiled_tile(tp, item % tiles);
    int cb = (int)(t % 2);
    cudaStream_t comp = w->dev.stream;
    struct launch_env env = device_launch_env(&w->dev);
    char *c = (char *)tj->c + (size_t)(oc + r.r0 * pl->n + r.c0) * out_es;
    double *ref = tj->ref ? tj->ref + oc + r.r0 * pl->n + r.c0 : NULL;
    if (tj->c_in) {
        /* The tile's C0 (and its reference's), once the buffer it goes to
         * is copied out: on a stream of its own, so that neither the steps'
         * blocks nor the tile before's copy out wait for it. */
        CUDA_TRY(cudaStreamWaitEvent(w->copy_c, w->c_free[cb], 0));
        CUDA_TRY(cudaMemcpy2DAsync(w->c[cb], (size_t)r.cols * out_es, c, (size_t)pl->n * out_es,
                                   (size_t)r.cols * out_es, (size_t)r.rows,
                                   cudaMemcpyHostToDevice, w->copy_c));
        if (ref) {
            CUDA_TRY(cudaStreamWaitEvent(w->copy_c, w->ref_free, 0));
            CUDA_TRY(cudaMemcpy2DAsync(w->ref, (size_t)r.cols * sizeof(double), ref,
                                       (size_t)pl->n * sizeof(double),
                                       (size_t)r.cols * sizeof(double), (size_t)r.rows,
                                       cudaMemcpyHostToDevice, w->copy_c));
        }
        CUDA_TRY(cudaEventRecord(w->c_loaded[cb], w->copy_c));
        CUDA_TRY(cudaStreamWaitEvent(comp, w->c_loaded[cb], 0));
    } else {
        CUDA_TRY(cudaStreamWaitEvent(comp, w->c_free[cb], 0));
    }
    double first_beta = tj->c_in ? tj->beta : 0.0;
    for (int64_t s = 0; s < tp->steps; s++, (*g)++) {
        int x = (int)(*g % 2);
        int64_t k0, kk;
        tiled_step(tp, s, &k0, &kk);
        const char *a = (const char *)tj->a + (size_t)(oa + r.r0 * pl->k + k0) * in_es;
        const char *b = (const char *)tj->b + (size_t)(ob + k0 * pl->n + r.c0) * in_es;
        CUDA_TRY(cudaStreamWaitEvent(w->copy_in, w->used[x], 0));
        CUDA_TRY(cudaMemcpy2DAsync(w->a[x], (size_t)kk * in_es, a, (size_t)pl->k * in_es,
                                   (size_t)kk * in_es, (size_t)r.rows, cudaMemcpyHostToDevice,
                                   w->copy_in));
        CUDA_TRY(cudaMemcpy2DAsync(w->b[x], (size_t)r.cols * in_es, b, (size_t)pl->n * in_es,
                                   (size_t)r.cols * in_es, (size_t)kk, cudaMemcpyHostToDevice,
                                   w->copy_in));
        CUDA_TRY(cudaEventRecord(w->loaded[x], w->copy_in));
        CUDA_TRY(cudaStreamWaitEvent(comp, w->loaded[x], 0));
        const struct gemm_kernel *kern = kernel_for(w, r.rows, r.cols, kk);
        if (!kern)
            return w->status;
        struct gemm_problem p = { .sig = tj->sig, .m = r.rows, .n = r.cols, .k = kk,
                                  .lda = kk, .ldb = r.cols, .ldc = r.cols, .batch = 1,
                                  .alpha = tj->alpha, .beta = s ? 1.0 : first_beta,
                                  .a = w->a[x], .b = w->b[x], .c = w->c[cb],
                                  .cc = env.cc };
        cudaError_t err = gemm_run(kern, &p, &env, tj->host_threads);
        if (err != cudaSuccess)
            return device_cuda_fail(err, kern->name, __FILE__, __LINE__);
        if (tj->ref) {
            const struct gemm_kernel *dgemm = gemm_kernel_find("cublas");
            if (s == 0 && !tj->c_in)
                CUDA_TRY(cudaStreamWaitEvent(comp, w->ref_free, 0));
            struct gemm_problem f = p;
            f.sig = GEMM_F64;
            f.a = w->a[x];
            f.b = w->b[x];
            f.c = w->ref;
            if (si->in != GC_F64) {
                CUDA_TRY(convert_operand_launch(w->a[x], si->in, 0, 0, 0, (size_t)(r.rows * kk),
                                                w->a64, GC_F64, comp));
                CUDA_TRY(convert_operand_launch(w->b[x], si->in, 0, 0, 0, (size_t)(kk * r.cols),
                                                w->b64, GC_F64, comp));
                f.a = w->a64;
                f.b = w->b64;
            }
            if ((err = gemm_run(dgemm, &f, &env, tj->host_threads)) != cudaSuccess)
                return device_cuda_fail(err, "the FP64 reference", __FILE__, __LINE__);
        }
        CUDA_TRY(cudaEventRecord(w->used[x], comp));
    }
    CUDA_TRY(cudaEventRecord(w->done[cb], comp));
    CUDA_TRY(cudaStreamWaitEvent(w->copy_out, w->done[cb], 0));
    CUDA_TRY(cudaMemcpy2DAsync(c, (size_t)pl->n * out_es, w->c[cb], (size_t)r.cols * out_es,
                               (size_t)r.cols * out_es, (size_t)r.rows, cudaMemcpyDeviceToHost,
                               w->copy_out));
    if (ref) {
        CUDA_TRY(cudaMemcpy2DAsync(ref, (size_t)pl->n * sizeof(double), w->ref,
                                   (size_t)r.cols * sizeof(double), (size_t)r.cols * sizeof(double),
                                   (size_t)r.rows, cudaMemcpyDeviceToHost, w->copy_out));
        CUDA_TRY(cudaEventRecord(w->ref_free, w->copy_out));
    }
    CUDA_TRY(cudaEventRecord(w->c_free[cb], w->copy_out));
    return 0;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct tiled_device_stats *st = &w->tj->stats[w->index];
    int rc = device_open(&w->dev, w->tj->devices[w->index], 0);
    if (!rc && w->tj->ref)
        rc = device_cublas(&w->dev);
    if (!rc)
        rc = alloc_buffers(w);
    double t0 = now_ms();
    int64_t g = 0, t = 0, item;
    for (;;) {
        /* Two tiles in flight at most: this GPU takes its next one only
         * when the one before last is computed, so that the tiles go to
         * the GPUs as they are ready for them, not all to the first. */
        if (!rc && t >= 2)
            rc = CUDA_CALL(cudaEventSynchronize(w->done[t % 2]));
        if (rc || (item = atomic_fetch_add(w->next, 1)) >= w->items)
            break;
        rc = run_tile(w, item, &g, t++);
        st->tiles++;
    }
    if (rc)
        atomic_store(w->next, w->items);   /* the others stop too */
    else
        rc = CUDA_CALL(cudaDeviceSynchronize());
    st->ms = now_ms() - t0;
    st->ordinal = w->dev.ordinal;
    snprintf(st->name, sizeof st->name, "%s", w->dev.name);
    free_buffers(w);
    device_close(&w->dev);
    w->status = rc;
    return NULL;
}

int tiled_run(struct tiled_job *tj)
{
    const struct matmul_plan *pl = tj->plan;
    const struct gemm_sig_info *si = &gemm_sigs[tj->sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    /* With a reference, a block has one double copy (when the operands are
     * not doubles already) and a tile one double tile, copied out (and in,
     * with c_in) beside it: half a double an element of the double
     * buffers that tiled_bytes counts. */
    int ref = tj->ref != NULL;
    struct tiled_costs costs = {
        .in_es = in_es + (ref && si->in != GC_F64 ? sizeof(double) / 2 : 0),
        .out_es = out_es + (ref ? sizeof(double) / 2 : 0),
        .copy_in_es = in_es,
        .copy_out_es = out_es + (ref ? sizeof(double) : 0),
        .flops = tj->flops,
        .h2d = TILED_H2D_BYTES_S,
        .d2h = TILED_D2H_BYTES_S,
        .dram = TILED_DRAM_BYTES_S,
        .step_s = TILED_STEP_S,
        .devices = tj->n_devices,
        .batch = pl->batch,
        .c_in = tj->c_in,
    };
    if (tiled_plan_make(pl->m, pl->n, pl->k, &costs, tj->budget, &tj->tp) != 0)
        return gc_fail(GC_EXIT_GPU, "%.3g GiB of device memory is too little even for "
                       "%dx%d tiles of this product", tj->budget / 1073741824.0, TILED_ALIGN,
                       TILED_ALIGN);
    tj->traffic = tiled_traffic(&tj->tp, &costs);
    tj->kernels[0] = 0;
    atomic_llong next;
    atomic_init(&next, 0);
    pthread_mutex_t names_lock;
    pthread_mutex_init(&names_lock, NULL);
    int64_t items = pl->batch * tj->tp.tiles_m * tj->tp.tiles_n;
    struct worker ws[TILED_MAX_DEVICES];
    pthread_t threads[TILED_MAX_DEVICES];
    int started[TILED_MAX_DEVICES] = { 0 };
    for (int i = 0; i < tj->n_devices; i++) {
        memset(&ws[i], 0, sizeof ws[i]);
        memset(&tj->stats[i], 0, sizeof tj->stats[i]);
        ws[i] = (struct worker){ .tj = tj, .index = i, .next = &next, .items = items,
                                 .names_lock = &names_lock };
        started[i] = pthread_create(&threads[i], NULL, work, &ws[i]) == 0;
        if (!started[i])
            ws[i].status = gc_fail(GC_EXIT_GPU, "cannot start a thread for GPU %d",
                                   tj->devices[i]);
    }
    int rc = 0;
    for (int i = 0; i < tj->n_devices; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        if (!rc)
            rc = ws[i].status;
    }
    pthread_mutex_destroy(&names_lock);
    return rc;
}
