/* Choosing a kernel: by name (--kernel NAME) or for a shape (auto). */
#ifndef GC_SELECT_H
#define GC_SELECT_H

#include <stddef.h>
#include "../kernels/registry.h"

/* The kernel named `name`, or auto's choice for m x n x k when name is
 * "auto".  Sets *is_auto.  Reports and returns NULL (status in *status)
 * when the name is unknown. */
const struct gemm_kernel *select_gemm(const char *name, size_t m, size_t n, size_t k,
                                      int *is_auto, int *status);
const struct transpose_kernel *select_transpose(const char *name, size_t rows, size_t cols,
                                                size_t elem_size, int *is_auto, int *status);

#endif
