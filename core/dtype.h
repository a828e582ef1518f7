/* Element types: the table of every dtype gemmcli reads and writes, NumPy's
 * rule for the type of a product of two of them, and IEEE half precision
 * by hand (C has no half type). */
#ifndef GC_DTYPE_H
#define GC_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum gc_dtype {
    GC_F32, GC_F64, GC_F16,
    GC_I8, GC_I16, GC_I32, GC_I64,
    GC_U8, GC_U16, GC_U32, GC_U64,
    GC_BOOL,
    GC_BF16,
    GC_DTYPE_COUNT
};

enum gc_dtype_kind { GC_KIND_FLOAT = 'f', GC_KIND_INT = 'i', GC_KIND_UINT = 'u', GC_KIND_BOOL = 'b' };

struct gc_dtype_info {
    const char *name;      /* "f32", also accepted by --dtype */
    const char *numpy;     /* NumPy's descr without byte order: "f4"; NULL: none */
    const char *numpy_name;/* "float32" */
    size_t size;           /* bytes per element */
    int kind;              /* enum gc_dtype_kind */
};

extern const struct gc_dtype_info gc_dtypes[GC_DTYPE_COUNT];

/* Parses "f32", "float32", "f4", "int8", "bool" and the like; -1 if unknown. */
int gc_dtype_parse(const char *s);

int gc_dtype_is_float(enum gc_dtype t);
/* Integer or bool: products are exact integers. */
int gc_dtype_is_integral(enum gc_dtype t);

/* np.result_type(a, b) for two arrays: bool gives way to anything, mixed
 * signed and unsigned integers widen (int64 with uint64 is float64), an
 * integer with a float widens the float until it holds the integer's range
 * (int16 with float16 is float32). */
enum gc_dtype gc_result_type(enum gc_dtype a, enum gc_dtype b);

/* IEEE half <-> float and double, round to nearest even. */
float gc_half_to_float(uint16_t h);
uint16_t gc_float_to_half(float f);
uint16_t gc_double_to_half(double d);

/* bfloat16 (the top half of a float) <-> float and double, round to
 * nearest even, NaN kept a NaN. */
float gc_bf16_to_float(uint16_t b);
uint16_t gc_double_to_bf16(double d);

/* Reverses the bytes of each of `count` elements of `size` bytes (2, 4
 * or 8; other sizes are left as they are): a big-endian payload to this
 * machine's order. */
void gc_byteswap(void *data, size_t count, size_t size);

#endif
