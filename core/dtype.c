#include "core/dtype.h"

#include <math.h>
#include <string.h>
#include <strings.h>

const struct gc_dtype_info gc_dtypes[GC_DTYPE_COUNT] = {
    [GC_F32]  = { "f32",  "f4", "float32", 4, GC_KIND_FLOAT },
    [GC_F64]  = { "f64",  "f8", "float64", 8, GC_KIND_FLOAT },
    [GC_F16]  = { "f16",  "f2", "float16", 2, GC_KIND_FLOAT },
    [GC_I8]   = { "i8",   "i1", "int8",    1, GC_KIND_INT },
    [GC_I16]  = { "i16",  "i2", "int16",   2, GC_KIND_INT },
    [GC_I32]  = { "i32",  "i4", "int32",   4, GC_KIND_INT },
    [GC_I64]  = { "i64",  "i8", "int64",   8, GC_KIND_INT },
    [GC_U8]   = { "u8",   "u1", "uint8",   1, GC_KIND_UINT },
    [GC_U16]  = { "u16",  "u2", "uint16",  2, GC_KIND_UINT },
    [GC_U32]  = { "u32",  "u4", "uint32",  4, GC_KIND_UINT },
    [GC_U64]  = { "u64",  "u8", "uint64",  8, GC_KIND_UINT },
    [GC_BOOL] = { "bool", "b1", "bool",    1, GC_KIND_BOOL },
    /* bfloat16 has no .npy descr: NumPy has no such dtype. */
    [GC_BF16] = { "bf16", NULL, "bfloat16", 2, GC_KIND_FLOAT },
};

/* Spellings accepted besides the table's names.  NumPy's integer codes
 * ("i8" is int64 there) would clash with the bit-count names, so only its
 * unambiguous float codes are aliases. */
static const struct { const char *alias; enum gc_dtype dt; } dtype_aliases[] = {
    { "single", GC_F32 }, { "float", GC_F32 }, { "f4", GC_F32 },
    { "double", GC_F64 }, { "f8", GC_F64 },
    { "half", GC_F16 }, { "f2", GC_F16 },
    { "bool_", GC_BOOL }, { "b1", GC_BOOL },
};

int gc_dtype_parse(const char *s)
{
    for (int i = 0; i < GC_DTYPE_COUNT; i++)
        if (strcasecmp(s, gc_dtypes[i].name) == 0 || strcasecmp(s, gc_dtypes[i].numpy_name) == 0)
            return i;
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++)
        if (strcasecmp(s, dtype_aliases[i].alias) == 0)
            return (int)dtype_aliases[i].dt;
    return -1;
}

int gc_dtype_is_float(enum gc_dtype t)
{
    return gc_dtypes[t].kind == GC_KIND_FLOAT;
}

int gc_dtype_is_integral(enum gc_dtype t)
{
    return gc_dtypes[t].kind != GC_KIND_FLOAT;
}

static enum gc_dtype float_of_size(size_t size)
{
    return size <= 2 ? GC_F16 : size == 4 ? GC_F32 : GC_F64;
}

static enum gc_dtype int_of_size(size_t size, int is_signed)
{
    static const enum gc_dtype s[] = { GC_I8, GC_I16, GC_I32, GC_I64 };
    static const enum gc_dtype u[] = { GC_U8, GC_U16, GC_U32, GC_U64 };
    int i = size <= 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
    return is_signed ? s[i] : u[i];
}

enum gc_dtype gc_result_type(enum gc_dtype a, enum gc_dtype b)
{
    const struct gc_dtype_info *x = &gc_dtypes[a], *y = &gc_dtypes[b];
    if (a == b || y->kind == GC_KIND_BOOL)
        return a;
    if (x->kind == GC_KIND_BOOL)
        return b;
    size_t big = x->size > y->size ? x->size : y->size;
    /* bfloat16 with float16: neither holds the other, float32 holds both. */
    if ((a == GC_BF16 && b == GC_F16) || (a == GC_F16 && b == GC_BF16))
        return GC_F32;
    if (x->kind == GC_KIND_FLOAT && y->kind == GC_KIND_FLOAT)
        return x->size > y->size ? a : y->size > x->size ? b : a;
    if (x->kind == GC_KIND_FLOAT || y->kind == GC_KIND_FLOAT) {
        /* The smallest float that holds every value of the integer type:
         * 8-bit integers fit float16, 16-bit float32, wider ones float64. */
        const struct gc_dtype_info *i = x->kind == GC_KIND_FLOAT ? y : x;
        const struct gc_dtype_info *f = x->kind == GC_KIND_FLOAT ? x : y;
        size_t need = i->size == 1 ? 2 : i->size == 2 ? 4 : 8;
        if (need <= f->size)
            return x->kind == GC_KIND_FLOAT ? a : b;
        return float_of_size(need);
    }
    if (x->kind == y->kind)
        return int_of_size(big, x->kind == GC_KIND_INT);
    const struct gc_dtype_info *s = x->kind == GC_KIND_INT ? x : y;
    const struct gc_dtype_info *u = x->kind == GC_KIND_INT ? y : x;
    if (s->size > u->size)
        return int_of_size(s->size, 1);
    if (u->size < 8)
        return int_of_size(u->size * 2, 1);
    return GC_F64;
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
uint16_t gc_double_to_half(double d)
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
    return gc_double_to_half((double)f);
}

float gc_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* One rounding from double: first to float rounding to odd (toward zero,
 * the last bit set when inexact), which keeps every double on the right
 * side of each bfloat16 midpoint, then to nearest even. */
uint16_t gc_double_to_bf16(double d)
{
    if (d != d)
        return 0x7fc0;
    float f = (float)d;
    if (fabs((double)f) > fabs(d))
        f = nextafterf(f, 0.0f);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if ((double)f != d)
        bits |= 1;
    uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);
    return (uint16_t)(rounded >> 16);
}

void gc_byteswap(void *data, size_t count, size_t size)
{
    unsigned char *p = data;
    if (size == 2) {
        for (size_t i = 0; i < count; i++) {
            uint16_t v;
            memcpy(&v, p + 2 * i, 2);
            v = __builtin_bswap16(v);
            memcpy(p + 2 * i, &v, 2);
        }
    } else if (size == 4) {
        for (size_t i = 0; i < count; i++) {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            v = __builtin_bswap32(v);
            memcpy(p + 4 * i, &v, 4);
        }
    } else if (size == 8) {
        for (size_t i = 0; i < count; i++) {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            v = __builtin_bswap64(v);
            memcpy(p + 8 * i, &v, 8);
        }
    }
}
