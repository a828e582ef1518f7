#include "src/job/upload.h"

#include <string.h>

#include "core/error.h"
#include "core/dtype.h"
#include "formats/format.h"

enum { SLOT_FREE, SLOT_FILLING, SLOT_COPYING };

static void release_slots(struct upload *u)
{
    for (int i = 0; i < u->n_slots; i++) {
        cudaFreeHost(u->slots[i].host);
        cudaEventDestroy(u->slots[i].copied);
    }
    u->n_slots = 0;
    if (u->stream)
        cudaStreamDestroy(u->stream);
    u->stream = NULL;
}

/* A failure on any thread: the first is kept (and was reported); the
 * others that follow from it are not reported again. */
static int fail(struct upload *u, int status)
{
    pthread_mutex_lock(&u->lock);
    if (!u->status)
        u->status = status;
    status = u->status;
    pthread_cond_broadcast(&u->freed);
    pthread_mutex_unlock(&u->lock);
    return status;
}

static int accept_payload(void *ctx, const struct gc_tensor *t, size_t bytes)
{
    struct upload *u = ctx;
    if (bytes < UPLOAD_MIN || u->d)
        return 0;
    if ((u->accepts & UPLOAD_FLOATS) && !gc_dtype_is_float(t->dtype))
        return 0;
    if (t->fortran_order && t->ndim > 1 && !((u->accepts & UPLOAD_FORTRAN_2D) && t->ndim == 2))
        return 0;
    if (job_open_device_early(u->job))
        return 0;
    /* Anything that fails here leaves the operand to the host path, which
     * reports what matters (device memory) in its own words. */
    if (cudaMalloc(&u->d, bytes) != cudaSuccess) {
        cudaGetLastError();
        u->d = NULL;
        return 0;
    }
    int ok = cudaStreamCreateWithFlags(&u->stream, cudaStreamNonBlocking) == cudaSuccess;
    for (int i = 0; ok && i < UPLOAD_SLOTS; i++) {
        struct upload_slot *s = &u->slots[i];
        memset(s, 0, sizeof *s);
        ok = cudaHostAlloc(&s->host, UPLOAD_SLOT_BYTES, cudaHostAllocDefault) == cudaSuccess;
        if (ok && cudaEventCreateWithFlags(&s->copied, cudaEventDisableTiming) != cudaSuccess) {
            cudaFreeHost(s->host);
            ok = 0;
        }
        if (ok)
            u->n_slots++;
    }
    if (!ok) {
        cudaGetLastError();
        release_slots(u);
        cudaFree(u->d);
        u->d = NULL;
        return 0;
    }
    return 1;
}

/* A free slot; else the one whose copy went first, once it is done. */
static void *take_slot(void *ctx)
{
    struct upload *u = ctx;
    struct upload_slot *s = NULL;
    pthread_mutex_lock(&u->lock);
    while (!u->status) {
        struct upload_slot *oldest = NULL;
        for (int i = 0; i < u->n_slots && !s; i++) {
            if (u->slots[i].state == SLOT_FREE)
                s = &u->slots[i];
            else if (u->slots[i].state == SLOT_COPYING &&
                     (!oldest || u->slots[i].seq < oldest->seq))
                oldest = &u->slots[i];
        }
        if (!s)
            s = oldest;
        if (s)
            break;
        pthread_cond_wait(&u->freed, &u->lock);
    }
    int waits = s && s->state == SLOT_COPYING;
    if (s)
        s->state = SLOT_FILLING;
    pthread_mutex_unlock(&u->lock);
    if (!s)
        return NULL;
    if (waits) {
        int rc = CUDA_CALL(cudaEventSynchronize(s->copied));
        if (rc) {
            fail(u, rc);
            return NULL;
        }
    }
    return s->host;
}

static struct upload_slot *slot_of(struct upload *u, const void *host)
{
    for (int i = 0; i < u->n_slots; i++)
        if (u->slots[i].host == host)
            return &u->slots[i];
    return NULL;
}

static int put_slice(void *ctx, void *buf, size_t off, size_t n)
{
    struct upload *u = ctx;
    struct upload_slot *s = slot_of(u, buf);
    int rc = 0;
    if (n && !u->status) {
        /* The slot's thread is a reading thread: make the device its own. */
        if (!(rc = CUDA_CALL(cudaSetDevice(u->job->dev.ordinal))) &&
            !(rc = CUDA_CALL(cudaMemcpyAsync((char *)u->d + off, buf, n,
                                             cudaMemcpyHostToDevice, u->stream))))
            rc = CUDA_CALL(cudaEventRecord(s->copied, u->stream));
        if (rc)
            return fail(u, rc);
    }
    pthread_mutex_lock(&u->lock);
    s->state = n && !rc ? SLOT_COPYING : SLOT_FREE;
    s->seq = ++u->issued;
    rc = u->status;
    pthread_cond_signal(&u->freed);
    pthread_mutex_unlock(&u->lock);
    return rc;
}

static int finish(void *ctx, int status)
{
    struct upload *u = ctx;
    double t = now_ms();
    int rc = CUDA_CALL(cudaStreamSynchronize(u->stream));
    u->wait_ms += now_ms() - t;
    release_slots(u);
    if (!status)
        status = u->status ? u->status : rc;
    if (status) {
        cudaFree(u->d);
        u->d = NULL;
    }
    return status;
}

void upload_init(struct upload *u, struct job *j, int accepts)
{
    memset(u, 0, sizeof *u);
    u->job = j;
    u->accepts = accepts;
    pthread_mutex_init(&u->lock, NULL);
    pthread_cond_init(&u->freed, NULL);
    u->sink = (struct gc_sink){ accept_payload, take_slot, put_slice, finish,
                                UPLOAD_SLOT_BYTES, u };
}

void *upload_take(struct upload *u)
{
    void *d = u->d;
    u->d = NULL;
    if (d) {
        u->job->rep.h2d_ms += u->wait_ms;
        u->job->rep.uploaded_while_read++;
    }
    return d;
}

void upload_release(struct upload *u)
{
    release_slots(u);
    if (u->d)
        cudaFree(u->d);
    u->d = NULL;
    pthread_mutex_destroy(&u->lock);
    pthread_cond_destroy(&u->freed);
}
