/* The transpose kernels.  Their launchers and resource queries are
 * declared by the table that lists them (kernels/transpose_table.c); this
 * header holds what they share.
 *
 * Every launcher takes any rows, cols >= 1 and element sizes 1, 2, 4 and 8
 * (geam: 4 and 8; its table row says so), moves elements bit for bit, and
 * returns the launch's error, if any, without synchronising; an element
 * size it does not take is refused with cudaErrorInvalidValue.  `copy` and `copy_smem` copy `in` to
 * `out` unchanged (rows * cols elements): they are bandwidth references for
 * the bench, not transposes. */
#ifndef GC_TRANSPOSE_H
#define GC_TRANSPOSE_H

#include "kernels/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Transposes the n x n matrix at `data` (device memory) in place, for a
 * matrix too large to hold twice on the device.  elem_size is 1, 2, 4 or 8. */
cudaError_t transpose_inplace_square_launch(void *data, int n, size_t elem_size,
                                            const struct launch_env *env);

#ifdef __cplusplus
}
#endif

#endif
