/* Small helpers shared by the kernel files: ceiling division, the launcher's
 * error return, and the resource query behind `gemmcli kernels --details`. */
#ifndef GC_KERNELS_COMMON_CUH
#define GC_KERNELS_COMMON_CUH

#include <cuda_runtime.h>
#include "kernels/registry.h"

static inline __host__ __device__ int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* What a launcher returns after its launch(es): a launch-configuration
 * error if there was one, else success (execution errors surface at the
 * caller's next synchronisation). */
static inline cudaError_t launch_result(void) { return cudaGetLastError(); }

/* Fills `out` for one __global__ function launched with `threads` threads
 * and `dyn_smem` bytes of dynamic shared memory. */
template <typename Kernel>
static cudaError_t kernel_attr_of(Kernel func, int threads, size_t dyn_smem,
                                  struct kernel_attr *out)
{
    cudaFuncAttributes fa;
    cudaError_t err = cudaFuncGetAttributes(&fa, (const void *)func);
    if (err != cudaSuccess)
        return err;
    if (dyn_smem > 48 * 1024) {
        err = cudaFuncSetAttribute((const void *)func,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)dyn_smem);
        if (err != cudaSuccess)
            return err;
    }
    out->regs = fa.numRegs;
    out->smem_static = fa.sharedSizeBytes;
    out->smem_dynamic = dyn_smem;
    out->local_bytes = fa.localSizeBytes;
    out->threads = threads;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&out->blocks_per_sm, func,
                                                         threads, dyn_smem);
}

#endif
