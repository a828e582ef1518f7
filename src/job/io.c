#include "src/job/io.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/parallel.h"
#include "core/pwrite.h"

struct gc_read_opts io_read_opts(const struct gc_opts *o, int index)
{
    struct gc_read_opts ro = o->read;
    ro.announce = !o->quiet;
    if (o->n_shapes == 1)
        index = 0;
    if (index < o->n_shapes) {
        ro.has_shape = 1;
        ro.ndim = o->shapes[index].ndim;
        memcpy(ro.shape, o->shapes[index].dims, sizeof ro.shape[0] * (size_t)ro.ndim);
    }
    return ro;
}

int io_read_operand(const struct gc_opts *o, int index, const char *path,
                    const struct gc_sink *sink, struct gc_tensor *t, int *read_as)
{
    struct gc_read_opts ro = io_read_opts(o, index);
    ro.sink = sink;
    return format_read_path(path, o->in_format, &ro, t, read_as);
}

int io_read_header(const struct gc_opts *o, int index, const char *path, struct gc_tensor *t,
                   int *read_as)
{
    struct gc_input in;
    int rc = input_open(&in, path);
    if (rc)
        return rc;
    struct gc_read_opts ro = io_read_opts(o, index);
    int fmt;
    rc = format_choose(&in, o->in_format, ro.announce, &fmt);
    struct gc_info info;
    memset(&info, 0, sizeof info);
    info.file_bytes = -1;
    if (!rc)
        rc = gc_formats[fmt].info(&in, &ro, &info);
    input_close(&in);
    if (rc)
        return rc;
    memset(t, 0, sizeof *t);
    t->dtype = info.dtype;
    t->ndim = info.ndim;
    memcpy(t->shape, info.shape, sizeof t->shape);
    t->fortran_order = info.fortran_order;
    *read_as = fmt;
    return 0;
}

struct read_job {
    const struct gc_opts *o;
    const char *const *paths;
    const struct gc_sink *const *sinks;
    struct gc_tensor *out;
    int status[GC_MAX_OPERANDS];
    int read_as[GC_MAX_OPERANDS];
};

static void read_range(void *arg, size_t begin, size_t end)
{
    struct read_job *j = arg;
    for (size_t i = begin; i < end; i++)
        j->status[i] = io_read_operand(j->o, (int)i, j->paths[i], j->sinks ? j->sinks[i] : NULL,
                                       &j->out[i], &j->read_as[i]);
}

int io_read_operands(const struct gc_opts *o, int count, const char *const *paths,
                     const struct gc_sink *const *sinks, struct gc_tensor *out,
                     int *first_read_as)
{
    /* Page faults on the fresh buffers and format decoding, not the disk,
     * bound reading from the page cache, so the operands are read side by
     * side, one thread each. */
    struct read_job j = { o, paths, sinks, out, { 0 }, { 0 } };
    parallel_for(count, (size_t)count, 1, read_range, &j);
    for (int i = 0; i < count; i++)
        if (j.status[i])
            return j.status[i];
    if (first_read_as)
        *first_read_as = j.read_as[0];
    return 0;
}

/* What the output's format needs, checked before anything is read:
 * --level within its range, a library it loads on first use. */
static int output_format_check(const struct gc_opts *o, int format)
{
    const struct gc_format *f = &gc_formats[format];
    int level = o->write.level;
    if (level >= 0 && f->level_max > 0 && (level < f->level_min || level > f->level_max))
        return gc_fail(GC_EXIT_USAGE, "--level: %s output takes %d to %d, got %d", f->name,
                       f->level_min, f->level_max, level);
    return f->ready ? f->ready(gc_display_name(o->output, 1), GC_EXIT_OUTPUT) : 0;
}

/* The format o->output's name gives: --format, else the extension; -1
 * for standard output without --format. */
static int named_format(const struct gc_opts *o, int *format)
{
    int rc = output_check_name(o->output);
    if (rc)
        return rc;
    *format = o->out_format;
    if (o->out_format != GC_FMT_AUTO)
        return output_format_check(o, o->out_format);
    if (output_is_stdout(o->output))
        return 0;
    struct stat st;
    if (stat(o->output, &st) == 0 && S_ISDIR(st.st_mode))
        return gc_fail(GC_EXIT_OUTPUT, "%s: is a directory", o->output);
    *format = format_by_extension(o->output);
    if (*format < 0)
        return gc_fail(GC_EXIT_USAGE, "%s: cannot tell the output format from the file name "
                       "(use .npy, .bin, .raw, .csv, .csv.gz, .csv.zst, .npy.zst, or --format)",
                       o->output);
    if (format_can(*format, FORMAT_ARCHIVE))
        return gc_fail(GC_EXIT_USAGE, "%s: .%s is read, not written: write .npy (or .bin, "
                       ".raw, .csv, .csv.gz, .csv.zst, .npy.zst, or name --format)", o->output,
                       gc_formats[*format].name);
    return output_format_check(o, *format);
}

int io_output_check(const struct gc_opts *o)
{
    int format;
    return named_format(o, &format);
}

int io_output_format(const struct gc_opts *o, int read_as, int fallback, int *format)
{
    int rc = named_format(o, format);
    if (rc || *format >= 0)
        return rc;
    *format = read_as >= 0 && read_as < GC_FMT_COUNT ? read_as : fallback;
    /* An archive's members are .npy. */
    if (format_can(*format, FORMAT_ARCHIVE))
        *format = GC_FMT_NPY;
    if (*format < 0)
        return gc_fail(GC_EXIT_USAGE, "<stdout>: say which format to write with --format");
    return output_format_check(o, *format);
}

int io_check_ndim(const struct gc_opts *o, int format, int ndim, const size_t *shape, int dtype)
{
    if (dtype >= 0 && !format_holds(format, (enum gc_dtype)dtype))
        return gc_fail(GC_EXIT_USAGE, "%s: .%s has no %s%s; write raw, or convert with --dtype "
                       "f32", gc_display_name(o->output, 1), gc_formats[format].name,
                       gc_dtypes[dtype].numpy_name,
                       gc_dtypes[dtype].numpy ? "" : " (NumPy has no such dtype)");
    int max = gc_formats[format].max_ndim;
    /* A scalar (vector @ vector) goes to .npy or raw, not to CSV. */
    if (ndim <= max && (ndim >= 1 || max > 2))
        return 0;
    char text[64] = "a scalar (a 0-d array, which np.savetxt refuses too)";
    if (ndim > 0)
        gc_shape_text(ndim, shape, text, sizeof text);
    return gc_fail(GC_EXIT_USAGE, "%s: %s holds a matrix or a vector, not %s: write .npy or "
                   "raw", gc_display_name(o->output, 1), gc_formats[format].name, text);
}

int io_format_is_binary(int format)
{
    return format_can(format, FORMAT_BINARY);
}

int io_output_flags(const struct gc_opts *o, int format)
{
    return (io_format_is_binary(format) ? OUTPUT_BINARY : 0) | (o->force ? OUTPUT_FORCE : 0);
}

int io_summary_check(FILE *f)
{
    if (fflush(f) == 0 && !ferror(f))
        return 0;
    return gc_fail(GC_EXIT_OUTPUT, "%s: cannot write the summary: %s",
                   f == stdout ? "<stdout>" : "<stderr>", strerror(errno));
}

int io_write_tensor(struct gc_output *out, const struct gc_opts *o, int format,
                    const struct gc_tensor *t)
{
    return gc_formats[format].write(out->f, out->name, t, &o->write);
}

int io_to_c_order(struct gc_tensor *t, int dt)
{
    if ((dt < 0 || t->dtype == (enum gc_dtype)dt) && !gc_tensor_column_major(t)) {
        t->fortran_order = 0;   /* a vector reads the same in either order */
        return 0;
    }
    char shape[64];
    gc_shape_text(t->ndim, t->shape, shape, sizeof shape);
    struct gc_tensor to = *t;
    size_t bytes;
    to.dtype = dt < 0 ? t->dtype : (enum gc_dtype)dt;
    if (!gc_tensor_bytes(&to, &bytes))
        return gc_fail(GC_EXIT_INPUT, "a %s tensor is too large for %s elements (NumPy allows "
                       "up to 2^63 - 1 bytes, counting the dimensions that are not zero)",
                       shape, gc_dtypes[to.dtype].name);
    struct gc_tensor c;
    if (gc_tensor_convert(t, dt, NULL, &c))
        return gc_fail(GC_EXIT_INPUT, "out of host memory converting a %s tensor", shape);
    gc_tensor_free(t);
    *t = c;
    return 0;
}

int io_offsets_start(struct gc_output *out, int format, const struct gc_tensor *whole,
                     struct io_offsets *at, int *ready)
{
    const struct gc_format *f = &gc_formats[format];
    size_t bytes;
    *ready = 0;
    if (!output_replaces(out) || !format_can(format, FORMAT_AT_OFFSETS))
        return 0;
    if (!gc_tensor_bytes(whole, &bytes))
        return gc_fail(GC_EXIT_INPUT, "the result is too large");
    int rc = f->write_header(out->f, out->name, whole);
    if (rc)
        return rc;
    off_t header = fflush(out->f) == 0 ? ftello(out->f) : -1;
    if (header < 0 || ftruncate(fileno(out->f), header + (off_t)bytes) != 0)
        return gc_fail(GC_EXIT_OUTPUT, "%s: %s", out->name, strerror(errno));
    *at = (struct io_offsets){ fileno(out->f), header, gc_dtypes[whole->dtype].size, out->name,
                               0 };
    *ready = 1;
    return 0;
}

int io_offsets_write(const struct io_offsets *at, size_t first, int64_t rows, int64_t cols,
                     size_t ld, const void *data)
{
    const unsigned char *p = data;
    /* Whole rows lie one after another: one write, on several threads when
     * large. */
    int64_t runs = (size_t)cols == ld ? 1 : rows;
    size_t run = ((size_t)cols == ld ? (size_t)rows : 1) * (size_t)cols * at->es;
    for (int64_t i = 0; i < runs; i++) {
        off_t off = at->payload + (off_t)((first + (size_t)i * ld) * at->es);
        int err = pwrite_parallel(at->fd, p + (size_t)i * ld * at->es, run, off, at->threads);
        if (err)
            return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", at->name, strerror(err));
    }
    return 0;
}
