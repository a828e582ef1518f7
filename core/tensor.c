#include "core/tensor.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Large tensors start on a 2 MiB boundary and ask for huge pages: fewer
 * page faults while they are filled, and page-locking them for copies to
 * a GPU (src/scale/tiled_run.h) runs several times faster than over 4 KiB pages.
 * Where huge pages are off the advice is ignored. */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_FROM ((size_t)64 << 20)

static void *malloc_alloc(void *ctx, size_t bytes)
{
    (void)ctx;
    if (bytes < HUGE_FROM)
        return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + 4095) / 4096 * 4096, MADV_HUGEPAGE);
#endif
    return p;
}

static void malloc_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

const struct gc_alloc gc_alloc_malloc = { malloc_alloc, malloc_release, NULL };

void gc_tensor_set_2d(struct gc_tensor *t, size_t rows, size_t cols)
{
    t->ndim = 2;
    t->shape[0] = rows;
    t->shape[1] = cols;
}

void gc_tensor_set_stack(struct gc_tensor *t, size_t batch, size_t rows, size_t cols)
{
    if (batch == 1) {
        gc_tensor_set_2d(t, rows, cols);
        return;
    }
    t->ndim = 3;
    t->shape[0] = batch;
    t->shape[1] = rows;
    t->shape[2] = cols;
}

/* NumPy's check: the product of the nonzero dimensions times the element
 * size must stay within PY_SSIZE_T_MAX, even when a zero dimension makes
 * the array empty. */
static int shape_fits(int ndim, const size_t *shape, size_t elem, size_t *count)
{
    size_t n = elem, zero = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] > GC_DIM_MAX)
            return 0;
        if (shape[d] == 0) {
            zero = 1;
            continue;
        }
        if (__builtin_mul_overflow(n, shape[d], &n) || n > GC_DIM_MAX)
            return 0;
    }
    *count = zero ? 0 : n / elem;
    return 1;
}

int gc_shape_count(int ndim, const size_t *shape, size_t *count)
{
    return shape_fits(ndim, shape, 1, count);
}

int gc_tensor_bytes(const struct gc_tensor *t, size_t *bytes)
{
    size_t n;
    if ((unsigned)t->dtype >= GC_DTYPE_COUNT || t->ndim < 0 || t->ndim > GC_MAX_DIMS ||
        !shape_fits(t->ndim, t->shape, gc_dtypes[t->dtype].size, &n))
        return 0;
    *bytes = n * gc_dtypes[t->dtype].size;
    return 1;
}

size_t gc_tensor_count(const struct gc_tensor *t)
{
    size_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

int gc_tensor_column_major(const struct gc_tensor *t)
{
    int big = 0;
    for (int d = 0; d < t->ndim; d++)
        big += t->shape[d] > 1;
    return t->fortran_order && big > 1;
}

void gc_shape_text(int ndim, const size_t *shape, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    if (ndim == 0) {
        snprintf(buf, n, "scalar");
        return;
    }
    for (int d = 0; d < ndim && used < n; d++)
        used += (size_t)snprintf(buf + used, n - used, "%s%zu", d ? "x" : "", shape[d]);
}

/* The value of `key` in a "key: N kB" file, in bytes; -1 if absent. */
static long long meminfo_bytes(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    if (!p)
        return -1;
    return strtoll(p + strlen(key), NULL, 10) * 1024;
}

/* A cgroup v2 file holding one number (or "max"); -1 if absent or "max". */
static long long cgroup_value(const char *path)
{
    char buf[64];
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n == 0 || buf[0] < '0' || buf[0] > '9')
        return -1;
    return strtoll(buf, NULL, 10);
}

size_t gc_host_memory_available(void)
{
    char text[4096];
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return SIZE_MAX;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    long long avail = meminfo_bytes(text, "MemAvailable:");
    long long swap = meminfo_bytes(text, "SwapFree:");
    if (avail < 0)
        return SIZE_MAX;
    long long total = avail + (swap > 0 ? swap : 0);
    long long limit = cgroup_value("/sys/fs/cgroup/memory.max");
    long long used = cgroup_value("/sys/fs/cgroup/memory.current");
    if (limit > 0 && used >= 0 && limit - used < total)
        total = limit > used ? limit - used : 0;
    return (size_t)total;
}

int gc_tensor_alloc(struct gc_tensor *t, const struct gc_alloc *alloc)
{
    size_t bytes;
    if (!alloc)
        alloc = &gc_alloc_malloc;
    t->data = NULL;
    t->alloc = NULL;
    if (!gc_tensor_bytes(t, &bytes))
        return -1;
    if (bytes == 0)
        return 0;
    t->data = alloc->alloc(alloc->ctx, bytes);
    if (!t->data)
        return -1;
    t->alloc = alloc;
    return 0;
}

void gc_tensor_free(struct gc_tensor *t)
{
    if (t->data && t->alloc)
        t->alloc->release(t->alloc->ctx, t->data);
    t->data = NULL;
    t->alloc = NULL;
}

static long double load_elem(const void *data, enum gc_dtype dt, size_t i)
{
    switch (dt) {
    case GC_F32: return ((const float *)data)[i];
    case GC_F64: return ((const double *)data)[i];
    case GC_F16: return gc_half_to_float(((const uint16_t *)data)[i]);
    case GC_I8:  return ((const int8_t *)data)[i];
    case GC_I16: return ((const int16_t *)data)[i];
    case GC_I32: return ((const int32_t *)data)[i];
    case GC_I64: return ((const int64_t *)data)[i];
    case GC_U8:  return ((const uint8_t *)data)[i];
    case GC_U16: return ((const uint16_t *)data)[i];
    case GC_U32: return ((const uint32_t *)data)[i];
    case GC_U64: return ((const uint64_t *)data)[i];
    case GC_BOOL: return ((const uint8_t *)data)[i] != 0;
    case GC_BF16: return gc_bf16_to_float(((const uint16_t *)data)[i]);
    case GC_DTYPE_COUNT: break;
    }
    return 0;
}

/* Float to integer: round to nearest even, saturate, NaN becomes 0. */
#define STORE_INT(type, lo, hi_excl, maxv) do {                              \
        long double r_ = isnan(v) ? 0 : nearbyintl(v);                       \
        ((type *)data)[i] = r_ < (lo) ? (type)(lo)                           \
                          : r_ >= (hi_excl) ? (maxv) : (type)r_;             \
    } while (0)

static void store_elem(void *data, enum gc_dtype dt, size_t i, long double v)
{
    switch (dt) {
    case GC_F32: ((float *)data)[i] = (float)v; break;
    case GC_F64: ((double *)data)[i] = (double)v; break;
    case GC_F16: ((uint16_t *)data)[i] = gc_double_to_half((double)v); break;
    case GC_I8:  STORE_INT(int8_t, -0x1p7L, 0x1p7L, INT8_MAX); break;
    case GC_I16: STORE_INT(int16_t, -0x1p15L, 0x1p15L, INT16_MAX); break;
    case GC_I32: STORE_INT(int32_t, -0x1p31L, 0x1p31L, INT32_MAX); break;
    case GC_I64: STORE_INT(int64_t, -0x1p63L, 0x1p63L, INT64_MAX); break;
    case GC_U8:  STORE_INT(uint8_t, 0, 0x1p8L, UINT8_MAX); break;
    case GC_U16: STORE_INT(uint16_t, 0, 0x1p16L, UINT16_MAX); break;
    case GC_U32: STORE_INT(uint32_t, 0, 0x1p32L, UINT32_MAX); break;
    case GC_U64: STORE_INT(uint64_t, 0, 0x1p64L, UINT64_MAX); break;
    case GC_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    case GC_BF16: ((uint16_t *)data)[i] = gc_double_to_bf16((double)v); break;
    case GC_DTYPE_COUNT: break;
    }
}

/* Where element number i in C order is stored. */
static size_t storage_index(const struct gc_tensor *t, size_t i)
{
    if (!gc_tensor_column_major(t))
        return i;
    size_t at = 0, stride = 1;
    size_t idx[GC_MAX_DIMS];
    for (int d = t->ndim - 1; d >= 0; d--) {
        idx[d] = i % t->shape[d];
        i /= t->shape[d];
    }
    for (int d = 0; d < t->ndim; d++) {
        at += idx[d] * stride;
        stride *= t->shape[d];
    }
    return at;
}

long double gc_tensor_get(const struct gc_tensor *t, size_t i)
{
    return load_elem(t->data, t->dtype, storage_index(t, i));
}

/* A column-major 2-D source to row-major, in square tiles, so that both
 * the reads and the writes stay within a few cache lines at a time. */
static void transpose_copy(const void *src, size_t rows, size_t cols, size_t es, void *dst)
{
    const size_t tile = 32;
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t r0 = 0; r0 < rows; r0 += tile)
        for (size_t c0 = 0; c0 < cols; c0 += tile) {
            size_t r1 = r0 + tile < rows ? r0 + tile : rows;
            size_t c1 = c0 + tile < cols ? c0 + tile : cols;
            for (size_t r = r0; r < r1; r++)
                for (size_t c = c0; c < c1; c++)
                    memcpy(d + (r * cols + c) * es, s + (c * rows + r) * es, es);
        }
}

/* Every element in C order, converted (or, to its own dtype, copied as
 * bytes, so that NaN payloads and bool bytes stay as they are): an odometer
 * over the shape keeps the column-major offset of the source without a
 * division per element. */
static void convert_generic(const struct gc_tensor *src, enum gc_dtype dt, void *out, size_t n)
{
    size_t es = gc_dtypes[dt].size;
    int copy = src->dtype == dt;
    if (!gc_tensor_column_major(src)) {
        for (size_t i = 0; i < n; i++)
            store_elem(out, dt, i, load_elem(src->data, src->dtype, i));
        return;
    }
    size_t stride[GC_MAX_DIMS], idx[GC_MAX_DIMS] = { 0 }, at = 0;
    for (int d = 0; d < src->ndim; d++)
        stride[d] = d ? stride[d - 1] * src->shape[d - 1] : 1;
    for (size_t i = 0; i < n; i++) {
        if (copy)
            memcpy((char *)out + i * es, (const char *)src->data + at * es, es);
        else
            store_elem(out, dt, i, load_elem(src->data, src->dtype, at));
        for (int d = src->ndim - 1; d >= 0; d--) {
            at += stride[d];
            if (++idx[d] < src->shape[d])
                break;
            at -= stride[d] * src->shape[d];
            idx[d] = 0;
        }
    }
}

int gc_tensor_convert(const struct gc_tensor *src, int dt_or_same, const struct gc_alloc *alloc,
                      struct gc_tensor *dst)
{
    enum gc_dtype dt = dt_or_same < 0 ? src->dtype : (enum gc_dtype)dt_or_same;
    struct gc_tensor out = *src;
    out.dtype = dt;
    out.fortran_order = 0;
    if (gc_tensor_alloc(&out, alloc) != 0)
        return -1;
    /* An empty tensor has nothing to convert, however many rows it has. */
    size_t n = gc_tensor_count(src);
    if (n == 0) {
        *dst = out;
        return 0;
    }
    int column_major = gc_tensor_column_major(src);
    if (src->dtype == dt && !column_major) {
        memcpy(out.data, src->data, n * gc_dtypes[dt].size);
    } else if (src->dtype == dt && src->ndim == 2) {
        transpose_copy(src->data, src->shape[0], src->shape[1], gc_dtypes[dt].size, out.data);
    } else if (src->dtype == GC_F32 && dt == GC_F64 && !column_major) {
        const float *s = src->data;
        double *d = out.data;
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else if (src->dtype == GC_F64 && dt == GC_F32 && !column_major) {
        const double *s = src->data;
        float *d = out.data;
        for (size_t i = 0; i < n; i++)
            d[i] = (float)s[i];
    } else if (src->dtype == GC_F16 && dt == GC_F32 && !column_major) {
        const uint16_t *s = src->data;
        float *d = out.data;
        for (size_t i = 0; i < n; i++)
            d[i] = gc_half_to_float(s[i]);
    } else {
        convert_generic(src, dt, out.data, n);
    }
    *dst = out;
    return 0;
}
