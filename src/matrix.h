/* Host matrices: what every format reader produces and every writer takes.
 *
 * A matrix is rows x cols elements of one dtype, stored densely in C order
 * (row-major) unless `fortran_order` is set, in which case it is stored
 * column-major (what np.save writes for a transposed view).  Data flows one
 * way: reader -> gc_matrix -> device -> kernel -> device -> gc_matrix ->
 * writer. */
#ifndef GC_MATRIX_H
#define GC_MATRIX_H

#include <stddef.h>
#include <stdint.h>

enum gc_dtype {
    GC_F32, GC_F64, GC_F16,
    GC_I8, GC_I16, GC_I32, GC_I64,
    GC_U8, GC_U16, GC_U32, GC_U64,
    GC_DTYPE_COUNT
};

struct gc_dtype_info {
    const char *name;      /* "f32", also accepted by --dtype */
    const char *numpy;     /* numpy's descr without byte order: "f4" */
    size_t size;           /* bytes per element */
    int is_float;
};

extern const struct gc_dtype_info gc_dtypes[GC_DTYPE_COUNT];

/* Parses "f32"/"float32"/"f4" style names; returns -1 if unknown. */
int gc_dtype_parse(const char *s);

/* Where payload buffers come from.  The default is malloc; the device path
 * passes a page-locked allocator so that readers fill buffers that can be
 * copied to the GPU at full speed without a staging copy. */
struct gc_alloc {
    void *(*alloc)(void *ctx, size_t bytes);   /* NULL on failure */
    void (*release)(void *ctx, void *p);
    void *ctx;
};

extern const struct gc_alloc gc_alloc_malloc;

struct gc_matrix {
    size_t rows, cols;
    enum gc_dtype dtype;
    int fortran_order;        /* 1: column-major storage */
    void *data;               /* rows*cols*size bytes; may be NULL if empty */
    const struct gc_alloc *alloc;   /* releases data; NULL if not owned */
};

/* rows*cols*elem_size with overflow checking; returns 0 when a dimension
 * or the product passes NumPy's limit, PY_SSIZE_T_MAX (2^63 - 1). */
int gc_size_mul(size_t a, size_t b, size_t *out);
int gc_matrix_bytes(size_t rows, size_t cols, enum gc_dtype dt, size_t *out);

/* Bytes of host memory a new allocation can have now: the kernel's
 * MemAvailable plus free swap, within the memory cgroup's limit;
 * SIZE_MAX when that cannot be read. */
size_t gc_host_memory_available(void);

/* Allocations below this size are not checked against the above. */
#define GC_MEM_CHECK_MIN ((size_t)64 << 20)

/* Allocates data for an already-shaped matrix; returns 0 or -1. */
int gc_matrix_alloc(struct gc_matrix *m, const struct gc_alloc *alloc);
void gc_matrix_free(struct gc_matrix *m);

/* Element (r, c) as a double, whatever the dtype and order. */
double gc_matrix_get(const struct gc_matrix *m, size_t r, size_t c);

/* Converts `src` into a new C-order matrix of dtype `dt` (values rounded to
 * nearest; integers saturate).  Returns 0 or -1 on allocation failure. */
int gc_matrix_convert(const struct gc_matrix *src, enum gc_dtype dt,
                      const struct gc_alloc *alloc, struct gc_matrix *dst);

/* IEEE half <-> float, round to nearest even. */
float gc_half_to_float(uint16_t h);
uint16_t gc_float_to_half(float f);

#endif
