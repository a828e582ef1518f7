/* Small helpers shared by the kernel files: ceiling division, the launcher's
 * error return, the resource query behind `gemmcli kernels --details`, and
 * the store of a block's tile of C from shared memory a row at a time. */
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

/* A block's BM x BN tile of C, staged in shared memory at `cs` (rows of BN
 * values), to C at `c` (the tile's first element, rows `ldc` apart):
 * alpha * tile + beta * C, C read only when beta != 0, rows below `rows`
 * and columns below `cols` only.  Each of the block's WARPS warps writes
 * its band of rows a row per store, lane l at columns l, l + 32, ...: a
 * warp's store covers 32 adjacent values whatever C's alignment, and a
 * row's stores follow one another.  Stored from the fragments instead,
 * a lane's values of a row are 8 or 16 bytes in 32, and where rows of C do
 * not start on 8 or 16 bytes (N odd, or not a multiple of 4) each 32-byte
 * sector arrives in pieces from separate stores: float32 3321 x 29927 x 53
 * on `cp_async` ran at 0.6 of x 29928, float64 on `f64_dmma` at 0.5 (H100,
 * 2026-11-26). */
template <typename T, int BM, int BN, int WARPS>
static __device__ __forceinline__ void tile_store_rows(const T *cs, T *c, long long ldc, int rows,
                                                       int cols, T alpha, T beta)
{
    constexpr int per_row = BN / 32;                     /* a lane's values of a row */
    constexpr int band = BM / WARPS;                     /* rows of a warp */
    constexpr int step = 16 / per_row;                   /* rows a pass: 16 values a lane */
    static_assert(BN % 32 == 0 && BN <= 512 && band % step == 0,
                  "whole rows a warp, whole passes");
    const int lane = threadIdx.x % 32, first = threadIdx.x / 32 * band;
#pragma unroll 1
    for (int r0 = first; r0 < first + band && r0 < rows; r0 += step) {
        T v[step][per_row];
#pragma unroll
        for (int r = 0; r < step; r++)
#pragma unroll
            for (int q = 0; q < per_row; q++)
                v[r][q] = alpha * cs[(r0 + r) * BN + 32 * q + lane];
        /* The old values all in flight before the first store. */
        if (beta != T(0)) {
#pragma unroll
            for (int r = 0; r < step; r++)
#pragma unroll
                for (int q = 0; q < per_row; q++)
                    if (r0 + r < rows && 32 * q + lane < cols)
                        v[r][q] += beta * c[(r0 + r) * ldc + 32 * q + lane];
        }
#pragma unroll
        for (int r = 0; r < step; r++)
#pragma unroll
            for (int q = 0; q < per_row; q++)
                if (r0 + r < rows && 32 * q + lane < cols)
                    c[(r0 + r) * ldc + 32 * q + lane] = v[r][q];
    }
}

#endif
