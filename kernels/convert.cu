/* Operand conversion on the device: any dtype gemmcli reads, in C or
 * Fortran order, to row-major float32.  A grid-stride loop over the output;
 * a Fortran-order source is read through 32x32 shared-memory tiles so that
 * both the reads and the writes stay coalesced. */
#include <cuda_fp16.h>
#include <stdint.h>

#include "convert.h"
#include "common.cuh"

template <typename T> __device__ __forceinline__ float to_f32(T v) { return (float)v; }
template <> __device__ __forceinline__ float to_f32<__half>(__half v) { return __half2float(v); }

template <typename T>
__global__ void convert_c_order(const T *__restrict__ src, size_t n, float *__restrict__ dst)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = to_f32(src[i]);
}

enum { TILE = 32, ROWS_PER_PASS = 8 };

/* src is column-major rows x cols: element (r, c) at src[c * rows + r]. */
template <typename T>
__global__ void convert_f_order(const T *__restrict__ src, size_t rows, size_t cols,
                                float *__restrict__ dst)
{
    __shared__ float tile[TILE][TILE + 1];
    size_t r0 = (size_t)blockIdx.x * TILE, c0 = (size_t)blockIdx.y * TILE;
    /* Read: consecutive threads walk down a column (contiguous in src). */
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
        size_t r = r0 + threadIdx.x, c = c0 + j;
        if (r < rows && c < cols)
            tile[j][threadIdx.x] = to_f32(src[c * rows + r]);
    }
    __syncthreads();
    /* Write: consecutive threads walk along a row (contiguous in dst). */
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
        size_t r = r0 + j, c = c0 + threadIdx.x;
        if (r < rows && c < cols)
            dst[r * cols + c] = tile[threadIdx.x][j];
    }
}

template <typename T>
static cudaError_t launch(const void *src, int fortran, size_t rows, size_t cols, float *dst,
                          cudaStream_t s)
{
    const T *p = (const T *)src;
    if (!fortran || rows <= 1 || cols <= 1) {
        size_t n = rows * cols;
        size_t blocks = (n + 255) / 256;
        convert_c_order<T><<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, s>>>(p, n, dst);
    } else {
        if ((rows + TILE - 1) / TILE > 0x7fffffffu || (cols + TILE - 1) / TILE > 65535u)
            return cudaErrorInvalidConfiguration;
        dim3 grid((unsigned)((rows + TILE - 1) / TILE), (unsigned)((cols + TILE - 1) / TILE));
        convert_f_order<T><<<grid, dim3(TILE, ROWS_PER_PASS), 0, s>>>(p, rows, cols, dst);
    }
    return launch_result();
}

extern "C" cudaError_t convert_to_f32_launch(const void *src, enum gc_dtype dt,
                                             int fortran_order, size_t rows, size_t cols,
                                             float *dst, cudaStream_t stream)
{
    switch (dt) {
    case GC_F32: return launch<float>(src, fortran_order, rows, cols, dst, stream);
    case GC_F64: return launch<double>(src, fortran_order, rows, cols, dst, stream);
    case GC_F16: return launch<__half>(src, fortran_order, rows, cols, dst, stream);
    case GC_I8: return launch<int8_t>(src, fortran_order, rows, cols, dst, stream);
    case GC_I16: return launch<int16_t>(src, fortran_order, rows, cols, dst, stream);
    case GC_I32: return launch<int32_t>(src, fortran_order, rows, cols, dst, stream);
    case GC_I64: return launch<long long>(src, fortran_order, rows, cols, dst, stream);
    case GC_U8: return launch<uint8_t>(src, fortran_order, rows, cols, dst, stream);
    case GC_U16: return launch<uint16_t>(src, fortran_order, rows, cols, dst, stream);
    case GC_U32: return launch<uint32_t>(src, fortran_order, rows, cols, dst, stream);
    case GC_U64: return launch<unsigned long long>(src, fortran_order, rows, cols, dst, stream);
    default: return cudaErrorInvalidValue;
    }
}
