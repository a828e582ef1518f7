/* zstd-compressed CSV and .npy: the CSV and .npy readers and writers on
 * bytes that libzstd decompresses and compresses.
 *
 * The library is loaded on first use (Debian's libzstd1, as
 * libzstd.so.1), as OpenBLAS is (kernels/reference/gemm_blas.c): the
 * binary builds and starts without it, and a .zst input or output fails,
 * saying so, where it cannot be loaded.  Only the stable streaming API is
 * used, declared here from zstd.h's documentation (1.4.0 or later).
 *
 * Reading: the frames of the input (one or several, skippable frames
 * skipped) are decompressed as the reader asks for bytes, through an
 * input of their own (gc_input.source), so that the reader's limits hold
 * as they do for a pipe: CSV is parsed a window at a time, and a .npy
 * payload is allocated from its header's shape, never from a size a frame
 * header claims, and must end where the data ends.  A truncated frame,
 * corrupt data, a bad checksum, bytes after the last frame that start no
 * frame, a frame needing a window above libzstd's default limit (128 MiB)
 * and an empty input are errors naming the file.
 *
 * Writing: the CSV or .npy writer writes into a stream (fopencookie) that
 * compresses into the output, one frame with a checksum, at --level (1 to
 * 19, default 3) on --threads workers where libzstd was built with them. */
#include "formats/format_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"

/* ---- libzstd: the few declarations used, from zstd.h ---- */

struct zstd_in_buffer {
    const void *src;
    size_t size, pos;
};

struct zstd_out_buffer {
    void *dst;
    size_t size, pos;
};

/* ZSTD_cParameter and ZSTD_EndDirective values. */
enum { ZSTD_C_LEVEL = 100, ZSTD_C_CHECKSUM = 201, ZSTD_C_WORKERS = 400 };
enum { ZSTD_E_CONTINUE = 0, ZSTD_E_END = 2 };

#define ZSTD_FRAME_MAGIC 0xFD2FB528u
/* Skippable frames: 0x184D2A50 to 0x184D2A5F. */
#define ZSTD_SKIP_MAGIC 0x184D2A50u
#define ZSTD_SKIP_MASK 0xFFFFFFF0u

struct zstd_lib {
    void *handle;
    unsigned (*is_error)(size_t);
    const char *(*error_name)(size_t);
    void *(*create_dstream)(void);
    size_t (*init_dstream)(void *);
    size_t (*decompress_stream)(void *, struct zstd_out_buffer *, struct zstd_in_buffer *);
    size_t (*free_dstream)(void *);
    void *(*create_cctx)(void);
    size_t (*free_cctx)(void *);
    size_t (*set_parameter)(void *, int, int);
    size_t (*compress_stream2)(void *, struct zstd_out_buffer *, struct zstd_in_buffer *, int);
    char why[320];      /* empty when loaded */
};

static struct zstd_lib zstd;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void zstd_load(void)
{
    zstd.handle = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!zstd.handle) {
        snprintf(zstd.why, sizeof zstd.why, "libzstd.so.1 could not be loaded (%s); on Debian it is "
                 "the package libzstd1", dlerror());
        return;
    }
    const struct { const char *name; void **slot; } syms[] = {
        { "ZSTD_isError", (void **)&zstd.is_error },
        { "ZSTD_getErrorName", (void **)&zstd.error_name },
        { "ZSTD_createDStream", (void **)&zstd.create_dstream },
        { "ZSTD_initDStream", (void **)&zstd.init_dstream },
        { "ZSTD_decompressStream", (void **)&zstd.decompress_stream },
        { "ZSTD_freeDStream", (void **)&zstd.free_dstream },
        { "ZSTD_createCCtx", (void **)&zstd.create_cctx },
        { "ZSTD_freeCCtx", (void **)&zstd.free_cctx },
        { "ZSTD_CCtx_setParameter", (void **)&zstd.set_parameter },
        { "ZSTD_compressStream2", (void **)&zstd.compress_stream2 },
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].slot = dlsym(zstd.handle, syms[i].name))) {
            snprintf(zstd.why, sizeof zstd.why, "the libzstd that was loaded has no %s (1.4.0 "
                     "or later is needed)", syms[i].name);
            return;
        }
}

/* The library, or NULL when it cannot be loaded (zstd.why says why). */
static const struct zstd_lib *zstd_lib(void)
{
    pthread_once(&zstd_once, zstd_load);
    return zstd.why[0] ? NULL : &zstd;
}

int zstd_ready(const char *name, int status)
{
    if (zstd_lib())
        return 0;
    return gc_fail(status, "%s: cannot %s zstd data: %s", name,
                   status == GC_EXIT_OUTPUT ? "write" : "read", zstd.why);
}

static uint32_t get_le32(const unsigned char *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int zstd_starts_frame(const unsigned char *p, size_t n)
{
    uint32_t m = n >= 4 ? get_le32(p) : 0;
    return m == ZSTD_FRAME_MAGIC || (m & ZSTD_SKIP_MASK) == ZSTD_SKIP_MAGIC;
}

int zstd_probe(const unsigned char *head, size_t n)
{
    return n >= 4 && get_le32(head) == ZSTD_FRAME_MAGIC ? PROBE_SHORT_MAGIC : PROBE_NO;
}

/* Enough to see a whole first block (at most 128 KiB) behind any frame
 * header. */
#define ZSTD_PEEK_MAX ((size_t)1 << 20)

int zstd_peek_npy(struct gc_input *in, int *npy)
{
    const struct zstd_lib *z = zstd_lib();
    *npy = -1;
    void *ds = z ? z->create_dstream() : NULL;
    if (!ds || z->is_error(z->init_dstream(ds))) {
        if (ds)
            z->free_dstream(ds);
        return 0;
    }
    unsigned char head[8];
    struct zstd_out_buffer out = { head, sizeof head, 0 };
    size_t used = 0, want = (size_t)4 << 10;
    int status = 0, bad = 0;
    for (;;) {
        const unsigned char *p;
        size_t n;
        if ((status = input_peek(in, want, &p, &n)))
            break;
        /* (input_peek keeps the bytes already seen at the same offsets) */
        struct zstd_in_buffer zin = { p, n, used };
        while (!bad && out.pos < out.size && zin.pos < zin.size)
            bad = z->is_error(z->decompress_stream(ds, &out, &zin)) != 0;
        used = zin.pos;
        if (bad || out.pos == out.size || n < want || want >= ZSTD_PEEK_MAX)
            break;
        want *= 2;
    }
    z->free_dstream(ds);
    if (!bad)
        *npy = npy_probe(head, out.pos) == PROBE_MAGIC;
    return status;
}

/* ---- reading: an input whose bytes are the frames' ---- */

#define ZSTD_IN_CHUNK ((size_t)256 << 10)

struct zstd_decoder {
    const struct zstd_lib *z;
    struct gc_input *from;
    void *ds;
    unsigned char *buf;       /* ZSTD_IN_CHUNK bytes */
    struct zstd_in_buffer zin;   /* buf[zin.pos, zin.size): read, not yet decompressed */
    uint64_t consumed;        /* compressed bytes before buf[0] */
    uint64_t frame_at;        /* where the current frame starts, for messages */
    int in_frame, from_eof;
};

static int zd_fail(const struct zstd_decoder *d, const char *why)
{
    return gc_fail(GC_EXIT_INPUT, "%s: %s (frame at byte %ju)", d->from->name, why,
                   (uintmax_t)d->frame_at);
}

/* At least `want` compressed bytes unread, unless the input ends first. */
static int zd_want(struct zstd_decoder *d, size_t want)
{
    size_t have = d->zin.size - d->zin.pos;
    if (have >= want || d->from_eof)
        return 0;
    memmove(d->buf, d->buf + d->zin.pos, have);
    d->consumed += d->zin.pos;
    d->zin.pos = 0;
    size_t got;
    int status = input_read(d->from, d->buf + have, ZSTD_IN_CHUNK - have, &got);
    d->zin.size = have + got;
    d->from_eof = got == 0;
    return status;
}

/* The start of the next frame: *more = 0 at the end of the data; bytes
 * that start no frame are an error. */
static int zd_next_frame(struct zstd_decoder *d, int *more)
{
    static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
    *more = 0;
    int status = zd_want(d, 4);
    if (status)
        return status;
    const unsigned char *p = d->buf + d->zin.pos;
    size_t left = d->zin.size - d->zin.pos;
    d->frame_at = d->consumed + d->zin.pos;
    if (left == 0)
        return d->frame_at > 0 ? 0 : gc_fail(GC_EXIT_INPUT, "%s: empty %s, not zstd data",
                                             d->from->name,
                                             d->from->is_regular ? "file" : "input");
    if (left < 4 && memcmp(p, magic, left) == 0)
        return zd_fail(d, "truncated zstd data");
    if (!zstd_starts_frame(p, left))
        return d->frame_at == 0
            ? gc_fail(GC_EXIT_INPUT, "%s: not zstd data", d->from->name)
            : gc_fail(GC_EXIT_INPUT, "%s: trailing garbage after the zstd data (at byte %ju)",
                      d->from->name, (uintmax_t)d->frame_at);
    d->in_frame = 1;
    *more = 1;
    return 0;
}

static int zd_decode(void *ctx, unsigned char *dst, size_t n, size_t *got)
{
    struct zstd_decoder *d = ctx;
    const struct zstd_lib *z = d->z;
    struct zstd_out_buffer out = { dst, n, 0 };
    int status = 0, more;
    while (!status && out.pos < out.size) {
        if (!d->in_frame && ((status = zd_next_frame(d, &more)) || !more))
            break;
        if (d->zin.pos == d->zin.size && (status = zd_want(d, 1)))
            break;
        size_t out_before = out.pos, in_before = d->zin.pos;
        size_t r = z->decompress_stream(d->ds, &out, &d->zin);
        if (z->is_error(r)) {
            char why[160];
            snprintf(why, sizeof why, "bad zstd data: %s", z->error_name(r));
            status = zd_fail(d, why);
        } else if (r == 0) {
            d->in_frame = 0;
        } else if (d->from_eof && d->zin.pos == d->zin.size && out.pos == out_before &&
                   d->zin.pos == in_before) {
            status = zd_fail(d, "truncated zstd data");
        }
    }
    *got = out.pos;
    return status;
}

static void zd_end(void *ctx)
{
    struct zstd_decoder *d = ctx;
    if (d->ds)
        d->z->free_dstream(d->ds);
    free(d->buf);
    free(d);
}

/* Opens `in` as the decompressed bytes of `from`; close it either way. */
static int zstd_open_decoded(struct gc_input *in, struct gc_input *from)
{
    input_from_source(in, from->name, zd_decode, NULL, -1);
    in->path = from->path;    /* (its extension still names what it holds) */
    in->threads = from->threads;
    int status = zstd_ready(from->name, GC_EXIT_INPUT);
    if (status)
        return status;
    struct zstd_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", from->name);
    in->source_end = zd_end;
    in->source_ctx = d;
    d->z = zstd_lib();
    d->from = from;
    d->buf = malloc(ZSTD_IN_CHUNK);
    d->ds = d->z->create_dstream();
    if (!d->buf || !d->ds || d->z->is_error(d->z->init_dstream(d->ds)))
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory for a zstd decoder", from->name);
    d->zin.src = d->buf;
    return 0;
}

typedef int (*zstd_reader)(struct gc_input *, const struct gc_read_opts *, struct gc_tensor *);

static int zstd_read(struct gc_input *from, const struct gc_read_opts *o, struct gc_tensor *t,
                     zstd_reader read)
{
    struct gc_input in;
    int status = zstd_open_decoded(&in, from);
    if (!status)
        status = read(&in, o, t);
    input_close(&in);
    return status;
}

int csv_zst_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t)
{
    return zstd_read(in, o, t, csv_read);
}

int npy_zst_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t)
{
    return zstd_read(in, o, t, npy_read);
}

typedef int (*zstd_info_fn)(struct gc_input *, const struct gc_read_opts *, struct gc_info *);

/* The uncompressed format's info on the decompressed bytes (all of CSV's
 * text; only a .npy's header), with the compressed file's size. */
static int zstd_info(struct gc_input *from, const struct gc_read_opts *o, struct gc_info *info,
                     zstd_info_fn plain, enum gc_format_id format)
{
    struct gc_input in;
    int status = zstd_open_decoded(&in, from);
    if (!status)
        status = plain(&in, o, info);
    input_close(&in);
    if (!status) {
        info->format = format;
        info->file_bytes = from->is_regular ? from->size : -1;
    }
    return status;
}

int csv_zst_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    return zstd_info(in, o, info, csv_info, GC_FMT_CSV_ZST);
}

int npy_zst_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    return zstd_info(in, o, info, npy_info, GC_FMT_NPY_ZST);
}

/* ---- writing: a stream that compresses into the output ---- */

#define ZSTD_OUT_CHUNK ((size_t)256 << 10)

struct zstd_encoder {
    const struct zstd_lib *z;
    void *cctx;
    FILE *to;
    unsigned char *out;       /* ZSTD_OUT_CHUNK bytes */
    size_t error;             /* libzstd's code for a failure, else 0 */
};

/* Compresses what `in` holds with directive `op`, writing what comes out;
 * 0, or -1 with errno set. */
static int ze_push(struct zstd_encoder *e, struct zstd_in_buffer *in, int op)
{
    for (;;) {
        struct zstd_out_buffer out = { e->out, ZSTD_OUT_CHUNK, 0 };
        size_t r = e->z->compress_stream2(e->cctx, &out, in, op);
        if (e->z->is_error(r)) {
            e->error = r;
            errno = EIO;
            return -1;
        }
        if (out.pos && fwrite(e->out, 1, out.pos, e->to) != out.pos)
            return -1;
        if (op == ZSTD_E_END ? r == 0 : in->pos == in->size)
            return 0;
    }
}

static ssize_t ze_write(void *cookie, const char *buf, size_t n)
{
    struct zstd_in_buffer in = { buf, n, 0 };
    return ze_push(cookie, &in, ZSTD_E_CONTINUE) ? -1 : (ssize_t)n;
}

/* The compressor's settings: --level, a checksum, and --threads workers
 * where the library has them (one at least, so that the bytes written do
 * not depend on the number). */
static int ze_settings(struct zstd_encoder *e, const char *name, const struct gc_write_opts *o)
{
    int level = o && o->level >= 0 ? o->level : ZSTD_LEVEL_DEFAULT;
    int threads = o && o->threads > 0 ? o->threads : parallel_default_threads();
    size_t r = e->z->set_parameter(e->cctx, ZSTD_C_LEVEL, level);
    if (!e->z->is_error(r))
        r = e->z->set_parameter(e->cctx, ZSTD_C_CHECKSUM, 1);
    if (e->z->is_error(r))
        return gc_fail(GC_EXIT_OUTPUT, "%s: zstd compression: %s", name, e->z->error_name(r));
    /* (an error: a library built without threads compresses on this one) */
    e->z->set_parameter(e->cctx, ZSTD_C_WORKERS, threads);
    return 0;
}

typedef int (*zstd_writer)(FILE *, const char *, const struct gc_tensor *,
                           const struct gc_write_opts *);

static int zstd_write(FILE *f, const char *name, const struct gc_tensor *t,
                      const struct gc_write_opts *o, zstd_writer write)
{
    int status = zstd_ready(name, GC_EXIT_OUTPUT);
    if (status)
        return status;
    struct zstd_encoder e = { zstd_lib(), NULL, f, NULL, 0 };
    e.cctx = e.z->create_cctx();
    e.out = malloc(ZSTD_OUT_CHUNK);
    FILE *zf = NULL;
    if (!e.cctx || !e.out)
        status = gc_fail(GC_EXIT_INPUT, "%s: out of host memory for a zstd compressor", name);
    if (!status)
        status = ze_settings(&e, name, o);
    if (!status && !(zf = fopencookie(&e, "w", (cookie_io_functions_t){ .write = ze_write })))
        status = gc_fail(GC_EXIT_OUTPUT, "%s: %s", name, strerror(errno));
    if (!status)
        status = write(zf, name, t, o);
    if (!status && fflush(zf) != 0)
        status = gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name, strerror(errno));
    struct zstd_in_buffer none = { "", 0, 0 };
    if (!status && ze_push(&e, &none, ZSTD_E_END) != 0)
        status = gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name,
                         e.error ? e.z->error_name(e.error) : strerror(errno));
    if (zf)
        fclose(zf);
    if (e.cctx)
        e.z->free_cctx(e.cctx);
    free(e.out);
    return status;
}

int csv_zst_write(FILE *f, const char *name, const struct gc_tensor *t,
                  const struct gc_write_opts *o)
{
    return zstd_write(f, name, t, o, csv_write);
}

int npy_zst_write(FILE *f, const char *name, const struct gc_tensor *t,
                  const struct gc_write_opts *o)
{
    return zstd_write(f, name, t, o, npy_write);
}
