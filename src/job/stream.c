#include "src/job/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/parallel.h"
#include "src/job/report.h"

#define CHUNK_BYTES ((size_t)16 << 20)
/* Writer threads for a regular file.  A buffered write holds the file's
 * inode lock for its copy in ext4, XFS and tmpfs: past a few writers, more
 * only queue there. */
#define WRITERS_MAX 4
/* Two slots more than writers: while every writer is busy, one chunk waits
 * for the next writer to be free and the next is being copied. */
#define SLOTS_MAX (WRITERS_MAX + 2)

/* A page-locked staging buffer and the chunk it holds. */
struct slot {
    unsigned char *buf;
    cudaEvent_t copied;
    off_t at;                 /* the chunk's offset in the file */
    size_t len;
    int busy;                 /* queued or being written: not to be refilled */
};

int stream_can_write(int fmt, enum gc_dtype dt, enum gc_dtype wanted)
{
    return fmt >= 0 && fmt < GC_FMT_COUNT && gc_formats[fmt].write_header && dt == wanted;
}

static int write_fd(int fd, const char *name, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name,
                           w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static size_t chunk_len(size_t bytes, size_t i)
{
    size_t off = i * CHUNK_BYTES;
    return bytes - off < CHUNK_BYTES ? bytes - off : CHUNK_BYTES;
}

/* In order, for a pipe: chunk i goes device -> slot i % 2 on the stream,
 * then out to the descriptor once its event fires, while chunk i + 1 is
 * being copied. */
static int pump(struct gc_device *dev, const unsigned char *d, size_t bytes, int fd,
                const char *name, struct slot *slots, double *d2h_ms, double *write_ms)
{
    size_t n_chunks = (bytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
    int rc = 0;
    for (size_t i = 0; i <= n_chunks && !rc; i++) {
        if (i < n_chunks) {
            struct slot *s = &slots[i % 2];
            if ((rc = CUDA_CALL(cudaMemcpyAsync(s->buf, d + i * CHUNK_BYTES,
                                                chunk_len(bytes, i), cudaMemcpyDeviceToHost,
                                                dev->stream))) ||
                (rc = CUDA_CALL(cudaEventRecord(s->copied, dev->stream))))
                break;
        }
        if (i > 0) {
            struct slot *s = &slots[(i - 1) % 2];
            double t = now_ms();
            if ((rc = CUDA_CALL(cudaEventSynchronize(s->copied))))
                break;
            double t2 = now_ms();
            *d2h_ms += t2 - t;
            rc = write_fd(fd, name, s->buf, chunk_len(bytes, i - 1));
            *write_ms += now_ms() - t2;
        }
    }
    return rc;
}

/* ---- a regular file: chunks written at their offsets by writer threads ----
 *
 * This thread alone makes CUDA calls: it copies each chunk into a free slot,
 * waits for the copy and queues the slot; writers take queued slots in
 * order, pwrite them and mark them free.  A slot is refilled only once its
 * write has finished, and the staging buffers are freed only after every
 * writer has been joined. */

struct writers {
    int fd;
    struct slot *slots;
    int n_slots;
    pthread_mutex_t lock;     /* guards everything below and every slot's busy */
    pthread_cond_t posted;    /* a slot was queued, or closing was set */
    pthread_cond_t written;   /* a slot's write finished */
    int queue[SLOTS_MAX];     /* queued slots, oldest at head */
    int head, count;
    int closing;              /* nothing more will be queued */
    int cancelled;            /* the copies failed: queued slots are dropped */
    int err;                  /* errno of the first failed write (-1: no progress), else 0 */
};

/* Returns 0, or errno of the failure (-1 when pwrite made no progress). */
static int pwrite_all(int fd, const unsigned char *p, size_t n, off_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : -1;
        p += w;
        at += w;
        n -= (size_t)w;
    }
    return 0;
}

static void *writer_main(void *arg)
{
    struct writers *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->count && !w->closing)
            pthread_cond_wait(&w->posted, &w->lock);
        if (!w->count)
            break;
        struct slot *s = &w->slots[w->queue[w->head]];
        w->head = (w->head + 1) % SLOTS_MAX;
        w->count--;
        /* After a failure the output is abandoned: nothing more is written. */
        int skip = w->err || w->cancelled;
        pthread_mutex_unlock(&w->lock);
        int err = skip ? 0 : pwrite_all(w->fd, s->buf, s->len, s->at);
        pthread_mutex_lock(&w->lock);
        if (err && !w->err)
            w->err = err;
        s->busy = 0;
        pthread_cond_signal(&w->written);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Waits for a free slot and returns its number, or -1 once a write has
 * failed. */
static int slot_take(struct writers *w)
{
    int k = 0;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (k < w->n_slots && w->slots[k].busy)
            k++;
        if (w->err || k < w->n_slots)
            break;
        pthread_cond_wait(&w->written, &w->lock);
        k = 0;
    }
    if (w->err)
        k = -1;
    pthread_mutex_unlock(&w->lock);
    return k;
}

static void slot_post(struct writers *w, int i)
{
    pthread_mutex_lock(&w->lock);
    w->slots[i].busy = 1;
    w->queue[(w->head + w->count) % SLOTS_MAX] = i;
    w->count++;
    pthread_cond_signal(&w->posted);
    pthread_mutex_unlock(&w->lock);
}

/* Copies each chunk into a free slot and queues it for the writers.
 * Returns a CUDA failure's status; a write error is left in w->err. */
static int feed(struct gc_device *dev, const unsigned char *d, size_t bytes, off_t start,
                struct writers *w, double *d2h_ms, double *write_ms)
{
    size_t n_chunks = (bytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
    int rc = 0;
    for (size_t i = 0; i < n_chunks; i++) {
        double t = now_ms();
        int k = slot_take(w);
        double t2 = now_ms();
        *write_ms += t2 - t;
        if (k < 0)
            break;
        struct slot *s = &w->slots[k];
        s->at = start + (off_t)(i * CHUNK_BYTES);
        s->len = chunk_len(bytes, i);
        if ((rc = CUDA_CALL(cudaMemcpyAsync(s->buf, d + i * CHUNK_BYTES, s->len,
                                            cudaMemcpyDeviceToHost, dev->stream))) ||
            (rc = CUDA_CALL(cudaEventRecord(s->copied, dev->stream))) ||
            (rc = CUDA_CALL(cudaEventSynchronize(s->copied))))
            break;
        *d2h_ms += now_ms() - t2;
        slot_post(w, k);
    }
    return rc;
}

/* Writes through `n_writers` threads; returns -1 without writing anything
 * when none could be started, so that the caller writes in order. */
static int pump_parallel(struct gc_device *dev, const unsigned char *d, size_t bytes, int fd,
                         off_t start, const char *name, struct slot *slots, int n_slots,
                         int n_writers, double *d2h_ms, double *write_ms)
{
    struct writers w = { .fd = fd, .slots = slots, .n_slots = n_slots };
    pthread_t tids[WRITERS_MAX];
    int started = 0;
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.posted, NULL);
    pthread_cond_init(&w.written, NULL);
    while (started < n_writers && pthread_create(&tids[started], NULL, writer_main, &w) == 0)
        started++;
    int rc = started ? feed(dev, d, bytes, start, &w, d2h_ms, write_ms) : -1;
    double t = now_ms();
    pthread_mutex_lock(&w.lock);
    w.closing = 1;
    w.cancelled = rc != 0;
    pthread_cond_broadcast(&w.posted);
    pthread_mutex_unlock(&w.lock);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    *write_ms += now_ms() - t;
    pthread_cond_destroy(&w.written);
    pthread_cond_destroy(&w.posted);
    pthread_mutex_destroy(&w.lock);
    if (!rc && w.err)
        rc = gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name,
                     w.err > 0 ? strerror(w.err) : "no progress");
    return rc;
}

/* Writer threads for `f`: none unless it is a regular file that pwrite can
 * place bytes in (with O_APPEND the kernel ignores the offset) and the
 * result spans several chunks. */
static int writers_for(FILE *f, size_t n_chunks)
{
    struct stat st;
    int fd = fileno(f), fl;
    if (n_chunks < 2 || fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (fl = fcntl(fd, F_GETFL)) == -1 || (fl & O_APPEND))
        return 0;
    int n = parallel_default_threads();
    n = n > WRITERS_MAX ? WRITERS_MAX : n;
    return (size_t)n > n_chunks ? (int)n_chunks : n;
}

/* The header, then the payload in order (pipes) or by writer threads
 * (regular files), the FILE left positioned after it either way. */
static int write_result(struct gc_output *out, int fmt, struct gc_device *dev,
                        const unsigned char *d, const struct gc_tensor *shape, size_t bytes,
                        struct slot *slots, int n_slots, int n_writers, double *d2h_ms,
                        double *write_ms)
{
    int rc;
    double t = now_ms();
    if ((rc = gc_formats[fmt].write_header(out->f, out->name, shape)))
        return rc;
    if (fflush(out->f) != 0)
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", out->name, strerror(errno));
    off_t start = n_writers ? ftello(out->f) : -1;
    *write_ms += now_ms() - t;
    int fd = fileno(out->f);
    if (start >= 0) {
        rc = pump_parallel(dev, d, bytes, fd, start, out->name, slots, n_slots, n_writers,
                           d2h_ms, write_ms);
        if (rc == 0 && fseeko(out->f, start + (off_t)bytes, SEEK_SET) != 0)
            rc = gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", out->name, strerror(errno));
        if (rc != -1)
            return rc;
    }
    return pump(dev, d, bytes, fd, out->name, slots, d2h_ms, write_ms);
}

int stream_write_result(struct gc_output *out, int fmt, struct gc_device *dev,
                        const void *d, const struct gc_tensor *shape, double *d2h_ms,
                        double *write_ms)
{
    size_t bytes;
    if (!gc_tensor_bytes(shape, &bytes))
        return gc_fail(GC_EXIT_OUTPUT, "%s: result too large", out->name);
    size_t n_chunks = (bytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
    int n_writers = writers_for(out->f, n_chunks);
    /* The in-order pump needs two slots, also when no writer starts. */
    int n_slots = n_writers ? n_writers + 2 : 2;
    if (n_writers && (size_t)n_slots > n_chunks)
        n_slots = (int)n_chunks;
    size_t slot_bytes = bytes < CHUNK_BYTES ? (bytes ? bytes : 1) : CHUNK_BYTES;
    struct slot slots[SLOTS_MAX];
    memset(slots, 0, sizeof slots);
    int rc = 0;
    double t = now_ms();
    for (int i = 0; i < n_slots && !rc; i++)
        if (!(rc = CUDA_CALL(cudaMallocHost((void **)&slots[i].buf, slot_bytes))))
            rc = CUDA_CALL(cudaEventCreateWithFlags(&slots[i].copied, cudaEventDisableTiming));
    *write_ms += now_ms() - t;
    if (!rc)
        rc = write_result(out, fmt, dev, d, shape, bytes, slots, n_slots, n_writers, d2h_ms,
                          write_ms);
    for (int i = 0; i < n_slots; i++) {
        if (slots[i].copied)
            cudaEventDestroy(slots[i].copied);
        cudaFreeHost(slots[i].buf);
    }
    return rc;
}
