/* Look-ups by name in the two kernel tables (sgemm_table.c,
 * transpose_table.c), and the device set-up the kernels rely on. */
#include <stdint.h>
#include <string.h>

#include "registry.h"

const struct gemm_kernel *gemm_kernel_find(const char *name)
{
    for (size_t i = 0; i < gemm_kernel_count; i++)
        if (strcmp(gemm_kernels[i].name, name) == 0)
            return &gemm_kernels[i];
    return NULL;
}

const struct transpose_kernel *transpose_kernel_find(const char *name)
{
    for (size_t i = 0; i < transpose_kernel_count; i++)
        if (strcmp(transpose_kernels[i].name, name) == 0)
            return &transpose_kernels[i];
    return NULL;
}

cudaError_t kernels_prepare_device(void)
{
    int dev;
    cudaMemPool_t pool;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetDefaultMemPool(&pool, dev);
    if (err != cudaSuccess)
        return err;
    uint64_t keep = UINT64_MAX;
    return cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
}
