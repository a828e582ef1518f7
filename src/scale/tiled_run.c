#include "src/scale/tiled_run.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "kernels/convert.h"
#include "src/job/device.h"
#include "src/job/report.h"

/* The kernel for each distinct tile shape (at most two sizes a side and
 * two step lengths: full and the remainder). */
#define SHAPES 8

/* Each GPU's page-locked slots: large enough that gathering a slot and its
 * copy dwarf their set-up, few enough that taking them costs tens of
 * milliseconds.  Eight in: the host gathers while earlier slots cross;
 * four out. */
#define SLOT_BYTES ((size_t)16 << 20)
#define IN_SLOTS 8
#define OUT_SLOTS 4
/* Gathering threads a GPU: memory bandwidth, not cores, limits them. */
#define GATHER_THREADS_MAX 8
/* Tiles handed to a GPU's copying-out thread and not yet all copied out:
 * the one being copied, the two after it. */
#define OUT_QUEUE 4

struct shape_kernel {
    int64_t m, n, k;
    const struct gemm_kernel *kern;
};

struct slot {
    unsigned char *buf;
    cudaEvent_t crossed;       /* its copy is done: the slot may be used again */
};

/* A computed tile, for the copying-out thread: buffer cb, its rows at
 * element `first` of the whole C (rows of r.cols, n apart). */
struct out_tile {
    int cb;
    size_t first;
    struct tiled_rect r;
};

/* Each GPU's copies out, on a thread of their own, so that the GPU's
 * other thread goes on copying in and launching while a tile goes out;
 * and, with a sink, a third thread that hands it each tile that has
 * landed, so that neither waits for the sink. */
struct writer {
    pthread_t thread, sink_thread;
    int started, sink_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct out_tile queue[OUT_QUEUE];
    int64_t queued;            /* tiles handed over */
    int64_t enqueued;          /* tiles whose copies out are all on the stream */
    int64_t retired;           /* tiles whose rows are all in host memory */
    struct out_tile *landed;   /* those tiles, in order, for the sink */
    int64_t sunk;              /* tiles the sink has taken */
    int stop, status;
    cudaEvent_t out_done;      /* the last copy out straight into host memory */
    struct slot slots[OUT_SLOTS];
};

struct worker {
    struct tiled_job *tj;
    int index;                 /* into tj->devices and tj->stats */
    atomic_llong *next;        /* the next tile of the whole stack */
    int64_t items;             /* products times tiles */
    int status;
    int threads;               /* gathering threads */
    size_t slot_bytes;
    struct gc_device dev;
    cudaStream_t copy_in, copy_out, copy_c;
    void *a[2], *b[2], *c[2];
    void *kept;                /* with keep_b, B whole (k x n) for product kept_product */
    int64_t kept_product;      /* -1: none yet */
    int64_t kept_steps;        /* its steps copied so far */
    double *a64, *b64, *ref;
    cudaEvent_t loaded[2], used[2], done[2], c_free[2], c_loaded[2], ref_free;
    struct slot in[IN_SLOTS];
    int64_t in_next;
    struct writer wr;
    struct shape_kernel shapes[SHAPES];
    int n_shapes;
    pthread_mutex_t *names_lock;
};

/* The kernel the plan holds for one tile shape on this GPU, found once
 * for each shape; its name goes to the summary's list. */
static const struct gemm_kernel *kernel_for(struct worker *w, int64_t m, int64_t n, int64_t k)
{
    for (int i = 0; i < w->n_shapes; i++)
        if (w->shapes[i].m == m && w->shapes[i].n == n && w->shapes[i].k == k)
            return w->shapes[i].kern;
    const struct gemm_kernel *kern;
    int status = product_tile_kernel(w->tj->tiles, w->dev.cc_major * 10 + w->dev.cc_minor,
                                     w->dev.sm_count, m, n, k, &kern);
    if (status) {
        w->status = status;
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

static int alloc_slots(struct slot *slots, int n, size_t bytes)
{
    for (int i = 0; i < n; i++) {
        CUDA_TRY(cudaHostAlloc((void **)&slots[i].buf, bytes, cudaHostAllocPortable));
        CUDA_TRY(cudaEventCreateWithFlags(&slots[i].crossed, cudaEventDisableTiming));
    }
    return 0;
}

static void free_slots(struct slot *slots, int n)
{
    for (int i = 0; i < n; i++) {
        if (slots[i].buf)
            cudaFreeHost(slots[i].buf);
        if (slots[i].crossed)
            cudaEventDestroy(slots[i].crossed);
    }
}

static int alloc_buffers(struct worker *w)
{
    const struct tiled_plan *tp = &w->tj->tp;
    const struct gemm_sig_info *si = &gemm_sigs[w->tj->sig];
    size_t in_es = gc_dtypes[si->in].size, out_es = gc_dtypes[si->out].size;
    size_t ab = (size_t)tp->tm * (size_t)tp->tk, bb = (size_t)tp->tk * (size_t)tp->tn;
    size_t cb = (size_t)tp->tm * (size_t)tp->tn;
    w->kept_product = -1;
    if (tp->keep_b)
        CUDA_TRY(cudaMalloc(&w->kept, (size_t)tp->k * (size_t)tp->n * in_es));
    for (int x = 0; x < 2; x++) {
        CUDA_TRY(cudaMalloc(&w->a[x], ab * in_es));
        if (!tp->keep_b)
            CUDA_TRY(cudaMalloc(&w->b[x], bb * in_es));
        CUDA_TRY(cudaMalloc(&w->c[x], cb * out_es));
        CUDA_TRY(cudaEventCreateWithFlags(&w->loaded[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->used[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->done[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->c_free[x], cudaEventDisableTiming));
        CUDA_TRY(cudaEventCreateWithFlags(&w->c_loaded[x], cudaEventDisableTiming));
    }
    CUDA_TRY(cudaEventCreateWithFlags(&w->ref_free, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&w->wr.out_done, cudaEventDisableTiming));
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
    /* Slots no larger than the largest block or tile (a small product
     * takes little page-locked memory), in whole pages. */
    size_t most = ab * in_es > bb * in_es ? ab * in_es : bb * in_es;
    most = most > cb * sizeof(double) ? most : cb * sizeof(double);
    w->slot_bytes = most < SLOT_BYTES ? (most + 4095) / 4096 * 4096 : SLOT_BYTES;
    /* Slots in only for what is not page-locked already (the reference's
     * C0 never is); slots out unless C is page-locked and there is no
     * reference. */
    unsigned pinned = w->tj->pinned;
    int in = !(pinned & TILED_PINNED_A) || !(pinned & TILED_PINNED_B) ||
             (w->tj->c_in && (!(pinned & TILED_PINNED_C) || w->tj->ref));
    int out = !(pinned & TILED_PINNED_C) || w->tj->ref;
    if ((in && alloc_slots(w->in, IN_SLOTS, w->slot_bytes)) ||
        (out && alloc_slots(w->wr.slots, OUT_SLOTS, w->slot_bytes)))
        return GC_EXIT_GPU;
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
    cudaFree(w->kept);
    cudaEventDestroy(w->ref_free);
    if (w->wr.out_done)
        cudaEventDestroy(w->wr.out_done);
    cudaFree(w->a64);
    cudaFree(w->b64);
    cudaFree(w->ref);
    free_slots(w->in, IN_SLOTS);
    free_slots(w->wr.slots, OUT_SLOTS);
    if (w->copy_in)
        cudaStreamDestroy(w->copy_in);
    if (w->copy_out)
        cudaStreamDestroy(w->copy_out);
    if (w->copy_c)
        cudaStreamDestroy(w->copy_c);
}

/* ---- copies through the slots ---- */

/* A region of `rows` rows of `row_bytes` goes through the slots in
 * chunks: runs of whole rows, or, for a row longer than a slot, pieces of
 * one row.  Chunk i: rows [*r0, *r0 + *nr), bytes [*b0, *b0 + *nb) of
 * each. */
static size_t chunk_count(size_t rows, size_t row_bytes, size_t slot)
{
    if (row_bytes <= slot)
        return (rows + slot / row_bytes - 1) / (slot / row_bytes);
    return rows * ((row_bytes + slot - 1) / slot);
}

static void chunk_at(size_t rows, size_t row_bytes, size_t slot, size_t i, size_t *r0, size_t *nr,
                     size_t *b0, size_t *nb)
{
    if (row_bytes <= slot) {
        size_t per = slot / row_bytes;
        *r0 = i * per;
        *nr = rows - *r0 < per ? rows - *r0 : per;
        *b0 = 0;
        *nb = row_bytes;
        return;
    }
    size_t pieces = (row_bytes + slot - 1) / slot;
    *r0 = i / pieces;
    *nr = 1;
    *b0 = i % pieces * slot;
    *nb = row_bytes - *b0 < slot ? row_bytes - *b0 : slot;
}

/* Rows between host memory (`pitch` bytes apart) and a slot (packed). */
struct rows_copy {
    unsigned char *host;
    size_t pitch, len;
    unsigned char *packed;
    int gather;                /* 1: host -> slot; 0: slot -> host */
};

static void rows_copy_piece(void *arg, size_t begin, size_t end)
{
    const struct rows_copy *rc = arg;
    for (size_t i = begin; i < end; i++) {
        unsigned char *h = rc->host + i * rc->pitch, *p = rc->packed + i * rc->len;
        memcpy(rc->gather ? p : h, rc->gather ? h : p, rc->len);
    }
}

static void rows_copy_run(int threads, size_t rows, struct rows_copy *rc)
{
    /* A slot of a MiB or less is quicker to copy than to share out. */
    parallel_for(rows * rc->len > ((size_t)1 << 20) ? threads : 1, rows, 1, rows_copy_piece, rc);
}

/* `rows` rows of `row_bytes` at `host` (`pitch` apart) to `dev` (packed)
 * on `stream`, gathered slot by slot; each slot is refilled once its copy
 * before has crossed. */
static int stage_in(struct worker *w, cudaStream_t stream, void *dev, const void *host,
                    size_t pitch, size_t row_bytes, size_t rows)
{
    size_t n = rows && row_bytes ? chunk_count(rows, row_bytes, w->slot_bytes) : 0;
    for (size_t i = 0; i < n; i++) {
        size_t r0, nr, b0, nb;
        chunk_at(rows, row_bytes, w->slot_bytes, i, &r0, &nr, &b0, &nb);
        struct slot *s = &w->in[w->in_next++ % IN_SLOTS];
        CUDA_TRY(cudaEventSynchronize(s->crossed));
        struct rows_copy rc = { (unsigned char *)host + r0 * pitch + b0, pitch, nb, s->buf, 1 };
        rows_copy_run(w->threads, nr, &rc);
        CUDA_TRY(cudaMemcpyAsync((unsigned char *)dev + r0 * row_bytes + b0, s->buf, nr * nb,
                                 cudaMemcpyHostToDevice, stream));
        CUDA_TRY(cudaEventRecord(s->crossed, stream));
    }
    return 0;
}

/* Rows to the device straight from page-locked memory, else through the
 * slots. */
static int copy_in(struct worker *w, cudaStream_t stream, void *dev, const void *host,
                   size_t pitch, size_t row_bytes, size_t rows, int pinned)
{
    if (!pinned)
        return stage_in(w, stream, dev, host, pitch, row_bytes, rows);
    CUDA_TRY(cudaMemcpy2DAsync(dev, row_bytes, host, pitch, row_bytes, rows,
                               cudaMemcpyHostToDevice, stream));
    return 0;
}

/* Where a tile's rows go from a slot: host memory at `host` (elements of
 * `es` bytes, rows `ld` elements apart from element `first`). */
struct rows_dest {
    unsigned char *host;
    size_t es, first, ld;
    int threads;
};

static void rows_put(const struct rows_dest *d, size_t r0, size_t nr, size_t b0, size_t nb,
                     const unsigned char *packed)
{
    size_t first = d->first + r0 * d->ld + b0 / d->es;
    struct rows_copy rc = { d->host + first * d->es, d->ld * d->es, nb, (unsigned char *)packed, 0 };
    rows_copy_run(d->threads, nr, &rc);
}

/* A tile of `rows` rows of `row_bytes` at `dev` (packed) to `d` through
 * the copying-out slots, on `stream`: up to OUT_SLOTS chunks on their way
 * while the one before is put.  Once the last copy is on the stream,
 * `freed` is recorded there (the buffer may be overwritten after it) and
 * *enqueued is called. */
static int drain(struct worker *w, cudaStream_t stream, const void *dev, size_t rows,
                 size_t row_bytes, const struct rows_dest *d, cudaEvent_t freed,
                 void (*enqueued)(struct writer *wr))
{
    struct writer *wr = &w->wr;
    size_t n = rows && row_bytes ? chunk_count(rows, row_bytes, w->slot_bytes) : 0;
    for (size_t i = 0; i < n + OUT_SLOTS; i++) {
        size_t r0, nr, b0, nb;
        if (i >= OUT_SLOTS && i - OUT_SLOTS < n) {
            size_t j = i - OUT_SLOTS;
            struct slot *s = &wr->slots[j % OUT_SLOTS];
            CUDA_TRY(cudaEventSynchronize(s->crossed));
            chunk_at(rows, row_bytes, w->slot_bytes, j, &r0, &nr, &b0, &nb);
            rows_put(d, r0, nr, b0, nb, s->buf);
        }
        if (i < n) {
            struct slot *s = &wr->slots[i % OUT_SLOTS];
            chunk_at(rows, row_bytes, w->slot_bytes, i, &r0, &nr, &b0, &nb);
            CUDA_TRY(cudaMemcpyAsync(s->buf, (const unsigned char *)dev + r0 * row_bytes + b0,
                                     nr * nb, cudaMemcpyDeviceToHost, stream));
            CUDA_TRY(cudaEventRecord(s->crossed, stream));
        }
        if (i + 1 == n || (n == 0 && i == 0)) {
            CUDA_TRY(cudaEventRecord(freed, stream));
            if (enqueued)
                enqueued(wr);
        }
    }
    return 0;
}

/* ---- the copying-out thread ---- */

/* One more tile counted in *count (enqueued, retired or sunk), and a
 * failure `rc` kept if it is the first; the waiting threads told. */
static void writer_count(struct writer *wr, int64_t *count, int rc)
{
    pthread_mutex_lock(&wr->lock);
    (*count)++;
    if (rc && !wr->status)
        wr->status = rc;
    pthread_cond_broadcast(&wr->cond);
    pthread_mutex_unlock(&wr->lock);
}

static void writer_mark_enqueued(struct writer *wr)
{
    writer_count(wr, &wr->enqueued, 0);
}

/* A computed tile to host memory: straight into a page-locked C, else
 * through the slots; its reference tile through the slots.  Returns once
 * every row has landed. */
static int copy_out_tile(struct worker *w, const struct out_tile *ot)
{
    struct tiled_job *tj = w->tj;
    size_t out_es = gc_dtypes[gemm_sigs[tj->sig].out].size;
    size_t n = (size_t)tj->plan->n, rows = (size_t)ot->r.rows, cols = (size_t)ot->r.cols;
    void (*mark)(struct writer *) = tj->ref ? NULL : writer_mark_enqueued;
    CUDA_TRY(cudaStreamWaitEvent(w->copy_out, w->done[ot->cb], 0));
    int rc = 0, direct = (tj->pinned & TILED_PINNED_C) != 0;
    if (direct) {
        CUDA_TRY(cudaMemcpy2DAsync((char *)tj->c + ot->first * out_es, n * out_es,
                                   w->c[ot->cb], cols * out_es, cols * out_es, rows,
                                   cudaMemcpyDeviceToHost, w->copy_out));
        CUDA_TRY(cudaEventRecord(w->c_free[ot->cb], w->copy_out));
        CUDA_TRY(cudaEventRecord(w->wr.out_done, w->copy_out));
        if (mark)
            mark(&w->wr);
    } else {
        struct rows_dest c = { tj->c, out_es, ot->first, n, w->threads };
        rc = drain(w, w->copy_out, w->c[ot->cb], rows, cols * out_es, &c, w->c_free[ot->cb],
                   mark);
    }
    if (!rc && tj->ref) {
        struct rows_dest r = { (unsigned char *)tj->ref, sizeof(double), ot->first, n,
                               w->threads };
        rc = drain(w, w->copy_out, w->ref, rows, cols * sizeof(double), &r, w->ref_free,
                   writer_mark_enqueued);
    }
    if (!rc && direct)
        rc = CUDA_CALL(cudaEventSynchronize(w->wr.out_done));
    return rc;
}

static void *write_out(void *arg)
{
    struct worker *w = arg;
    struct writer *wr = &w->wr;
    for (;;) {
        pthread_mutex_lock(&wr->lock);
        while (wr->retired == wr->queued && !wr->stop)
            pthread_cond_wait(&wr->cond, &wr->lock);
        if (wr->retired == wr->queued || wr->status) {
            pthread_mutex_unlock(&wr->lock);
            break;
        }
        struct out_tile ot = wr->queue[wr->retired % OUT_QUEUE];
        pthread_mutex_unlock(&wr->lock);
        int rc = copy_out_tile(w, &ot);
        /* Stored before the count that shows it to the sink's thread
         * (only this thread moves `retired`). */
        if (wr->landed)
            wr->landed[wr->retired] = ot;
        writer_count(wr, &wr->retired, rc);
    }
    return NULL;
}

/* The sink's thread: each landed tile, in order, until the copying-out
 * thread has stopped and every tile it landed is taken. */
static void *sink_out(void *arg)
{
    struct worker *w = arg;
    struct writer *wr = &w->wr;
    const struct tiled_sink *sink = w->tj->sink;
    size_t out_es = gc_dtypes[gemm_sigs[w->tj->sig].out].size, n = (size_t)w->tj->plan->n;
    for (;;) {
        pthread_mutex_lock(&wr->lock);
        while (wr->sunk == wr->retired && !(wr->stop && !wr->started) && !wr->status)
            pthread_cond_wait(&wr->cond, &wr->lock);
        if (wr->sunk == wr->retired || wr->status) {
            pthread_mutex_unlock(&wr->lock);
            break;
        }
        struct out_tile ot = wr->landed[wr->sunk];
        pthread_mutex_unlock(&wr->lock);
        int rc = sink->put(sink->arg, ot.first, ot.r.rows, ot.r.cols, n,
                           (const char *)w->tj->c + ot.first * out_es);
        writer_count(wr, &wr->sunk, rc);
    }
    return NULL;
}

/* Waits until the copies out of the first `count` tiles are on their
 * stream (their buffers' events recorded); the thread's failure, if any. */
static int writer_wait(struct writer *wr, int64_t count)
{
    pthread_mutex_lock(&wr->lock);
    while (wr->enqueued < count && !wr->status)
        pthread_cond_wait(&wr->cond, &wr->lock);
    int rc = wr->status;
    pthread_mutex_unlock(&wr->lock);
    return rc;
}

static void writer_hand(struct writer *wr, const struct out_tile *ot)
{
    pthread_mutex_lock(&wr->lock);
    wr->queue[wr->queued % OUT_QUEUE] = *ot;
    wr->queued++;
    pthread_cond_broadcast(&wr->cond);
    pthread_mutex_unlock(&wr->lock);
}

/* Stops the copying-out thread once it has copied out what it was handed
 * (or at once after a failure `rc`); its failure, else rc. */
static int writer_finish(struct writer *wr, int rc)
{
    if (!wr->started)
        return rc;
    pthread_mutex_lock(&wr->lock);
    wr->stop = 1;
    if (rc && !wr->status)
        wr->status = rc;
    pthread_cond_broadcast(&wr->cond);
    pthread_mutex_unlock(&wr->lock);
    pthread_join(wr->thread, NULL);
    pthread_mutex_lock(&wr->lock);
    wr->started = 0;
    pthread_cond_broadcast(&wr->cond);
    rc = rc ? rc : wr->status;
    pthread_mutex_unlock(&wr->lock);
    return rc;
}

/* Then the sink's thread, once it has taken every landed tile. */
static int sink_finish(struct writer *wr, int rc)
{
    if (!wr->sink_started)
        return rc;
    pthread_join(wr->sink_thread, NULL);
    wr->sink_started = 0;
    return rc ? rc : wr->status;
}

/* ---- the tiles ---- */

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

/* One tile: its C0 copied in (with c_in), its steps' blocks copied in and
 * the kernel (and the FP64 reference) run for each, then the tile handed
 * to the copying-out thread.  `g` counts steps across tiles, for the A and
 * B buffers; `t` counts this GPU's tiles, for the C buffers. */
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
    size_t first = (size_t)(oc + r.r0 * pl->n + r.c0), ld = (size_t)pl->n;
    size_t rows = (size_t)r.rows, cols = (size_t)r.cols;
    /* This tile's C buffer is free once the tile two before is copied out
     * (and, with a reference, the single reference tile once the tile
     * before is): their events must be recorded before they are waited
     * for. */
    int rc = writer_wait(&w->wr, t - 1 + (tj->ref ? 1 : 0));
    if (rc)
        return rc;
    if (tj->c_in) {
        CUDA_TRY(cudaStreamWaitEvent(w->copy_c, w->c_free[cb], 0));
        if ((rc = copy_in(w, w->copy_c, w->c[cb], (const char *)tj->c + first * out_es,
                          ld * out_es, cols * out_es, rows, tj->pinned & TILED_PINNED_C)))
            return rc;
        if (tj->ref) {
            CUDA_TRY(cudaStreamWaitEvent(w->copy_c, w->ref_free, 0));
            if ((rc = stage_in(w, w->copy_c, w->ref, tj->ref + first, ld * sizeof(double),
                               cols * sizeof(double), rows)))
                return rc;
        }
        CUDA_TRY(cudaEventRecord(w->c_loaded[cb], w->copy_c));
        CUDA_TRY(cudaStreamWaitEvent(comp, w->c_loaded[cb], 0));
    } else {
        CUDA_TRY(cudaStreamWaitEvent(comp, w->c_free[cb], 0));
    }
    double first_beta = tj->c_in ? tj->beta : 0.0;
    /* B kept: another product's B replaces it once every kernel that read
     * it is done (the later of the two buffers' last uses). */
    int new_b = tp->keep_b && w->kept_product != item / tiles;
    if (new_b) {
        CUDA_TRY(cudaStreamWaitEvent(w->copy_in, w->used[0], 0));
        CUDA_TRY(cudaStreamWaitEvent(w->copy_in, w->used[1], 0));
        w->kept_product = item / tiles;
        w->kept_steps = 0;
    }
    for (int64_t s = 0; s < tp->steps; s++, (*g)++) {
        int x = (int)(*g % 2);
        int64_t k0, kk;
        tiled_step(tp, s, &k0, &kk);
        const char *a = (const char *)tj->a + (size_t)(oa + r.r0 * pl->k + k0) * in_es;
        const char *b = (const char *)tj->b + (size_t)(ob + k0 * pl->n + r.c0) * in_es;
        /* With B kept, its rows for this step are at their place in it,
         * copied by the first tile that reaches the step. */
        void *bx = tp->keep_b ? (char *)w->kept + (size_t)(k0 * pl->n) * in_es : w->b[x];
        int copy_b = !tp->keep_b || s >= w->kept_steps;
        CUDA_TRY(cudaStreamWaitEvent(w->copy_in, w->used[x], 0));
        if ((rc = copy_in(w, w->copy_in, w->a[x], a, (size_t)pl->k * in_es, (size_t)kk * in_es,
                          rows, tj->pinned & TILED_PINNED_A)) ||
            (copy_b && (rc = copy_in(w, w->copy_in, bx, b, (size_t)pl->n * in_es, cols * in_es,
                                     (size_t)kk, tj->pinned & TILED_PINNED_B))))
            return rc;
        if (tp->keep_b && copy_b)
            w->kept_steps = s + 1;
        CUDA_TRY(cudaEventRecord(w->loaded[x], w->copy_in));
        CUDA_TRY(cudaStreamWaitEvent(comp, w->loaded[x], 0));
        const struct gemm_kernel *kern = kernel_for(w, r.rows, r.cols, kk);
        if (!kern)
            return w->status;
        struct gemm_problem p = { .sig = tj->sig, .m = r.rows, .n = r.cols, .k = kk,
                                  .lda = kk, .ldb = r.cols, .ldc = r.cols, .batch = 1,
                                  .alpha = tj->alpha, .beta = s ? 1.0 : first_beta,
                                  .a = w->a[x], .b = bx, .c = w->c[cb],
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
            f.b = bx;
            f.c = w->ref;
            if (si->in != GC_F64) {
                CUDA_TRY(convert_operand_launch(w->a[x], si->in, 0, 0, 0, (size_t)(r.rows * kk),
                                                w->a64, GC_F64, comp));
                CUDA_TRY(convert_operand_launch(bx, si->in, 0, 0, 0, (size_t)(kk * r.cols),
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
    struct out_tile ot = { cb, first, r };
    writer_hand(&w->wr, &ot);
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
    if (!rc && w->tj->sink && !(w->wr.landed = malloc((size_t)w->items * sizeof *w->wr.landed)))
        rc = gc_fail(GC_EXIT_INPUT, "out of host memory");
    if (!rc) {
        w->wr.started = pthread_create(&w->wr.thread, NULL, write_out, w) == 0;
        if (w->wr.started && w->tj->sink)
            w->wr.sink_started = pthread_create(&w->wr.sink_thread, NULL, sink_out, w) == 0;
        if (!w->wr.started || (w->tj->sink && !w->wr.sink_started))
            rc = gc_fail(GC_EXIT_GPU, "cannot start a thread for GPU %d", w->dev.ordinal);
    }
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
    rc = writer_finish(&w->wr, rc);
    if (!rc)
        rc = CUDA_CALL(cudaDeviceSynchronize());
    st->ms = now_ms() - t0;
    rc = sink_finish(&w->wr, rc);
    st->sink_ms = now_ms() - t0 - st->ms;
    if (rc)
        atomic_store(w->next, w->items);   /* the others stop too */
    st->ordinal = w->dev.ordinal;
    snprintf(st->name, sizeof st->name, "%s", w->dev.name);
    if (w->dev.open)
        cudaDeviceSynchronize();   /* nothing in flight reads what is freed */
    free(w->wr.landed);
    free_buffers(w);
    device_close(&w->dev);
    w->status = rc;
    return NULL;
}

int tiled_run(struct tiled_job *tj)
{
    const struct matmul_plan *pl = tj->plan;
    tj->tp = tj->tiles->tp;
    tj->traffic = tj->tiles->traffic;
    tj->kernels[0] = 0;
    atomic_llong next;
    atomic_init(&next, 0);
    pthread_mutex_t names_lock;
    pthread_mutex_init(&names_lock, NULL);
    int64_t items = pl->batch * tj->tp.tiles_m * tj->tp.tiles_n;
    int threads = (tj->host_threads > 0 ? tj->host_threads : parallel_default_threads()) /
                  tj->n_devices;
    threads = threads < 1 ? 1 : threads > GATHER_THREADS_MAX ? GATHER_THREADS_MAX : threads;
    struct worker ws[TILED_MAX_DEVICES];
    pthread_t tids[TILED_MAX_DEVICES];
    int started[TILED_MAX_DEVICES] = { 0 };
    for (int i = 0; i < tj->n_devices; i++) {
        memset(&ws[i], 0, sizeof ws[i]);
        memset(&tj->stats[i], 0, sizeof tj->stats[i]);
        ws[i] = (struct worker){ .tj = tj, .index = i, .next = &next, .items = items,
                                 .threads = threads, .names_lock = &names_lock };
        pthread_mutex_init(&ws[i].wr.lock, NULL);
        pthread_cond_init(&ws[i].wr.cond, NULL);
        started[i] = pthread_create(&tids[i], NULL, work, &ws[i]) == 0;
        if (!started[i])
            ws[i].status = gc_fail(GC_EXIT_GPU, "cannot start a thread for GPU %d",
                                   tj->devices[i]);
    }
    int rc = 0;
    for (int i = 0; i < tj->n_devices; i++) {
        if (started[i])
            pthread_join(tids[i], NULL);
        pthread_mutex_destroy(&ws[i].wr.lock);
        pthread_cond_destroy(&ws[i].wr.cond);
        if (!rc)
            rc = ws[i].status;
    }
    pthread_mutex_destroy(&names_lock);
    return rc;
}
