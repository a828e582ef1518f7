/* The format table, format detection and the payload helpers the binary
 * formats share. */
#include "formats/format_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/parallel.h"

const struct gc_format gc_formats[GC_FMT_COUNT] = {
    [GC_FMT_NPY] = { "npy", ".npy",
                     "NumPy .npy, versions 1.0-3.0, any numeric dtype, C or Fortran order",
                     npy_probe, npy_read, npy_write, npy_info, npy_write_header, GC_MAX_DIMS,
                     FORMAT_BINARY | FORMAT_AT_OFFSETS | FORMAT_VERSIONED,
                     /* NumPy has no bfloat16 */
                     GC_DTYPES_ALL & ~(1u << GC_BF16) },
    [GC_FMT_RAW] = { "raw", ".bin .raw",
                     "raw little-endian elements; --shape, --in-dtype and --order describe them",
                     NULL, raw_read, raw_write, raw_info, raw_write_header, GC_MAX_DIMS,
                     FORMAT_BINARY | FORMAT_AT_OFFSETS, GC_DTYPES_ALL },
    [GC_FMT_CSV] = { "csv", ".csv",
                     "text, one row per line, like numpy.loadtxt/savetxt",
                     csv_probe, csv_read, csv_write, csv_info, NULL, 2, 0, GC_DTYPES_ALL },
    [GC_FMT_CSV_GZ] = { "csv.gz", ".csv.gz .gz",
                        "gzip-compressed CSV (multi-member streams accepted)",
                        csv_gz_probe, csv_gz_read, csv_gz_write, csv_gz_info, NULL, 2,
                        FORMAT_BINARY, GC_DTYPES_ALL },
};

int format_can(int format, unsigned caps)
{
    return format >= 0 && format < GC_FMT_COUNT && (gc_formats[format].caps & caps) == caps;
}

int format_holds(int format, enum gc_dtype dtype)
{
    return format >= 0 && format < GC_FMT_COUNT && (gc_formats[format].dtypes >> dtype & 1u);
}

static const struct { const char *name; enum gc_format_id id; } format_aliases[] = {
    { "bin", GC_FMT_RAW }, { "gz", GC_FMT_CSV_GZ }, { "csvgz", GC_FMT_CSV_GZ },
};

int format_by_name(const char *name)
{
    if (name[0] == '.')
        name++;
    for (int i = 0; i < GC_FMT_COUNT; i++)
        if (strcasecmp(name, gc_formats[i].name) == 0)
            return i;
    for (size_t i = 0; i < sizeof format_aliases / sizeof format_aliases[0]; i++)
        if (strcasecmp(name, format_aliases[i].name) == 0)
            return (int)format_aliases[i].id;
    return -1;
}

/* The longest matching extension wins: "x.csv.gz" is gzip CSV, not just
 * something ending in ".gz". */
int format_by_extension(const char *path)
{
    size_t plen = strlen(path), best_len = 0;
    int best = -1;
    for (int i = 0; i < GC_FMT_COUNT; i++) {
        const char *e = gc_formats[i].extensions;
        while (*e) {
            size_t elen = strcspn(e, " ");
            if (elen <= plen && elen > best_len && strncasecmp(path + plen - elen, e, elen) == 0) {
                best = i;
                best_len = elen;
            }
            e += elen;
            e += strspn(e, " ");
        }
    }
    return best;
}

int format_detect(struct gc_input *in, int announce)
{
    const unsigned char *head;
    size_t n;
    if (input_peek(in, 512, &head, &n) != 0)
        return -1;
    /* Only a long magic decides before the name: gzip's three bytes are
     * also the first float of some raw files. */
    for (int i = 0; i < GC_FMT_COUNT; i++)
        if (gc_formats[i].probe && gc_formats[i].probe(head, n) == PROBE_MAGIC)
            return i;
    if (strcmp(in->path, "-") != 0) {
        int by_ext = format_by_extension(in->path);
        if (by_ext >= 0)
            return by_ext;
    }
    int fmt = GC_FMT_RAW;
    const char *why = "neither gzip nor text";
    for (int i = 0; i < GC_FMT_COUNT && fmt == GC_FMT_RAW; i++)
        if (gc_formats[i].probe && gc_formats[i].probe(head, n) == PROBE_LOOKS) {
            fmt = i;
            why = i == GC_FMT_CSV_GZ ? "gzip magic bytes" : "text";
        }
    if (announce)
        gc_note("%s: read as %s (%s; %s); --in-format chooses", in->name, gc_formats[fmt].name,
                why, strcmp(in->path, "-") == 0 ? "no file name to go by"
                                                : "no extension gemmcli knows");
    return fmt;
}

int format_read_path(const char *path, int fmt, const struct gc_read_opts *o,
                     struct gc_tensor *t, int *read_as)
{
    struct gc_input in;
    int status = input_open(&in, path);
    if (status)
        return status;
    in.threads = o ? o->threads : 0;
    if (fmt < 0)
        fmt = format_detect(&in, o && o->announce);
    if (fmt < 0 || fmt >= GC_FMT_COUNT)
        status = fmt < 0 ? GC_EXIT_INPUT : gc_fail(GC_EXIT_INPUT, "%s: unknown format", in.name);
    else
        status = gc_formats[fmt].read(&in, o, t);
    if (read_as)
        *read_as = fmt;
    input_close(&in);
    return status;
}

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

/* A payload this large bound for a regular file is written by several
 * threads with pwrite, each on slices of a few MiB handed out in turn. */
#define PWRITE_MIN ((size_t)16 << 20)
#define PWRITE_SLICE ((size_t)4 << 20)
/* A buffered write holds the file's inode lock for its copy in ext4, XFS
 * and tmpfs: past a few writers, more only queue there. */
#define PWRITE_THREADS_MAX 4

struct pwrite_job {
    int fd;
    const unsigned char *src;
    off_t start;              /* the file offset of src[0] */
    size_t n, slices;
    atomic_size_t next;       /* the next slice to hand out */
    atomic_int err;           /* errno of the first failure (-1: no progress), else 0 */
};

static void pwrite_slices(void *arg, size_t begin, size_t end)
{
    struct pwrite_job *j = arg;
    size_t s;
    (void)begin, (void)end;
    while ((s = atomic_fetch_add(&j->next, 1)) < j->slices) {
        size_t at = s * PWRITE_SLICE;
        size_t stop = j->n - at < PWRITE_SLICE ? j->n : at + PWRITE_SLICE;
        while (at < stop) {
            ssize_t w = pwrite(j->fd, j->src + at, stop - at, j->start + (off_t)at);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                int none = 0;
                atomic_compare_exchange_strong(&j->err, &none, w < 0 ? errno : -1);
                atomic_store(&j->next, j->slices);
                break;
            }
            at += (size_t)w;
        }
    }
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
    size_t slices = (n + PWRITE_SLICE - 1) / PWRITE_SLICE;
    int fd = n >= PWRITE_MIN ? pwrite_fd(f) : -1;
    if (threads <= 0)
        threads = parallel_default_threads();
    if (threads > PWRITE_THREADS_MAX)
        threads = PWRITE_THREADS_MAX;
    if (fd < 0 || threads < 2)
        return write_all(f, name, p, n);
    if ((size_t)threads > slices)
        threads = (int)slices;
    /* What the FILE holds goes first; then its position is the offset. */
    if (fflush(f) != 0)
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name, strerror(errno));
    off_t start = ftello(f);
    if (start < 0)
        return write_all(f, name, p, n);
    struct pwrite_job j = { .fd = fd, .src = p, .start = start, .n = n, .slices = slices };
    atomic_init(&j.next, 0);
    atomic_init(&j.err, 0);
    parallel_for(threads, (size_t)threads, 1, pwrite_slices, &j);
    int err = atomic_load(&j.err);
    if (err)
        return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name,
                       err > 0 ? strerror(err) : "no progress");
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
