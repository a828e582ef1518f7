/* Inputs: a file, a pipe or stdin, read through a small look-ahead buffer
 * so that formats can be detected from their first bytes even on a pipe;
 * PATH:NAME, an archive's member, split from the path; a member's bytes
 * read as an input of their own. */
#include "formats/format.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/parallel.h"

/* A payload this large from a regular file is read by several threads:
 * from the page cache one thread is bound by the page faults on the fresh
 * destination, not by the copy, so threads that each fault in their own
 * slices read several times faster.  Slices are handed out in turn, so
 * that a slow slice holds up no others, and a few MiB long, so that each
 * pread is long enough to cost little. */
#define PREAD_MIN ((size_t)16 << 20)
#define PREAD_SLICE ((size_t)4 << 20)
/* Per file, so that operands read side by side (src/job/io.c) do not
 * multiply into a thread per core each. */
#define PREAD_THREADS_MAX 8

/* Whether `path` is an existing file that may hold an archive: named
 * *.npz, or a regular file that begins as a zip archive does. */
static int archive_file(const char *path)
{
    struct stat st;
    size_t len = strlen(path);
    if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
        return 0;
    if (len > 4 && strcasecmp(path + len - 4, ".npz") == 0)
        return 1;
    unsigned char head[4];
    int fd = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return 0;
    ssize_t got = pread(fd, head, sizeof head, 0);
    close(fd);
    return got == 4 && head[0] == 'P' && head[1] == 'K' &&
           ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

/* The length of PATH in PATH:NAME, or 0 when `path` is to be opened whole
 * (the rule is input_open's, in format.h). */
static size_t member_split(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) == 0)
        return 0;
    size_t len = strlen(path);
    char *left = malloc(len + 1);
    if (!left)
        return 0;
    memcpy(left, path, len + 1);
    size_t split = 0;
    for (size_t i = len; i-- > 0 && !split;) {
        if (path[i] != ':')
            continue;
        left[i] = '\0';
        if (i > 0 && (strcmp(left, "-") == 0 || archive_file(left)))
            split = i;
    }
    free(left);
    return split;
}

int input_is_stdin(const char *path)
{
    return strcmp(path, "-") == 0 || (member_split(path) == 1 && path[0] == '-');
}

int input_stat(const char *path, struct stat *st)
{
    size_t split = member_split(path);
    if (!split)
        return stat(path, st);
    char *file = strndup(path, split);
    if (!file) {
        errno = ENOMEM;
        return -1;
    }
    int rc = strcmp(file, "-") == 0 ? fstat(STDIN_FILENO, st) : stat(file, st);
    free(file);
    return rc;
}

int input_open(struct gc_input *in, const char *path)
{
    struct stat st;
    memset(in, 0, sizeof *in);
    in->path = path;
    size_t split = member_split(path);
    if (split) {
        if (!(in->path_copy = strndup(path, split)))
            return gc_fail(GC_EXIT_INPUT, "%s: out of memory", path);
        in->path = in->path_copy;
        in->member = path + split + 1;
    }
    in->name = gc_display_name(in->path, 0);
    in->size = -1;
    if (strcmp(in->path, "-") == 0) {
        in->fd = STDIN_FILENO;
    } else {
        in->fd = open(in->path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            int status = gc_fail(GC_EXIT_INPUT, "%s: cannot open: %s", in->name,
                                 strerror(errno));
            input_close(in);
            return status;
        }
    }
    if (fstat(in->fd, &st) != 0) {
        int status = gc_fail(GC_EXIT_INPUT, "%s: cannot stat: %s", in->name, strerror(errno));
        input_close(in);
        return status;
    }
    if (S_ISDIR(st.st_mode)) {
        int status = gc_fail(GC_EXIT_INPUT, "%s: is a directory", in->name);
        input_close(in);
        return status;
    }
    /* A device has no end to read to (/dev/zero, /dev/urandom, a disk):
     * only a terminal, where a user types the matrix, is read. */
    if ((S_ISCHR(st.st_mode) && !isatty(in->fd)) || S_ISBLK(st.st_mode)) {
        int status = gc_fail(GC_EXIT_INPUT, "%s: is a %s device, not a file or a pipe",
                             in->name, S_ISBLK(st.st_mode) ? "block" : "character");
        input_close(in);
        return status;
    }
    in->is_regular = S_ISREG(st.st_mode);
    if (in->is_regular)
        in->size = st.st_size;
    return 0;
}

void input_from_source(struct gc_input *in, const char *name,
                       int (*source)(void *ctx, unsigned char *dst, size_t n, size_t *got),
                       void *ctx, int64_t bytes)
{
    memset(in, 0, sizeof *in);
    in->path = in->name = name;
    in->fd = -1;
    in->size = -1;
    in->source = source;
    in->source_ctx = ctx;
    in->source_left = bytes;
}

void input_close(struct gc_input *in)
{
    if (in->source_end)
        in->source_end(in->source_ctx);
    in->source = NULL;
    in->source_end = NULL;
    in->source_ctx = NULL;
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
    free(in->buf);
    in->buf = NULL;
    in->buf_pos = in->buf_len = in->buf_cap = 0;
    if (in->archive_free)
        in->archive_free(in->archive);
    in->archive = NULL;
    in->archive_free = NULL;
    free(in->path_copy);
    in->path_copy = NULL;
}

/* read(2), or the input's source, until `n` bytes or end of input. */
static int read_fd(struct gc_input *in, unsigned char *dst, size_t n, size_t *got)
{
    size_t done = 0;
    while (in->source && done < n && !in->eof) {
        size_t r;
        int status = in->source(in->source_ctx, dst + done, n - done, &r);
        if (in->source_left >= (int64_t)r)
            in->source_left -= (int64_t)r;
        if (status) {
            *got = done;
            return status;
        }
        in->eof = r == 0;
        done += r;
    }
    while (!in->source && done < n && !in->eof) {
        size_t chunk = n - done < ((size_t)1 << 30) ? n - done : (size_t)1 << 30;
        ssize_t r = read(in->fd, dst + done, chunk);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *got = done;
            return gc_fail(GC_EXIT_INPUT, "%s: read error: %s", in->name, strerror(errno));
        }
        if (r == 0)
            in->eof = 1;
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

int input_peek(struct gc_input *in, size_t want, const unsigned char **p, size_t *got)
{
    size_t have = in->buf_len - in->buf_pos;
    if (have < want && !in->eof) {
        if (in->buf_pos > 0) {
            memmove(in->buf, in->buf + in->buf_pos, have);
            in->buf_pos = 0;
            in->buf_len = have;
        }
        if (in->buf_cap < want) {
            unsigned char *nb = realloc(in->buf, want);
            if (!nb)
                return gc_fail(GC_EXIT_INPUT, "%s: out of memory", in->name);
            in->buf = nb;
            in->buf_cap = want;
        }
        size_t n;
        int status = read_fd(in, in->buf + in->buf_len, want - have, &n);
        in->buf_len += n;
        if (status)
            return status;
        have = in->buf_len - in->buf_pos;
    }
    *p = in->buf ? in->buf + in->buf_pos : (const unsigned char *)"";
    *got = have < want ? have : want;
    return 0;
}

int input_read(struct gc_input *in, void *dst, size_t n, size_t *got)
{
    *got = 0;
    if (n == 0)
        return 0;
    size_t have = in->buf_len - in->buf_pos, from_buf = have < n ? have : n;
    if (from_buf) {
        memcpy(dst, in->buf + in->buf_pos, from_buf);
        in->buf_pos += from_buf;
    }
    size_t rest = 0;
    int status = read_fd(in, (unsigned char *)dst + from_buf, n - from_buf, &rest);
    *got = from_buf + rest;
    return status;
}

struct pread_job {
    int fd;
    unsigned char *dst;       /* the destination, or NULL for the sink's slots */
    const struct gc_sink *sink;
    off_t start;              /* the file offset of byte 0 */
    size_t n, slice, slices;
    atomic_size_t next;       /* the next slice to hand out */
    pthread_mutex_t lock;     /* guards the three fields below */
    size_t short_at;          /* the first byte not read; n when none is missing */
    int err;                  /* errno of the first failed pread, else 0 */
    int status;               /* the sink's first failure, else 0 */
};

/* A slice ends short at `at`, with errno `err` or at the end of the file
 * (err 0, the file shrank), or the sink failed (`status`); no more slices
 * are handed out. */
static void pread_stop(struct pread_job *j, size_t at, int err, int status)
{
    pthread_mutex_lock(&j->lock);
    if (at < j->short_at)
        j->short_at = at;
    if (err && !j->err)
        j->err = err;
    if (status && !j->status)
        j->status = status;
    pthread_mutex_unlock(&j->lock);
    atomic_store(&j->next, j->slices);
}

/* Fills len bytes at dst from file offset `at`; returns how many. */
static size_t pread_fill(struct pread_job *j, unsigned char *dst, size_t at, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(j->fd, dst + done, len - done, j->start + (off_t)(at + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            pread_stop(j, at + done, r < 0 ? errno : 0, 0);
            break;
        }
        done += (size_t)r;
    }
    return done;
}

static void pread_slices(void *arg, size_t begin, size_t end)
{
    struct pread_job *j = arg;
    const struct gc_sink *k = j->sink;
    size_t s;
    (void)begin, (void)end;
    while ((s = atomic_fetch_add(&j->next, 1)) < j->slices) {
        size_t at = s * j->slice;
        size_t len = j->n - at < j->slice ? j->n - at : j->slice;
        if (j->dst) {
            pread_fill(j, j->dst + at, at, len);
            continue;
        }
        unsigned char *buf = k->slot(k->ctx);
        if (!buf) {
            pread_stop(j, at, 0, GC_EXIT_INPUT);
            break;
        }
        size_t done = pread_fill(j, buf, at, len);
        int status = k->put(k->ctx, buf, at, done == len ? len : 0);
        if (status)
            pread_stop(j, at, 0, status);
    }
}

/* Threads for reading n bytes at the descriptor's offset; 1: read(2). */
static int pread_threads(const struct gc_input *in, size_t n)
{
    if (!in->is_regular || n < PREAD_MIN)
        return 1;
    int threads = in->threads > 0 ? in->threads : parallel_default_threads();
    size_t slices = (n + PREAD_SLICE - 1) / PREAD_SLICE;
    if (threads > PREAD_THREADS_MAX)
        threads = PREAD_THREADS_MAX;
    return (size_t)threads > slices ? (int)slices : threads;
}

/* Reads n bytes from file offset `start` with pread on `threads` threads
 * into dst, or into the sink's slots when dst is NULL, then leaves the
 * offset after what was read, as read(2) would. */
static int read_parallel(struct gc_input *in, unsigned char *dst, const struct gc_sink *sink,
                         size_t n, off_t start, int threads, size_t *got)
{
    size_t slice = dst ? PREAD_SLICE : sink->slot_bytes;
    struct pread_job j = { .fd = in->fd, .dst = dst, .sink = sink, .start = start, .n = n,
                           .slice = slice, .slices = (n + slice - 1) / slice, .short_at = n };
    atomic_init(&j.next, 0);
    pthread_mutex_init(&j.lock, NULL);
    if (threads > 1)
        parallel_for(threads, (size_t)threads, 1, pread_slices, &j);
    else
        pread_slices(&j, 0, 1);
    pthread_mutex_destroy(&j.lock);
    /* Every slice before short_at was handed out and finished whole. */
    *got = j.short_at;
    if (j.short_at < n)
        in->eof = 1;
    if (lseek(in->fd, start + (off_t)j.short_at, SEEK_SET) < 0 && !j.err)
        j.err = errno;
    if (j.status)
        return j.status;
    if (j.err)
        return gc_fail(GC_EXIT_INPUT, "%s: read error: %s", in->name, strerror(j.err));
    return 0;
}

int input_read_payload(struct gc_input *in, void *dst, size_t n, size_t *got)
{
    size_t have = in->buf_len - in->buf_pos, from_buf = have < n ? have : n;
    int threads = pread_threads(in, n - from_buf);
    off_t start = threads > 1 ? lseek(in->fd, 0, SEEK_CUR) : -1;
    if (start < 0)
        return input_read(in, dst, n, got);
    if (from_buf) {
        memcpy(dst, in->buf + in->buf_pos, from_buf);
        in->buf_pos += from_buf;
    }
    size_t rest = 0;
    int status = read_parallel(in, (unsigned char *)dst + from_buf, NULL, n - from_buf, start,
                               threads, &rest);
    *got = from_buf + rest;
    return status;
}

int input_read_to_sink(struct gc_input *in, const struct gc_sink *sink, size_t n, size_t *got)
{
    /* Bytes already buffered are read again from the file, so that every
     * slice lies at a slot's start. */
    size_t have = in->buf_len - in->buf_pos;
    off_t pos = lseek(in->fd, 0, SEEK_CUR);
    *got = 0;
    if (pos < 0 || (uint64_t)pos < have)
        return gc_fail(GC_EXIT_INPUT, "%s: cannot seek: %s", in->name,
                       pos < 0 ? strerror(errno) : "the position went back");
    in->buf_pos = in->buf_len;
    int threads = pread_threads(in, n);
    return read_parallel(in, NULL, sink, n, pos - (off_t)have, threads, got);
}

/* The buffer always has one spare byte after the data, set to NUL, so that
 * text parsers can rely on a terminator. */
int input_slurp(struct gc_input *in, unsigned char **data, size_t *len)
{
    off_t left = input_remaining(in);
    size_t cap = left >= 0 && (uint64_t)left < SIZE_MAX ? (size_t)left + 1 : (size_t)1 << 20;
    size_t n = 0, got;
    int status;
    unsigned char *buf = malloc(cap);
    if (!buf)
        return gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes", in->name, cap);
    for (;;) {
        status = input_read(in, buf + n, cap - 1 - n, &got);
        n += got;
        if (status || in->eof)
            break;
        /* Full: a one-byte read tells the end of a file of the expected
         * size from one that grew or a pipe with more to come. */
        unsigned char extra;
        status = input_read(in, &extra, 1, &got);
        if (status || got == 0)
            break;
        if (cap * 2 >= GC_MEM_CHECK_MIN && cap * 2 > gc_host_memory_available()) {
            status = gc_fail(GC_EXIT_INPUT, "%s: more than %.2f GiB of input, more than the "
                             "memory available", in->name, cap / 1073741824.0);
            break;
        }
        unsigned char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!nb) {
            status = gc_fail(GC_EXIT_INPUT, "%s: cannot allocate more than %zu bytes",
                             in->name, cap);
            break;
        }
        buf = nb;
        cap *= 2;
        buf[n++] = extra;
    }
    if (status) {
        free(buf);
        return status;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

off_t input_remaining(const struct gc_input *in)
{
    if (in->source)
        return in->source_left < 0 ? -1
                                   : (off_t)in->source_left + (off_t)(in->buf_len - in->buf_pos);
    if (!in->is_regular)
        return -1;
    off_t pos = lseek(in->fd, 0, SEEK_CUR);
    if (pos < 0)
        return -1;
    off_t left = in->size - pos;
    return (left > 0 ? left : 0) + (off_t)(in->buf_len - in->buf_pos);
}
