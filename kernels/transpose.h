/* The transpose kernels: launchers, resource queries and the host kernel
 * behind the rows of transpose_kernels[] (kernels/transpose_table.c).
 *
 * Every launcher takes any rows, cols >= 1 and element sizes 2, 4 and 8
 * (geam: 4 and 8), moves elements bit for bit, and returns the launch's
 * error, if any, without synchronising.  `copy` and `copy_smem` copy `in` to
 * `out` unchanged (rows * cols elements): they are bandwidth references for
 * the bench, not transposes. */
#ifndef GC_TRANSPOSE_H
#define GC_TRANSPOSE_H

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t transpose_copy_launch(const struct transpose_problem *p, const struct launch_env *env);
cudaError_t transpose_copy_attr(struct kernel_attr *out);
cudaError_t transpose_copy_smem_launch(const struct transpose_problem *p, const struct launch_env *env);
cudaError_t transpose_copy_smem_attr(struct kernel_attr *out);
cudaError_t transpose_naive_launch(const struct transpose_problem *p, const struct launch_env *env);
cudaError_t transpose_naive_attr(struct kernel_attr *out);
cudaError_t transpose_smem_launch(const struct transpose_problem *p, const struct launch_env *env);
cudaError_t transpose_smem_attr(struct kernel_attr *out);
cudaError_t transpose_smem_pad_launch(const struct transpose_problem *p, const struct launch_env *env);
cudaError_t transpose_smem_pad_attr(struct kernel_attr *out);
cudaError_t transpose_diagonal_launch(const struct transpose_problem *p, const struct launch_env *env);
cudaError_t transpose_diagonal_attr(struct kernel_attr *out);
cudaError_t transpose_vec_launch(const struct transpose_problem *p, const struct launch_env *env);
cudaError_t transpose_vec_attr(struct kernel_attr *out);
cudaError_t transpose_geam_launch(const struct transpose_problem *p, const struct launch_env *env);

void transpose_cpu_host(const struct transpose_problem *p);

/* Transposes the n x n matrix at `data` (device memory) in place, for a
 * matrix too large to hold twice on the device.  elem_size is 2, 4 or 8. */
cudaError_t transpose_inplace_square_launch(void *data, int n, size_t elem_size,
                                            const struct launch_env *env);
cudaError_t transpose_inplace_square_attr(struct kernel_attr *out);

#ifdef __cplusplus
}
#endif

#endif
