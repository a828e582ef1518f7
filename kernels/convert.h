/* Element conversions on the device, around the kernels: operands as they
 * came from the file (any dtype, C or Fortran order) into the type a
 * kernel takes, and a kernel's C into the result's dtype.  Not ladder
 * stages: they run before and after the kernel, so that the host neither
 * converts nor reorders anything. */
#ifndef GC_CONVERT_H
#define GC_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "core/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst (C order, dtype `to`: f32, f64, f16, bf16, i64, i32, i16 or i8) from
 * `count` elements of dtype `from` at src: in C order, or, when `fortran`,
 * one column-major rows x cols matrix (count == rows * cols).  Floats round
 * to nearest; integers convert to the integer types (to i64 exactly, uint64
 * by its bits, modulo 2^64; to a narrower one modulo its width, which the
 * exact path asks for only where the values fit), bool to 0 and 1. */
cudaError_t convert_operand_launch(const void *src, enum gc_dtype from, int fortran,
                                   size_t rows, size_t cols, size_t count, void *dst,
                                   enum gc_dtype to, cudaStream_t stream);

/* dst (`to`) from `count` floats or doubles (`from`: f32 or f64) in C
 * order, rounded to nearest.  The float results of mul. */
cudaError_t convert_result_launch(const void *src, enum gc_dtype from, size_t count, void *dst,
                                  enum gc_dtype to, cudaStream_t stream);

/* The integer results of mul: dst (an integer dtype or bool) =
 * alpha * acc + beta * c0, computed modulo 2^64 and then truncated to the
 * result's width as NumPy's integers wrap (bool: nonzero).  acc holds
 * exact products, as int64 or as doubles that are integers (`acc_type`
 * GC_I64 or GC_F64), or their low 32 bits (GC_I32: exact for results of
 * 32 bits or fewer); c0 (int64) is not read when beta == 0. */
cudaError_t convert_integer_result_launch(const void *acc, enum gc_dtype acc_type,
                                          int64_t alpha, int64_t beta, const int64_t *c0,
                                          size_t count, void *dst, enum gc_dtype to,
                                          cudaStream_t stream);

/* The largest |x| over `count` integers of dtype `dt` (bool included), as
 * an unsigned 64-bit value, into *d_max (device memory). */
cudaError_t convert_max_abs_launch(const void *src, enum gc_dtype dt, size_t count,
                                   unsigned long long *d_max, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
