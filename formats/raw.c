/* Raw binary: elements back to back in the host's (little-endian) byte
 * order, nothing else.  The shape comes from --shape (any number of
 * dimensions: 5, 96x64, 4x8x5), or, without it, from the size when that is
 * a perfect square number of elements; the dtype from --in-dtype (f32 by
 * default), the order from --order.  Output is always in C order, in the
 * tensor's own dtype. */
#include "formats/format_impl.h"
#include "formats/payload.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

struct raw_layout {
    struct gc_tensor shape;   /* no data */
    size_t bytes;
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
    memset(l, 0, sizeof *l);
    l->shape.dtype = (enum gc_dtype)raw_dtype(o);
    size_t es = gc_dtypes[l->shape.dtype].size;
    const char *dn = gc_dtypes[l->shape.dtype].name;
    int order_f = o && o->fortran_order;
    if (o && o->has_shape) {
        char text[64];
        l->shape.ndim = o->ndim;
        memcpy(l->shape.shape, o->shape, (size_t)o->ndim * sizeof o->shape[0]);
        l->shape.fortran_order = order_f;
        gc_shape_text(o->ndim, o->shape, text, sizeof text);
        if (!gc_tensor_bytes(&l->shape, &l->bytes))
            return gc_fail(GC_EXIT_INPUT, "%s: --shape %s of %s is too large", name, text, dn);
        snprintf(l->what, sizeof l->what, "--shape %s of %s", text, dn);
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
    gc_tensor_set_2d(&l->shape, s, s);
    l->shape.fortran_order = order_f;
    l->bytes = (size_t)total;
    snprintf(l->what, sizeof l->what, "%zux%zu of %s", s, s, dn);
    return 0;
}

int raw_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t)
{
    struct raw_layout l;
    int status;
    const struct gc_alloc *alloc = o ? o->alloc : NULL;
    off_t left = input_remaining(in);
    if ((o && o->has_shape) || left >= 0) {
        if ((status = raw_layout(in->name, o, left, &l)))
            return status;
        struct gc_tensor r = l.shape;
        if ((status = payload_read_tensor(in, &r, alloc, o ? o->sink : NULL, l.what)))
            return status;
        *t = r;
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
    struct gc_tensor r = l.shape;
    if (!alloc || alloc == &gc_alloc_malloc) {
        r.data = data;
        r.alloc = &gc_alloc_malloc;
    } else {
        if (gc_tensor_alloc(&r, alloc) != 0) {
            free(data);
            return gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes for %s", in->name,
                           l.bytes, l.what);
        }
        memcpy(r.data, data, l.bytes);
        free(data);
    }
    *t = r;
    return 0;
}

/* A pipe's length, read through a small buffer: info keeps nothing. */
static int raw_count_bytes(struct gc_input *in, intmax_t *total)
{
    unsigned char buf[1 << 16];
    size_t got;
    *total = 0;
    do {
        int status = input_read(in, buf, sizeof buf, &got);
        if (status)
            return status;
        *total += (intmax_t)got;
    } while (got == sizeof buf);
    return 0;
}

int raw_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    struct raw_layout l;
    int status;
    intmax_t total = input_remaining(in);
    int regular = total >= 0;
    if (!regular && (status = raw_count_bytes(in, &total)))
        return status;
    if ((status = raw_layout(in->name, o, total, &l)))
        return status;
    if (regular && (status = payload_check_left(in, l.bytes, l.what)))
        return status;
    if ((uintmax_t)total < l.bytes)
        return gc_fail(GC_EXIT_INPUT, "%s: truncated: %s needs %zu bytes of data, found %jd",
                       in->name, l.what, l.bytes, total);
    if ((uintmax_t)total > l.bytes)
        return gc_fail(GC_EXIT_INPUT, "%s: %ju trailing bytes after the data (%s, %zu bytes)",
                       in->name, (uintmax_t)total - l.bytes, l.what, l.bytes);
    memset(info, 0, sizeof *info);
    info->format = GC_FMT_RAW;
    info->dtype = l.shape.dtype;
    info->ndim = l.shape.ndim;
    memcpy(info->shape, l.shape.shape, (size_t)l.shape.ndim * sizeof l.shape.shape[0]);
    info->fortran_order = gc_tensor_column_major(&l.shape);
    info->file_bytes = in->is_regular ? in->size : -1;
    return 0;
}

int raw_write(FILE *f, const char *name, const struct gc_tensor *t,
              const struct gc_write_opts *o)
{
    return write_c_order(f, name, t, o ? o->threads : 0);
}

/* Raw output has no header: the payload is the whole file. */
int raw_write_header(FILE *f, const char *name, const struct gc_tensor *t)
{
    (void)f, (void)name, (void)t;
    return 0;
}
