/* The padded copies of 16-bit operands whose rows a stage cannot read in
 * place: the tensor maps of the persistent stages (hgemm_persistent.cuh:
 * rows, bases and matrices in 16-byte units) and mma_sync_128x64's 4-byte
 * copies of B (hgemm_01_mma_sync.cu: an odd N).  A copy has rows of
 * round_up(cols, 8) values, the stack's matrices packed one after the
 * other (one matrix for a broadcast operand), zeros in the pad columns;
 * both operands' copies share one buffer from the stream's pool
 * (cudaMallocAsync), which the caller gives back on the same stream after
 * its launch.  The source's matrices may overlap (the slices of K that
 * gemm_run_hgemm hands over).  Run through the stages that read it (a.npy
 * float16 or bfloat16 with an odd number of columns, b.npy likewise):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel persistent --verify
 *   gemmcli mul a.npy b.npy -o c.npy --kernel mma_sync_128x64 --verify */
#ifndef GC_KERNELS_HGEMM_PAD_CUH
#define GC_KERNELS_HGEMM_PAD_CUH

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

/* How an operand (a stack of rows x cols matrices) reaches a kernel: in
 * place, or through a padded copy. */
struct hpad_operand {
    const uint16_t *src;      /* the caller's operand */
    long long src_ld, src_stride;
    long long rows, cols;
    long long count;          /* matrices the map spans: the stack's, or 1 (broadcast) */
    int copy;                 /* 1: the kernel reads a padded copy */
    const uint16_t *base;     /* what the kernel reads (the copy, once made) */
    long long ld, stride;     /* its row and matrix strides, in values */
};

/* The plan of an operand that is copied where its rows are not whole units
 * of `unit` values (its base, its rows and its matrices apart): 8 for a
 * tensor map's 16 bytes, 2 for 4-byte copies.  A copy's rows are whole
 * 16-byte units. */
static inline void hpad_plan(struct hpad_operand *o, const void *base, long long rows,
                             long long cols, long long ld, long long batch, long long stride,
                             int unit)
{
    o->src = (const uint16_t *)base;
    o->src_ld = ld;
    o->rows = rows;
    o->cols = cols;
    o->count = batch > 1 && stride != 0 ? batch : 1;
    o->src_stride = o->count > 1 ? stride : 0;
    o->copy = ld % unit != 0 || (uintptr_t)base % (2 * unit) != 0 || o->src_stride % unit != 0;
    o->base = o->src;
    o->ld = o->copy ? (cols + 7) / 8 * 8 : ld;
    o->stride = o->copy && o->count > 1 ? rows * o->ld : o->src_stride;
}

/* Bytes of the operand's copy (0: read in place). */
static inline size_t hpad_copy_bytes(const struct hpad_operand *o)
{
    return o->copy ? (size_t)o->count * (size_t)o->rows * (size_t)o->ld * 2 : 0;
}

enum { HPAD_ALIGN = 256 };   /* B's copy after A's in one buffer */

static inline size_t hpad_buffer_bytes(const struct hpad_operand *a,
                                       const struct hpad_operand *b, size_t *b_offset)
{
    size_t ba = hpad_copy_bytes(a), bb = hpad_copy_bytes(b);
    *b_offset = (ba + HPAD_ALIGN - 1) / HPAD_ALIGN * HPAD_ALIGN;
    return bb ? *b_offset + bb : ba;
}

/* The padded copy: `count` matrices of rows x cols 16-bit values, rows
 * src_ld apart and matrices src_stride apart, into rows ld apart (a
 * multiple of 8) and matrices stride apart, zeros past cols.  A thread
 * writes one 16-byte unit of a row from eight 2-byte loads (the source's
 * rows are not 16-byte units, or it would not be copied).  A block is
 * blockDim.x units wide (as many as a row has, rounded up to a power of 2,
 * at most 256) and blockDim.y rows tall, and walks rows in steps of the
 * grid's, one division a row to find its matrix: a narrow A (K = 13, 2
 * units a row) used to take a 256-thread block a row, 254 of them idle,
 * and 10.4 us for 3691 rows (NVIDIA H200, 2026-11-26, ncu).  In place of
 * the copy engine's 2-D copy, it took float16 4097^3 from 211% to 229% of
 * GemmEx for persistent and from 248% to 264% for cluster_multicast
 * (gemmcli bench, cuBLAS in each run; NVIDIA H200, 2026-11-26); then
 * the stages that read it were persistent and cluster_multicast. */
static __global__ void hpad_kernel(const uint16_t *__restrict__ src, long long src_ld,
                                   long long src_stride, uint16_t *__restrict__ dst, long long ld,
                                   long long stride, long long rows, long long cols,
                                   long long count)
{
    long long units = ld / 8, all_rows = rows * count;
    for (long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y; row < all_rows;
         row += (long long)gridDim.y * blockDim.y) {
        long long mat = row / rows, r = row - mat * rows;
        const uint16_t *s = src + mat * src_stride + r * src_ld;
        uint16_t *d = dst + mat * stride + r * ld;
        for (long long u = blockIdx.x * (long long)blockDim.x + threadIdx.x; u < units;
             u += (long long)gridDim.x * blockDim.x) {
            long long c = u * 8;
            uint32_t w[4];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                uint32_t lo = c + 2 * j < cols ? s[c + 2 * j] : 0;
                uint32_t hi = c + 2 * j + 1 < cols ? s[c + 2 * j + 1] : 0;
                w[j] = lo | hi << 16;
            }
            *reinterpret_cast<uint4 *>(d + c) = make_uint4(w[0], w[1], w[2], w[3]);
        }
    }
}

/* The padded copy of `o` at `dst`, stream ordered. */
static inline cudaError_t hpad_copy(struct hpad_operand *o, uint16_t *dst,
                                    cudaStream_t stream)
{
    const int threads = 256;
    long long units = o->ld / 8, all_rows = o->rows * o->count;
    o->base = dst;
    if (units == 0 || all_rows == 0)
        return cudaSuccess;
    int tx = 1;
    while (tx < threads && tx < units)
        tx *= 2;
    dim3 block((unsigned)tx, (unsigned)(threads / tx));
    long long gx = (units + tx - 1) / tx, gy = (all_rows + block.y - 1) / block.y;
    dim3 grid((unsigned)(gx < 64 ? gx : 64), (unsigned)(gy < 65535 ? gy : 65535));
    hpad_kernel<<<grid, block, 0, stream>>>(o->src, o->src_ld, o->src_stride, dst, o->ld,
                                            o->count > 1 ? o->stride : 0, o->rows, o->cols,
                                            o->count);
    return cudaGetLastError();
}

/* Makes the copies the plans ask for into one buffer from the stream's
 * pool (*buf, NULL when none is needed; the caller frees it on the same
 * stream, also after an error). */
static inline cudaError_t hpad_stage(struct hpad_operand *a, struct hpad_operand *b,
                                     void **buf, cudaStream_t stream)
{
    size_t b_offset, bytes = hpad_buffer_bytes(a, b, &b_offset);
    *buf = NULL;
    if (bytes == 0)
        return cudaSuccess;
    cudaError_t err = cudaMallocAsync(buf, bytes, stream);
    if (err != cudaSuccess) {
        *buf = NULL;
        return err;
    }
    if (a->copy)
        err = hpad_copy(a, (uint16_t *)*buf, stream);
    if (err == cudaSuccess && b->copy)
        err = hpad_copy(b, (uint16_t *)((char *)*buf + b_offset), stream);
    return err;
}

#endif
