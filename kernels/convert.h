/* Turning an uploaded operand into what the mul kernels take: a row-major
 * float32 matrix.  Not a ladder stage: it runs before the kernel, on the
 * raw payload as it came from the file, so that the host neither converts
 * nor reorders anything. */
#ifndef GC_CONVERT_H
#define GC_CONVERT_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#include "../src/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst (rows x cols, row-major float32) from src, `rows x cols` elements of
 * dtype `dt`, stored column-major when `fortran_order` (little-endian, as
 * gc_matrix holds them).  Values round to nearest. */
cudaError_t convert_to_f32_launch(const void *src, enum gc_dtype dt, int fortran_order,
                                  size_t rows, size_t cols, float *dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
