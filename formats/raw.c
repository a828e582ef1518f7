/* Raw binary: elements back to back in the host's (little-endian) byte
 * order, nothing else.  The shape comes from --shape RxC, or, without it,
 * from the size when that is a perfect square number of elements; the
 * dtype from --dtype (f32 by default), the order from --order.  Output is
 * always row-major, in the matrix's own dtype. */
#include "format_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/error.h"

struct raw_layout {
    enum gc_dtype dtype;
    size_t rows, cols, bytes;
    char what[96];
};

static int raw_dtype(const struct gc_read_opts *o)
{
    return o && o->dtype >= 0 && o->dtype < GC_DTYPE_COUNT ? o->dtype : GC_F32;
}

static size_t raw_isqrt(uint64_t n)
{
    uint64_t s = (uint64_t)sqrtl((long double)n);
    while (s > 0 && s > n / s)
        s--;
    while ((s + 1) <= n / (s + 1))
        s++;
    return (size_t)s;
}

/* Shape from the options, or a square from `total` bytes when the size is
 * known (total >= 0). */
static int raw_layout(const char *name, const struct gc_read_opts *o, intmax_t total,
                      struct raw_layout *l)
{
    l->dtype = (enum gc_dtype)raw_dtype(o);
    size_t es = gc_dtypes[l->dtype].size;
    const char *dn = gc_dtypes[l->dtype].name;
    if (o && o->has_shape) {
        l->rows = o->rows;
        l->cols = o->cols;
        if (!gc_matrix_bytes(l->rows, l->cols, l->dtype, &l->bytes))
            return gc_fail(GC_EXIT_INPUT, "%s: --shape %zux%zu of %s is too large", name,
                           l->rows, l->cols, dn);
        snprintf(l->what, sizeof l->what, "--shape %zux%zu of %s", l->rows, l->cols, dn);
        return 0;
    }
    if (total == 0)
        return gc_fail(GC_EXIT_INPUT, "%s: raw input is empty (give --shape for an empty "
                       "matrix)", name);
    if ((uintmax_t)total % es != 0)
        return gc_fail(GC_EXIT_INPUT, "%s: %jd bytes is not a whole number of %s elements "
                       "(%zu bytes each)", name, total, dn, es);
    uint64_t n = (uintmax_t)total / es;
    size_t s = raw_isqrt(n);
    if ((uint64_t)s * s != n)
        return gc_fail(GC_EXIT_INPUT, "%s: %jd bytes is %ju %s elements, not a square "
                       "number; give --shape RxC", name, total, (uintmax_t)n, dn);
    l->rows = l->cols = s;
    l->bytes = (size_t)total;
    snprintf(l->what, sizeof l->what, "%zux%zu of %s", s, s, dn);
    return 0;
}

int raw_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_matrix *m)
{
    struct raw_layout l;
    int status;
    int order_f = o && o->fortran_order;
    const struct gc_alloc *alloc = o ? o->alloc : NULL;
    int shape_given = o && o->has_shape;
    off_t left = input_remaining(in);
    if (shape_given || left >= 0) {
        if ((status = raw_layout(in->name, o, left, &l)))
            return status;
        struct gc_matrix r = { l.rows, l.cols, l.dtype, order_f, NULL, NULL };
        if ((status = payload_read_matrix(in, &r, alloc, l.what)))
            return status;
        if (r.rows <= 1 || r.cols <= 1)
            r.fortran_order = 0;
        *m = r;
        return 0;
    }
    /* A pipe without --shape: the size is known only once it is all read. */
    unsigned char *data;
    size_t len;
    if ((status = input_slurp(in, &data, &len)))
        return status;
    if ((status = raw_layout(in->name, o, (intmax_t)len, &l))) {
        free(data);
        return status;
    }
    struct gc_matrix r = { l.rows, l.cols, l.dtype, order_f && l.rows > 1, NULL, NULL };
    if (!alloc || alloc == &gc_alloc_malloc) {
        r.data = data;
        r.alloc = &gc_alloc_malloc;
    } else {
        if (gc_matrix_alloc(&r, alloc) != 0) {
            free(data);
            return gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes for %s", in->name,
                           l.bytes, l.what);
        }
        memcpy(r.data, data, l.bytes);
        free(data);
    }
    *m = r;
    return 0;
}

int raw_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    struct raw_layout l;
    int status;
    off_t left = input_remaining(in);
    if (left >= 0) {
        if ((status = raw_layout(in->name, o, left, &l)) ||
            (status = payload_check_left(in, l.bytes, l.what)))
            return status;
    } else {
        struct gc_matrix m;
        struct gc_read_opts plain = o ? *o : (struct gc_read_opts){ .dtype = -1 };
        plain.alloc = NULL;
        if ((status = raw_read(in, &plain, &m)))
            return status;
        l.dtype = m.dtype;
        l.rows = m.rows;
        l.cols = m.cols;
        gc_matrix_free(&m);
    }
    memset(info, 0, sizeof *info);
    info->format = GC_FMT_RAW;
    info->dtype = l.dtype;
    info->rows = l.rows;
    info->cols = l.cols;
    info->fortran_order = o && o->fortran_order && l.rows > 1 && l.cols > 1;
    info->file_bytes = in->is_regular ? in->size : -1;
    return 0;
}

int raw_write(FILE *f, const char *name, const struct gc_matrix *m,
              const struct gc_write_opts *o)
{
    (void)o;
    return write_row_major(f, name, m);
}

/* Raw output has no header: the payload is the whole file. */
int raw_write_header(FILE *f, const char *name, const struct gc_matrix *m)
{
    (void)f, (void)name, (void)m;
    return 0;
}
