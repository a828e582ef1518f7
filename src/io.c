#include "io.h"

#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "parallel.h"

int io_read_operand(const struct gc_opts *o, int index, const char *path,
                    const struct gc_alloc *alloc, struct gc_matrix *m)
{
    struct gc_read_opts ro = o->read;
    ro.alloc = alloc;
    ro.announce = !o->quiet;
    /* One --shape serves every raw operand; several go in operand order. */
    if (o->n_shapes == 1)
        index = 0;
    if (index < o->n_shapes) {
        ro.has_shape = 1;
        ro.rows = o->shapes[index][0];
        ro.cols = o->shapes[index][1];
    }
    return format_read_path(path, o->in_format, &ro, m);
}

struct read_job {
    const struct gc_opts *o;
    const char *const *paths;
    int dtype;
    struct gc_matrix *out;
    int status[GC_MAX_OPERANDS];
};

static void read_range(void *arg, size_t begin, size_t end)
{
    struct read_job *j = arg;
    for (size_t i = begin; i < end; i++) {
        j->status[i] = io_read_operand(j->o, (int)i, j->paths[i], NULL, &j->out[i]);
        if (!j->status[i] && j->dtype >= 0)
            j->status[i] = io_to_c_order(&j->out[i], (enum gc_dtype)j->dtype, NULL);
    }
}

int io_read_operands(const struct gc_opts *o, int count, const char *const *paths,
                     int dtype, struct gc_matrix *out)
{
    /* Page faults on the fresh buffers and format decoding, not the disk,
     * bound reading from the page cache, so the operands are read side by
     * side, one thread each. */
    struct read_job j = { o, paths, dtype, out, { 0 } };
    parallel_for(count, (size_t)count, 1, read_range, &j);
    for (int i = 0; i < count; i++)
        if (j.status[i])
            return j.status[i];
    return 0;
}

int io_output_format(const struct gc_opts *o, int fallback)
{
    if (o->out_format != GC_FMT_AUTO)
        return o->out_format;
    if (output_is_stdout(o->output)) {
        if (fallback >= 0)
            return fallback;
        return -gc_fail(GC_EXIT_USAGE, "<stdout>: say which format to write with --format");
    }
    struct stat st;
    if (stat(o->output, &st) == 0 && S_ISDIR(st.st_mode))
        return -gc_fail(GC_EXIT_OUTPUT, "%s: is a directory", o->output);
    int f = format_by_extension(o->output);
    if (f < 0)
        return -gc_fail(GC_EXIT_USAGE, "%s: cannot tell the output format from the file name "
                        "(use .npy, .bin, .raw, .csv, .csv.gz, or --format)", o->output);
    return f;
}

int io_format_is_binary(int format)
{
    return format != GC_FMT_CSV;
}

int io_write_matrix(struct gc_output *out, const struct gc_opts *o, int format,
                    const struct gc_matrix *m)
{
    return gc_formats[format].write(out->f, out->name, m, &o->write);
}

int io_to_c_order(struct gc_matrix *m, enum gc_dtype dt, const struct gc_alloc *alloc)
{
    if (m->dtype == dt && (!m->fortran_order || m->rows <= 1 || m->cols <= 1)) {
        m->fortran_order = 0;   /* a vector reads the same in either order */
        return 0;
    }
    struct gc_matrix c;
    if (gc_matrix_convert(m, dt, alloc, &c))
        return gc_fail(GC_EXIT_INPUT, "out of host memory converting a %zux%zu matrix",
                       m->rows, m->cols);
    gc_matrix_free(m);
    *m = c;
    return 0;
}
