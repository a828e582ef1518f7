/* A format's payload in and out: size checks before anything is
 * allocated, exact reads that refuse trailing bytes, a pipe's large
 * payload read before it is trusted, and writes that a regular file takes
 * on several threads. */
#include "formats/payload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/parallel.h"
#include "core/pwrite.h"

int payload_memory_check(const struct gc_input *in, size_t bytes, const char *what)
{
    if (bytes < GC_MEM_CHECK_MIN)
        return 0;
    size_t avail = gc_host_memory_available();
    if (bytes <= avail)
        return 0;
    return gc_fail(GC_EXIT_INPUT, "%s: %s needs %.2f GiB of memory, but only %.2f GiB is "
                   "available", in->name, what, bytes / 1073741824.0, avail / 1073741824.0);
}

int payload_check_left(struct gc_input *in, size_t bytes, const char *what)
{
    off_t left = input_remaining(in);
    if (left >= 0 && (uint64_t)left < bytes)
        return gc_fail(GC_EXIT_INPUT, "%s: truncated: %s needs %zu bytes of data, found %jd",
                       in->name, what, bytes, (intmax_t)left);
    if (left >= 0 && (uint64_t)left > bytes)
        return gc_fail(GC_EXIT_INPUT, "%s: %jd trailing bytes after the data (%s, %zu bytes)",
                       in->name, (intmax_t)((uint64_t)left - bytes), what, bytes);
    return 0;
}

int payload_read_exact(struct gc_input *in, void *dst, size_t bytes, const char *what)
{
    int status = payload_check_left(in, bytes, what);
    if (status)
        return status;
    size_t got;
    status = input_read_payload(in, dst, bytes, &got);
    if (status)
        return status;
    if (got < bytes)
        return gc_fail(GC_EXIT_INPUT, "%s: truncated: %s needs %zu bytes of data, found %zu",
                       in->name, what, bytes, got);
    /* A pipe has no size to compare: look a little way past the end. */
    unsigned char extra[4096];
    status = input_read(in, extra, sizeof extra, &got);
    if (status)
        return status;
    if (got)
        return gc_fail(GC_EXIT_INPUT, "%s: %s%zu trailing bytes after the data (%s, %zu bytes)",
                       in->name, got == sizeof extra ? "at least " : "", got, what, bytes);
    return 0;
}

/* Above this, a payload from a pipe is read before it is trusted. */
#define PIPE_TRUST_BYTES ((size_t)64 << 20)

int payload_read_tensor(struct gc_input *in, struct gc_tensor *t, const struct gc_alloc *alloc,
                        const struct gc_sink *sink, const char *what)
{
    size_t bytes;
    int status;
    if (!gc_tensor_bytes(t, &bytes))
        return gc_fail(GC_EXIT_INPUT, "%s: %s is too large", in->name, what);
    if ((status = payload_check_left(in, bytes, what)))
        return status;
    /* The size was just checked, so only a file that shrinks meanwhile
     * comes up short. */
    if (sink && in->is_regular && bytes && sink->accept(sink->ctx, t, bytes)) {
        size_t got = 0;
        status = input_read_to_sink(in, sink, bytes, &got);
        if (!status && got < bytes)
            status = gc_fail(GC_EXIT_INPUT, "%s: truncated: %s needs %zu bytes of data, "
                             "found %zu", in->name, what, bytes, got);
        status = sink->finish(sink->ctx, status);
        t->data = NULL;
        t->alloc = NULL;
        return status;
    }
    if ((status = payload_memory_check(in, bytes, what)))
        return status;
    if (input_remaining(in) >= 0 || bytes <= PIPE_TRUST_BYTES) {
        if (gc_tensor_alloc(t, alloc) != 0)
            return gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes for %s", in->name,
                           bytes, what);
        if ((status = payload_read_exact(in, t->data, bytes, what)))
            gc_tensor_free(t);
        return status;
    }
    unsigned char *buf = NULL;
    size_t have = 0, cap = 0;
    while (have < bytes) {
        size_t next = cap == 0 ? PIPE_TRUST_BYTES : cap <= bytes / 2 ? cap * 2 : bytes;
        unsigned char *nb = realloc(buf, next);
        if (!nb) {
            status = gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes for %s", in->name,
                             next, what);
            break;
        }
        buf = nb;
        cap = next;
        size_t got;
        if ((status = input_read(in, buf + have, cap - have, &got)))
            break;
        have += got;
        if (have < cap) {
            status = gc_fail(GC_EXIT_INPUT, "%s: truncated: %s needs %zu bytes of data, "
                             "found %zu", in->name, what, bytes, have);
            break;
        }
    }
    /* Nothing more may follow. */
    if (!status)
        status = payload_read_exact(in, NULL, 0, what);
    if (!status && (!alloc || alloc == &gc_alloc_malloc)) {
        t->data = buf;
        t->alloc = &gc_alloc_malloc;
        return 0;
    }
    if (!status && gc_tensor_alloc(t, alloc) != 0)
        status = gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes for %s", in->name,
                         bytes, what);
    if (!status)
        memcpy(t->data, buf, bytes);
    free(buf);
    return status;
}

int write_all(FILE *f, const char *name, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, f) != n)
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name, strerror(errno));
    return 0;
}

/* f's descriptor when it is a regular file that pwrite can place bytes in
 * (with O_APPEND the kernel ignores the offset), else -1. */
static int pwrite_fd(FILE *f)
{
    struct stat st;
    int fd = fileno(f);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    int fl = fcntl(fd, F_GETFL);
    return fl == -1 || (fl & O_APPEND) ? -1 : fd;
}

int write_payload(FILE *f, const char *name, const void *p, size_t n, int threads)
{
    int fd = n >= PWRITE_PARALLEL_MIN ? pwrite_fd(f) : -1;
    if (threads <= 0)
        threads = parallel_default_threads();
    if (fd < 0 || threads < 2)
        return write_all(f, name, p, n);
    /* What the FILE holds goes first; then its position is the offset. */
    if (fflush(f) != 0)
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name, strerror(errno));
    off_t start = ftello(f);
    if (start < 0)
        return write_all(f, name, p, n);
    int err = pwrite_parallel(fd, p, n, start, threads);
    if (err)
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name, strerror(err));
    if (fseeko(f, start + (off_t)n, SEEK_SET) != 0)
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name, strerror(errno));
    return 0;
}

int write_c_order(FILE *f, const char *name, const struct gc_tensor *t, int threads)
{
    size_t es = gc_dtypes[t->dtype].size, bytes;
    if (!gc_tensor_bytes(t, &bytes))
        return gc_fail(GC_EXIT_OUTPUT, "%s: tensor too large", name);
    if (!gc_tensor_column_major(t))
        return write_payload(f, name, t->data, bytes, threads);
    if (t->ndim != 2) {
        /* Rare (an N-D Fortran-order .npy written raw): convert first. */
        struct gc_tensor c;
        if (gc_tensor_convert(t, -1, NULL, &c) != 0)
            return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", name);
        int status = write_payload(f, name, c.data, bytes, threads);
        gc_tensor_free(&c);
        return status;
    }
    /* Column-major storage goes out in panels of whole rows, each gathered
     * with short strided reads. */
    size_t rows = t->shape[0], cols = t->shape[1];
    size_t row_bytes = cols * es, panel = ((size_t)4 << 20) / row_bytes;
    panel = panel < 1 ? 1 : panel > 64 ? 64 : panel;
    unsigned char *buf = malloc(panel * row_bytes);
    if (!buf)
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", name);
    const unsigned char *src = t->data;
    int status = 0;
    for (size_t r0 = 0; r0 < rows && !status; r0 += panel) {
        size_t nr = rows - r0 < panel ? rows - r0 : panel;
        for (size_t c = 0; c < cols; c++)
            for (size_t r = 0; r < nr; r++)
                memcpy(buf + r * row_bytes + c * es, src + (c * rows + r0 + r) * es, es);
        status = write_all(f, name, buf, nr * row_bytes);
    }
    free(buf);
    return status;
}
