/* Conversions on the device (kernels/convert.h).  Grid-stride loops over
 * the output; a Fortran-order source is read through 32x32 shared-memory
 * tiles, so that both the reads and the writes stay coalesced.  One
 * template per (source, destination) pair that occurs, so that every
 * conversion rounds once, straight from the source type (int64 to float
 * does not pass through double). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

#include "kernels/common.cuh"
#include "kernels/convert.h"

/* The bit pattern of a half, so that the host-side types stay uint16_t. */
struct half_bits { uint16_t bits; };

template <typename To, typename From> __device__ __forceinline__ To cvt(From v) { return (To)v; }
/* float and double to half: round to nearest even, once. */
template <> __device__ __forceinline__ half_bits cvt<half_bits, float>(float v)
{
    return half_bits{ __half_as_ushort(__float2half_rn(v)) };
}
template <> __device__ __forceinline__ half_bits cvt<half_bits, double>(double v)
{
    return half_bits{ __half_as_ushort(__double2half(v)) };
}
template <> __device__ __forceinline__ float cvt<float, half_bits>(half_bits v)
{
    return __half2float(__ushort_as_half(v.bits));
}
template <> __device__ __forceinline__ double cvt<double, half_bits>(half_bits v)
{
    return (double)__half2float(__ushort_as_half(v.bits));
}
template <> __device__ __forceinline__ half_bits cvt<half_bits, half_bits>(half_bits v) { return v; }
/* bfloat16 likewise. */
struct bf16_bits { uint16_t bits; };
template <> __device__ __forceinline__ bf16_bits cvt<bf16_bits, float>(float v)
{
    return bf16_bits{ __bfloat16_as_ushort(__float2bfloat16_rn(v)) };
}
template <> __device__ __forceinline__ bf16_bits cvt<bf16_bits, double>(double v)
{
    return bf16_bits{ __bfloat16_as_ushort(__double2bfloat16(v)) };
}
template <> __device__ __forceinline__ float cvt<float, bf16_bits>(bf16_bits v)
{
    return __bfloat162float(__ushort_as_bfloat16(v.bits));
}
template <> __device__ __forceinline__ double cvt<double, bf16_bits>(bf16_bits v)
{
    return (double)__bfloat162float(__ushort_as_bfloat16(v.bits));
}
template <> __device__ __forceinline__ bf16_bits cvt<bf16_bits, bf16_bits>(bf16_bits v) { return v; }
/* Between the two 16-bit floats, through float, which holds both. */
template <> __device__ __forceinline__ bf16_bits cvt<bf16_bits, half_bits>(half_bits v)
{
    return cvt<bf16_bits>(cvt<float>(v));
}
template <> __device__ __forceinline__ half_bits cvt<half_bits, bf16_bits>(bf16_bits v)
{
    return cvt<half_bits>(cvt<float>(v));
}
/* bool is stored as a byte; any nonzero byte is true. */
struct bool_byte { uint8_t b; };
template <> __device__ __forceinline__ float cvt<float, bool_byte>(bool_byte v) { return v.b != 0; }
template <> __device__ __forceinline__ double cvt<double, bool_byte>(bool_byte v) { return v.b != 0; }
template <> __device__ __forceinline__ long long cvt<long long, bool_byte>(bool_byte v) { return v.b != 0; }
template <> __device__ __forceinline__ int cvt<int, bool_byte>(bool_byte v) { return v.b != 0; }
template <> __device__ __forceinline__ int16_t cvt<int16_t, bool_byte>(bool_byte v) { return v.b != 0; }
template <> __device__ __forceinline__ int8_t cvt<int8_t, bool_byte>(bool_byte v) { return v.b != 0; }
template <> __device__ __forceinline__ half_bits cvt<half_bits, bool_byte>(bool_byte v)
{
    return half_bits{ (uint16_t)(v.b != 0 ? 0x3c00 : 0) };
}
template <> __device__ __forceinline__ bf16_bits cvt<bf16_bits, bool_byte>(bool_byte v)
{
    return bf16_bits{ (uint16_t)(v.b != 0 ? 0x3f80 : 0) };
}
/* Integers into half go through float, which holds every 8- and 16-bit
 * integer exactly; wider ones reach half only through float32 data. */
#define HALF_FROM_INT(T)                                                                     \
    template <> __device__ __forceinline__ half_bits cvt<half_bits, T>(T v)                  \
    {                                                                                        \
        return half_bits{ __half_as_ushort(__float2half_rn((float)v)) };                     \
    }
HALF_FROM_INT(int8_t) HALF_FROM_INT(int16_t) HALF_FROM_INT(int32_t) HALF_FROM_INT(long long)
HALF_FROM_INT(uint8_t) HALF_FROM_INT(uint16_t) HALF_FROM_INT(uint32_t)
HALF_FROM_INT(unsigned long long)
#define BF16_FROM_INT(T)                                                                     \
    template <> __device__ __forceinline__ bf16_bits cvt<bf16_bits, T>(T v)                  \
    {                                                                                        \
        return bf16_bits{ __bfloat16_as_ushort(__double2bfloat16((double)v)) };              \
    }
BF16_FROM_INT(int8_t) BF16_FROM_INT(int16_t) BF16_FROM_INT(int32_t) BF16_FROM_INT(long long)
BF16_FROM_INT(uint8_t) BF16_FROM_INT(uint16_t) BF16_FROM_INT(uint32_t)
BF16_FROM_INT(unsigned long long)

template <typename From, typename To>
__global__ void convert_c_order(const From *__restrict__ src, size_t n, To *__restrict__ dst)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = cvt<To>(src[i]);
}

enum { TILE = 32, ROWS_PER_PASS = 8 };

/* src is column-major rows x cols: element (r, c) at src[c * rows + r]. */
template <typename From, typename To>
__global__ void convert_f_order(const From *__restrict__ src, size_t rows, size_t cols,
                                To *__restrict__ dst)
{
    __shared__ To tile[TILE][TILE + 1];
    size_t r0 = (size_t)blockIdx.x * TILE, c0 = (size_t)blockIdx.y * TILE;
    /* Read: consecutive threads walk down a column (contiguous in src). */
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
        size_t r = r0 + threadIdx.x, c = c0 + j;
        if (r < rows && c < cols)
            tile[j][threadIdx.x] = cvt<To>(src[c * rows + r]);
    }
    __syncthreads();
    /* Write: consecutive threads walk along a row (contiguous in dst). */
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
        size_t r = r0 + j, c = c0 + threadIdx.x;
        if (r < rows && c < cols)
            dst[r * cols + c] = tile[threadIdx.x][j];
    }
}

static unsigned grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

template <typename From, typename To>
static cudaError_t convert_run(const void *src, int fortran, size_t rows, size_t cols, size_t n,
                               void *dst, cudaStream_t s)
{
    const From *p = (const From *)src;
    To *q = (To *)dst;
    if (!fortran || rows <= 1 || cols <= 1) {
        convert_c_order<From, To><<<grid_for(n), 256, 0, s>>>(p, n, q);
    } else {
        if ((rows + TILE - 1) / TILE > 0x7fffffffu || (cols + TILE - 1) / TILE > 65535u)
            return cudaErrorInvalidConfiguration;
        dim3 grid((unsigned)((rows + TILE - 1) / TILE), (unsigned)((cols + TILE - 1) / TILE));
        convert_f_order<From, To><<<grid, dim3(TILE, ROWS_PER_PASS), 0, s>>>(p, rows, cols, q);
    }
    return launch_result();
}

/* Floats are not converted to integers here: the exact path takes
 * integers, and a narrower integer type only where the values fit it
 * (src/plan/matmul.c). */
template <typename To>
static cudaError_t operand_to_int(const void *src, enum gc_dtype from, int fortran, size_t rows,
                                  size_t cols, size_t n, void *dst, cudaStream_t s)
{
    switch (from) {
    case GC_I8: return convert_run<int8_t, To>(src, fortran, rows, cols, n, dst, s);
    case GC_I16: return convert_run<int16_t, To>(src, fortran, rows, cols, n, dst, s);
    case GC_I32: return convert_run<int32_t, To>(src, fortran, rows, cols, n, dst, s);
    case GC_I64: return convert_run<long long, To>(src, fortran, rows, cols, n, dst, s);
    case GC_U8: return convert_run<uint8_t, To>(src, fortran, rows, cols, n, dst, s);
    case GC_U16: return convert_run<uint16_t, To>(src, fortran, rows, cols, n, dst, s);
    case GC_U32: return convert_run<uint32_t, To>(src, fortran, rows, cols, n, dst, s);
    case GC_U64: return convert_run<long long, To>(src, fortran, rows, cols, n, dst, s);
    case GC_BOOL: return convert_run<bool_byte, To>(src, fortran, rows, cols, n, dst, s);
    default: return cudaErrorInvalidValue;
    }
}

/* Any dtype to a float type: the floats here, the integers as
 * operand_to_int converts them, but for uint64, taken as unsigned. */
template <typename To>
static cudaError_t operand_to(const void *src, enum gc_dtype from, int fortran, size_t rows,
                              size_t cols, size_t n, void *dst, cudaStream_t s)
{
    switch (from) {
    case GC_F32: return convert_run<float, To>(src, fortran, rows, cols, n, dst, s);
    case GC_F64: return convert_run<double, To>(src, fortran, rows, cols, n, dst, s);
    case GC_F16: return convert_run<half_bits, To>(src, fortran, rows, cols, n, dst, s);
    case GC_BF16: return convert_run<bf16_bits, To>(src, fortran, rows, cols, n, dst, s);
    case GC_U64: return convert_run<unsigned long long, To>(src, fortran, rows, cols, n, dst, s);
    default: return operand_to_int<To>(src, from, fortran, rows, cols, n, dst, s);
    }
}

extern "C" cudaError_t convert_operand_launch(const void *src, enum gc_dtype from, int fortran,
                                              size_t rows, size_t cols, size_t count, void *dst,
                                              enum gc_dtype to, cudaStream_t stream)
{
    if (count == 0)
        return cudaSuccess;
    switch (to) {
    case GC_F32: return operand_to<float>(src, from, fortran, rows, cols, count, dst, stream);
    case GC_F64: return operand_to<double>(src, from, fortran, rows, cols, count, dst, stream);
    case GC_F16: return operand_to<half_bits>(src, from, fortran, rows, cols, count, dst, stream);
    case GC_BF16: return operand_to<bf16_bits>(src, from, fortran, rows, cols, count, dst, stream);
    case GC_I64: return operand_to_int<long long>(src, from, fortran, rows, cols, count, dst, stream);
    case GC_I32: return operand_to_int<int>(src, from, fortran, rows, cols, count, dst, stream);
    case GC_I16: return operand_to_int<int16_t>(src, from, fortran, rows, cols, count, dst, stream);
    case GC_I8: return operand_to_int<int8_t>(src, from, fortran, rows, cols, count, dst, stream);
    default: return cudaErrorInvalidValue;
    }
}

template <typename From>
static cudaError_t result_from(const void *src, size_t n, void *dst, enum gc_dtype to,
                               cudaStream_t s)
{
    switch (to) {
    case GC_F32: return convert_run<From, float>(src, 0, 0, 0, n, dst, s);
    case GC_F64: return convert_run<From, double>(src, 0, 0, 0, n, dst, s);
    case GC_F16: return convert_run<From, half_bits>(src, 0, 0, 0, n, dst, s);
    case GC_BF16: return convert_run<From, bf16_bits>(src, 0, 0, 0, n, dst, s);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t convert_result_launch(const void *src, enum gc_dtype from, size_t count,
                                             void *dst, enum gc_dtype to, cudaStream_t stream)
{
    if (count == 0)
        return cudaSuccess;
    if (from == GC_F32)
        return result_from<float>(src, count, dst, to, stream);
    if (from == GC_F64)
        return result_from<double>(src, count, dst, to, stream);
    return cudaErrorInvalidValue;
}

/* The exact path's accumulators: int64, double (exact below 2^53) or
 * int32 (the low 32 bits of the exact sum). */
enum acc_kind { ACC_I64, ACC_F64, ACC_I32 };

template <typename To, bool BOOL>
__global__ void integer_result(const void *__restrict__ acc, int kind, long long alpha,
                               long long beta, const long long *__restrict__ c0, size_t n,
                               To *__restrict__ dst)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        /* Exact integers: a double below 2^53 converts without rounding;
         * an int32 sign-extends (its low bits are the result's). */
        unsigned long long v =
            kind == ACC_F64   ? (unsigned long long)__double2ll_rn(((const double *)acc)[i])
            : kind == ACC_I32 ? (unsigned long long)(long long)((const int *)acc)[i]
                              : ((const unsigned long long *)acc)[i];
        v *= (unsigned long long)alpha;
        if (beta != 0)
            v += (unsigned long long)beta * (unsigned long long)c0[i];
        dst[i] = BOOL ? (To)(v != 0) : (To)v;
    }
}

template <typename To, bool BOOL = false>
static cudaError_t integer_run(const void *acc, int kind, long long alpha, long long beta,
                               const long long *c0, size_t n, void *dst, cudaStream_t s)
{
    integer_result<To, BOOL><<<grid_for(n), 256, 0, s>>>(acc, kind, alpha, beta, c0, n,
                                                         (To *)dst);
    return launch_result();
}

extern "C" cudaError_t convert_integer_result_launch(const void *acc, enum gc_dtype acc_type,
                                                     int64_t alpha, int64_t beta,
                                                     const int64_t *c0, size_t count, void *dst,
                                                     enum gc_dtype to, cudaStream_t stream)
{
    if (count == 0)
        return cudaSuccess;
    int d = acc_type == GC_F64 ? ACC_F64 : acc_type == GC_I32 ? ACC_I32 : ACC_I64;
    const long long *c = (const long long *)c0;
    switch (to) {
    case GC_I8: return integer_run<int8_t>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_I16: return integer_run<int16_t>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_I32: return integer_run<int32_t>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_I64: return integer_run<long long>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_U8: return integer_run<uint8_t>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_U16: return integer_run<uint16_t>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_U32: return integer_run<uint32_t>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_U64: return integer_run<unsigned long long>(acc, d, alpha, beta, c, count, dst, stream);
    case GC_BOOL: return integer_run<uint8_t, true>(acc, d, alpha, beta, c, count, dst, stream);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T> __device__ __forceinline__ unsigned long long abs_u64(T v)
{
    if constexpr (std::is_signed<T>::value)
        return v < 0 ? 0ull - (unsigned long long)(long long)v : (unsigned long long)v;
    else
        return (unsigned long long)v;
}
template <> __device__ __forceinline__ unsigned long long abs_u64<bool_byte>(bool_byte v)
{
    return v.b != 0;
}

template <typename T>
__global__ void max_abs(const T *__restrict__ src, size_t n, unsigned long long *out)
{
    unsigned long long m = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long a = abs_u64(src[i]);
        m = a > m ? a : m;
    }
    for (int off = 16; off > 0; off /= 2) {
        unsigned long long o = __shfl_xor_sync(0xffffffffu, m, off);
        m = o > m ? o : m;
    }
    if (threadIdx.x % 32 == 0)
        atomicMax(out, m);
}

template <typename T>
static cudaError_t max_abs_run(const void *src, size_t n, unsigned long long *out, cudaStream_t s)
{
    size_t blocks = (n + 255) / 256;
    max_abs<T><<<(unsigned)(blocks < 1024 ? (blocks ? blocks : 1) : 1024), 256, 0, s>>>(
        (const T *)src, n, out);
    return launch_result();
}

extern "C" cudaError_t convert_max_abs_launch(const void *src, enum gc_dtype dt, size_t count,
                                              unsigned long long *d_max, cudaStream_t stream)
{
    cudaError_t err = cudaMemsetAsync(d_max, 0, sizeof *d_max, stream);
    if (err != cudaSuccess || count == 0)
        return err;
    switch (dt) {
    case GC_I8: return max_abs_run<int8_t>(src, count, d_max, stream);
    case GC_I16: return max_abs_run<int16_t>(src, count, d_max, stream);
    case GC_I32: return max_abs_run<int32_t>(src, count, d_max, stream);
    case GC_I64: return max_abs_run<long long>(src, count, d_max, stream);
    case GC_U8: return max_abs_run<uint8_t>(src, count, d_max, stream);
    case GC_U16: return max_abs_run<uint16_t>(src, count, d_max, stream);
    case GC_U32: return max_abs_run<uint32_t>(src, count, d_max, stream);
    case GC_U64: return max_abs_run<unsigned long long>(src, count, d_max, stream);
    case GC_BOOL: return max_abs_run<bool_byte>(src, count, d_max, stream);
    default: return cudaErrorInvalidValue;
    }
}
