#include "matrix.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct gc_dtype_info gc_dtypes[GC_DTYPE_COUNT] = {
    [GC_F32] = { "f32", "f4", 4, 1 },
    [GC_F64] = { "f64", "f8", 8, 1 },
    [GC_F16] = { "f16", "f2", 2, 1 },
    [GC_I8]  = { "i8",  "i1", 1, 0 },
    [GC_I16] = { "i16", "i2", 2, 0 },
    [GC_I32] = { "i32", "i4", 4, 0 },
    [GC_I64] = { "i64", "i8", 8, 0 },
    [GC_U8]  = { "u8",  "u1", 1, 0 },
    [GC_U16] = { "u16", "u2", 2, 0 },
    [GC_U32] = { "u32", "u4", 4, 0 },
    [GC_U64] = { "u64", "u8", 8, 0 },
};

/* Spellings accepted besides the table's own names.  NumPy's integer codes
 * ("i8" is int64 there) would clash with the bit-count names, so only its
 * unambiguous float codes are aliases. */
static const struct { const char *alias; enum gc_dtype dt; } dtype_aliases[] = {
    { "float32", GC_F32 }, { "single", GC_F32 }, { "float", GC_F32 }, { "f4", GC_F32 },
    { "float64", GC_F64 }, { "double", GC_F64 }, { "f8", GC_F64 },
    { "float16", GC_F16 }, { "half", GC_F16 }, { "f2", GC_F16 },
    { "int8", GC_I8 }, { "int16", GC_I16 }, { "int32", GC_I32 }, { "int64", GC_I64 },
    { "uint8", GC_U8 }, { "uint16", GC_U16 }, { "uint32", GC_U32 }, { "uint64", GC_U64 },
};

int gc_dtype_parse(const char *s)
{
    for (int i = 0; i < GC_DTYPE_COUNT; i++)
        if (strcasecmp(s, gc_dtypes[i].name) == 0)
            return i;
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++)
        if (strcasecmp(s, dtype_aliases[i].alias) == 0)
            return (int)dtype_aliases[i].dt;
    return -1;
}

static void *malloc_alloc(void *ctx, size_t bytes)
{
    (void)ctx;
    return malloc(bytes ? bytes : 1);
}

static void malloc_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

const struct gc_alloc gc_alloc_malloc = { malloc_alloc, malloc_release, NULL };

int gc_size_mul(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return 0;
    *out = r;
    return 1;
}

int gc_matrix_bytes(size_t rows, size_t cols, enum gc_dtype dt, size_t *out)
{
    size_t n, bytes;
    if ((unsigned)dt >= GC_DTYPE_COUNT || rows > (size_t)INT64_MAX || cols > (size_t)INT64_MAX)
        return 0;
    if (!gc_size_mul(rows, cols, &n) || !gc_size_mul(n, gc_dtypes[dt].size, &bytes) ||
        bytes > (size_t)INT64_MAX)
        return 0;
    *out = bytes;
    return 1;
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

int gc_matrix_alloc(struct gc_matrix *m, const struct gc_alloc *alloc)
{
    size_t bytes;
    if (!alloc)
        alloc = &gc_alloc_malloc;
    if (!gc_matrix_bytes(m->rows, m->cols, m->dtype, &bytes))
        return -1;
    m->data = NULL;
    m->alloc = NULL;
    if (bytes == 0)
        return 0;
    m->data = alloc->alloc(alloc->ctx, bytes);
    if (!m->data)
        return -1;
    m->alloc = alloc;
    return 0;
}

void gc_matrix_free(struct gc_matrix *m)
{
    if (m->data && m->alloc)
        m->alloc->release(m->alloc->ctx, m->data);
    m->data = NULL;
    m->alloc = NULL;
}

float gc_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000 | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {
        /* Subnormal half: exactly man * 2^-24, which a float holds. */
        float f = (float)man * 0x1p-24f;
        memcpy(&bits, &f, 4);
        bits |= sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Rounds to nearest even from the double's bits, so that a double converts
 * with one rounding (going through float first would round twice). */
static uint16_t double_to_half(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    uint16_t sign = (uint16_t)((bits >> 48) & 0x8000);
    int exp = (int)((bits >> 52) & 0x7ff);
    uint64_t man = bits & 0xfffffffffffffULL;
    if (exp == 0x7ff) {
        if (man == 0)
            return sign | 0x7c00;
        return sign | 0x7e00 | (uint16_t)(man >> 42);
    }
    int e = exp - 1023;                 /* d = 1.man * 2^e for normal doubles */
    if (exp == 0 || e < -25)            /* below half the smallest subnormal */
        return sign;
    if (e > 15)
        return sign | 0x7c00;
    uint64_t sig = man | (1ULL << 52);  /* 53 significant bits */
    int shift;                          /* bits of sig dropped */
    uint16_t hexp;
    if (e >= -14) {
        shift = 42;
        hexp = (uint16_t)(e + 15);
        sig &= ~(1ULL << 52);
    } else {
        shift = 42 + (-14 - e);
        hexp = 0;
    }
    uint64_t kept = sig >> shift;
    uint64_t rest = sig & ((1ULL << shift) - 1);
    uint64_t half = 1ULL << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++;
    /* A carry out of the mantissa bumps the exponent, up to infinity. */
    return (uint16_t)(sign | (((uint32_t)hexp << 10) + (uint32_t)kept));
}

uint16_t gc_float_to_half(float f)
{
    return double_to_half((double)f);
}

/* long double holds every value of every dtype exactly where it is x87
 * extended (64-bit integers included), so one rounding happens on store. */
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
    case GC_F16: ((uint16_t *)data)[i] = double_to_half((double)v); break;
    case GC_I8:  STORE_INT(int8_t, -0x1p7L, 0x1p7L, INT8_MAX); break;
    case GC_I16: STORE_INT(int16_t, -0x1p15L, 0x1p15L, INT16_MAX); break;
    case GC_I32: STORE_INT(int32_t, -0x1p31L, 0x1p31L, INT32_MAX); break;
    case GC_I64: STORE_INT(int64_t, -0x1p63L, 0x1p63L, INT64_MAX); break;
    case GC_U8:  STORE_INT(uint8_t, 0, 0x1p8L, UINT8_MAX); break;
    case GC_U16: STORE_INT(uint16_t, 0, 0x1p16L, UINT16_MAX); break;
    case GC_U32: STORE_INT(uint32_t, 0, 0x1p32L, UINT32_MAX); break;
    case GC_U64: STORE_INT(uint64_t, 0, 0x1p64L, UINT64_MAX); break;
    case GC_DTYPE_COUNT: break;
    }
}

static size_t elem_index(const struct gc_matrix *m, size_t r, size_t c)
{
    return m->fortran_order ? c * m->rows + r : r * m->cols + c;
}

double gc_matrix_get(const struct gc_matrix *m, size_t r, size_t c)
{
    return (double)load_elem(m->data, m->dtype, elem_index(m, r, c));
}

/* Column-major to row-major in square tiles, so that both the reads and the
 * writes stay within a few cache lines at a time. */
static void transpose_copy(const struct gc_matrix *src, void *dst)
{
    const size_t tile = 32, es = gc_dtypes[src->dtype].size;
    const unsigned char *s = src->data;
    unsigned char *d = dst;
    for (size_t r0 = 0; r0 < src->rows; r0 += tile)
        for (size_t c0 = 0; c0 < src->cols; c0 += tile) {
            size_t r1 = r0 + tile < src->rows ? r0 + tile : src->rows;
            size_t c1 = c0 + tile < src->cols ? c0 + tile : src->cols;
            for (size_t r = r0; r < r1; r++)
                for (size_t c = c0; c < c1; c++)
                    memcpy(d + (r * src->cols + c) * es, s + (c * src->rows + r) * es, es);
        }
}

int gc_matrix_convert(const struct gc_matrix *src, enum gc_dtype dt,
                      const struct gc_alloc *alloc, struct gc_matrix *dst)
{
    struct gc_matrix out = { src->rows, src->cols, dt, 0, NULL, NULL };
    if (gc_matrix_alloc(&out, alloc) != 0)
        return -1;
    /* An empty matrix has nothing to convert, however many rows it has. */
    size_t n = src->rows * src->cols;
    if (n == 0) {
        *dst = out;
        return 0;
    }
    int column_major = src->fortran_order && src->rows > 1 && src->cols > 1;
    if (src->dtype == dt && !column_major) {
        memcpy(out.data, src->data, n * gc_dtypes[dt].size);
    } else if (src->dtype == dt) {
        transpose_copy(src, out.data);
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
    } else if (src->dtype == GC_F32 && dt == GC_F16 && !column_major) {
        const float *s = src->data;
        uint16_t *d = out.data;
        for (size_t i = 0; i < n; i++)
            d[i] = gc_float_to_half(s[i]);
    } else {
        size_t i = 0;
        for (size_t r = 0; r < src->rows; r++)
            for (size_t c = 0; c < src->cols; c++)
                store_elem(out.data, dt, i++, load_elem(src->data, src->dtype,
                                                        elem_index(src, r, c)));
    }
    *dst = out;
    return 0;
}
