/* Host tensors: what every format reader produces and every writer takes.
 *
 * A tensor is an array of `ndim` dimensions (NumPy's shape) of one dtype,
 * stored densely in C order (the last index fastest) unless
 * `fortran_order` is set (the first index fastest: what np.save writes for
 * a transposed view).  A matrix is a 2-D tensor; mul and transpose read the
 * last two dimensions of an N-D one as a stack of matrices.  Data flows one
 * way: reader -> tensor -> device -> kernel -> device -> tensor -> writer. */
#ifndef GC_TENSOR_H
#define GC_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"

/* NumPy's limit since 2.0. */
#define GC_MAX_DIMS 64

/* The largest dimension and the largest payload accepted anywhere:
 * NumPy's PY_SSIZE_T_MAX. */
#define GC_DIM_MAX ((size_t)INT64_MAX)

/* Where payload buffers come from.  The default is malloc; the device path
 * may pass a page-locked allocator, so that readers fill buffers that can
 * be copied to the GPU at full speed without a staging copy. */
struct gc_alloc {
    void *(*alloc)(void *ctx, size_t bytes);   /* NULL on failure */
    void (*release)(void *ctx, void *p);
    void *ctx;
};

extern const struct gc_alloc gc_alloc_malloc;

struct gc_tensor {
    int ndim;                 /* 0 (a scalar) .. GC_MAX_DIMS */
    size_t shape[GC_MAX_DIMS];
    enum gc_dtype dtype;
    int fortran_order;        /* 1: the first index varies fastest */
    void *data;               /* count * size bytes; may be NULL if empty */
    const struct gc_alloc *alloc;   /* releases data; NULL if not owned */
};

/* A 2-D tensor's shape. */
void gc_tensor_set_2d(struct gc_tensor *t, size_t rows, size_t cols);

/* A stack of `batch` rows x cols matrices (2-D when batch is 1). */
void gc_tensor_set_stack(struct gc_tensor *t, size_t batch, size_t rows, size_t cols);

/* The element count of a shape; 0 when a dimension or the count passes
 * NumPy's limit (*count then undefined), else 1. */
int gc_shape_count(int ndim, const size_t *shape, size_t *count);

/* count * element size, checked the same way. */
int gc_tensor_bytes(const struct gc_tensor *t, size_t *bytes);

/* The element count of a tensor whose shape was already checked. */
size_t gc_tensor_count(const struct gc_tensor *t);

/* 1 when the data is really stored column-major: Fortran order with two or
 * more dimensions above 1 (otherwise both orders store the same bytes). */
int gc_tensor_column_major(const struct gc_tensor *t);

/* "4x8x5", "5" for one dimension, "scalar" for none. */
void gc_shape_text(int ndim, const size_t *shape, char *buf, size_t n);

/* Allocates data for an already-shaped tensor; returns 0 or -1. */
int gc_tensor_alloc(struct gc_tensor *t, const struct gc_alloc *alloc);
void gc_tensor_free(struct gc_tensor *t);

/* Element number i in C order, as a long double (which holds every value
 * of every dtype exactly on x86-64, 64-bit integers included). */
long double gc_tensor_get(const struct gc_tensor *t, size_t i);

/* Converts `src` into a new C-order tensor of dtype `dt`, or of its own
 * dtype with dt < 0: floats round to nearest; to an integer type, values
 * round to nearest and saturate, NaN becomes 0; to bool, nonzero (NaN
 * too) is true.  Returns 0 or -1 on allocation failure. */
int gc_tensor_convert(const struct gc_tensor *src, int dt, const struct gc_alloc *alloc,
                      struct gc_tensor *dst);

/* Bytes of host memory a new allocation can have now: the kernel's
 * MemAvailable plus free swap, within the memory cgroup's limit;
 * SIZE_MAX when that cannot be read. */
size_t gc_host_memory_available(void);

/* Allocations below this size are not checked against the above. */
#define GC_MEM_CHECK_MIN ((size_t)64 << 20)

#endif
