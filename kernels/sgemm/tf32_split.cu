/* The TF32 stages' passes before and after the product (tf32_split.h), run
 * by tf32 and tf32x3 (sgemm_20_tf32.cu, sgemm_21_tf32x3.cu):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel tf32x3 --compute tf32x3 --verify --repeat 20
 *
 * Packing.  A TF32 operand of wgmma must be K-major in shared memory (the
 * transposed layouts exist for 16-bit types only), and B arrives k x n
 * with N contiguous; so tf32x3's copy of B is B transposed, through a 32
 * x 32 tile in shared memory so that reads and writes both run along rows.
 * A keeps its layout.  Either way the copy is packed (rows of ld floats,
 * ld a multiple of 4 for the tensor map's 16-byte rows) and its values are
 * TF32 already: the tensor core reads the top 19 bits of a float and
 * ignores the rest, which truncates; rounding here makes it round to
 * nearest instead.  tf32 reads B through registers, as it is, and needs
 * the pack only where rows are not 16-byte multiples; its A, where they
 * are, takes the plain rounding copy (tf32_round_launch), 16 bytes a
 * thread.
 *
 * The split (3xTF32, after Ootomo and Yokota).  x = hi + lo + r with
 * hi = tf32(x) and lo = tf32(x - hi): x - hi is exact in FP32, and
 * |r| <= 2^-22 |x| or so, far below FP32's rounding of the products' sum.
 * hi * hi + hi * lo + lo * hi then carries about 21 bits of each product;
 * lo * lo (2^-22 relative) is left out.  A value whose rounding would
 * overflow (above the largest TF32 value) is truncated instead, so that a
 * finite x keeps a finite hi.  Infinities and NaNs become hi = x, lo = 0.
 *
 * Infinities.  NaN propagates through the three products as through one,
 * but an infinity does not: inf * (b_hi + b_lo) contains inf * 0 when b is
 * a TF32 value (b_lo = 0), NaN where an FP32 GEMM gives +-inf.  So the pack
 * flags the rows (of the copy: rows of A, columns of B) that hold an
 * infinity, the stages' epilogues leave those elements of C alone, and the
 * fix-up computes them afterwards as FP32 dot products, from the original
 * operands and C0.  With no infinity anywhere the fix-up kernel reads one
 * flag and returns. */
#include <stdint.h>

#include "kernels/common.cuh"
#include "kernels/sgemm/tf32_split.h"

enum {
    PACK_TILE = 32, PACK_ROWS = 8, FIXUP_THREADS = 256, FIXUP_BLOCKS = 2048,
    ROUND_THREADS = 256, ROUND_BLOCKS = 132 * 16
};

static __device__ __forceinline__ float tf32_round(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

/* x's high part: rounded to TF32, or truncated where rounding would
 * overflow; non-finite values as they are. */
static __device__ __forceinline__ float tf32_hi(float x)
{
    if (!isfinite(x))
        return x;
    float h = tf32_round(x);
    return isinf(h) ? __uint_as_float(__float_as_uint(x) & 0xffffe000u) : h;
}

/* Writes element (r, c) of matrix `mat` of the copy from the value v. */
static __device__ __forceinline__ void pack_put(const struct tf32_pack &p, int mat, int r, int c,
                                                float v)
{
    size_t plane = (size_t)p.rows * p.ld;
    float *out = p.dst + (size_t)mat * p.parts * plane + (size_t)r * p.ld + c;
    float hi = tf32_hi(v);
    out[0] = hi;
    if (p.parts == 2)
        out[plane] = isfinite(v) ? tf32_round(v - hi) : 0.0f;
    if (isinf(v)) {
        p.flags[(size_t)mat * p.rows + r] = 1;
        *p.any = 1;
    }
}

/* Block (x, y) packs the 32 x 32 tile of the copy at columns 32 x, rows
 * 32 y of every matrix blockIdx.z, blockIdx.z + gridDim.z, ...; columns
 * cols .. ld - 1 get zeros. */
template <bool T>
static __global__ void __launch_bounds__(PACK_TILE *PACK_ROWS)
tf32_pack_kernel(const struct tf32_pack p)
{
    __shared__ float tile[PACK_TILE][PACK_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c0 = blockIdx.x * PACK_TILE;
    const int row_tiles = (p.rows + PACK_TILE - 1) / PACK_TILE;
    for (int mat = blockIdx.z; mat < p.count; mat += gridDim.z) {
        const float *src = p.src + (long long)mat * p.src_stride;
        for (int ry = blockIdx.y; ry < row_tiles; ry += gridDim.y) {
            const int r0 = ry * PACK_TILE;
            if (T) {
                /* The copy's (r, c) is the source's (c, r): read along
                 * the source's rows (r), write along the copy's (c). */
#pragma unroll
                for (int i = 0; i < PACK_TILE; i += PACK_ROWS) {
                    int c = c0 + ty + i, r = r0 + tx;
                    tile[ty + i][tx] =
                        c < p.cols && r < p.rows ? src[(long long)c * p.src_ld + r] : 0.0f;
                }
                __syncthreads();
#pragma unroll
                for (int i = 0; i < PACK_TILE; i += PACK_ROWS) {
                    int r = r0 + ty + i, c = c0 + tx;
                    if (r < p.rows && c < p.ld)
                        pack_put(p, mat, r, c, tile[tx][ty + i]);
                }
                __syncthreads();
            } else {
#pragma unroll
                for (int i = 0; i < PACK_TILE; i += PACK_ROWS) {
                    int r = r0 + ty + i, c = c0 + tx;
                    if (r < p.rows && c < p.ld)
                        pack_put(p, mat, r, c,
                                 c < p.cols ? src[(long long)r * p.src_ld + c] : 0.0f);
                }
            }
        }
    }
}

extern "C" cudaError_t tf32_pack_launch(const struct tf32_pack *p, cudaStream_t stream)
{
    if (p->count < 1 || p->rows < 1 || p->ld < 1)
        return cudaSuccess;
    long long row_tiles = ((long long)p->rows + PACK_TILE - 1) / PACK_TILE;
    dim3 grid((unsigned)((p->ld + PACK_TILE - 1) / PACK_TILE),
              (unsigned)(row_tiles < 65535 ? row_tiles : 65535),
              (unsigned)(p->count < 65535 ? p->count : 65535));
    dim3 block(PACK_TILE, PACK_ROWS);
    if (p->transpose)
        tf32_pack_kernel<true><<<grid, block, 0, stream>>>(*p);
    else
        tf32_pack_kernel<false><<<grid, block, 0, stream>>>(*p);
    return launch_result();
}

/* The rounding copy: float4 a thread, grid-stride. */
static __global__ void __launch_bounds__(ROUND_THREADS)
tf32_round_kernel(float4 *dst, const float4 *src, size_t count4)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count4;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 v = src[i];
        dst[i] = make_float4(tf32_round(v.x), tf32_round(v.y), tf32_round(v.z), tf32_round(v.w));
    }
}

static __global__ void __launch_bounds__(ROUND_THREADS)
tf32_round1_kernel(float *dst, const float *src, size_t count)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = tf32_round(src[i]);
}

extern "C" cudaError_t tf32_round_launch(float *dst, const float *src, size_t count,
                                         cudaStream_t stream)
{
    if (count == 0)
        return cudaSuccess;
    bool vec = (uintptr_t)dst % 16 == 0 && (uintptr_t)src % 16 == 0 && count % 4 == 0;
    size_t items = vec ? count / 4 : count;
    size_t blocks = (items + ROUND_THREADS - 1) / ROUND_THREADS;
    unsigned grid = (unsigned)(blocks < (size_t)ROUND_BLOCKS ? blocks : (size_t)ROUND_BLOCKS);
    if (vec)
        tf32_round_kernel<<<grid, ROUND_THREADS, 0, stream>>>((float4 *)dst, (const float4 *)src,
                                                              items);
    else
        tf32_round1_kernel<<<grid, ROUND_THREADS, 0, stream>>>(dst, src, items);
    return launch_result();
}

/* C's element (r, j) of product `b` as an FP32 GEMM computes it. */
static __device__ __forceinline__ void fixup_one(const struct tf32_fixup &f, long long b, int r,
                                                 int j)
{
    const float *a = f.a + b * f.stride_a + (long long)r * f.k;
    const float *bb = f.b + b * f.stride_b + j;
    float acc = 0.0f;
    for (int kk = 0; kk < f.k; kk++)
        acc = fmaf(a[kk], bb[(long long)kk * f.n], acc);
    float *c = f.c + b * f.stride_c + (long long)r * f.n + j;
    *c = f.beta != 0.0f ? f.alpha * acc + f.beta * *c : f.alpha * acc;
    for (int s = 1; s < f.slabs; s++)
        c[s * f.slab_stride] = 0.0f;
}

/* Lines 0 .. batch m - 1 are rows of C (every element of a flagged row),
 * the next batch n its columns (the elements of a flagged column whose
 * row is not flagged: each element is written once). */
static __global__ void __launch_bounds__(FIXUP_THREADS) tf32_fixup_kernel(const struct tf32_fixup f)
{
    if (*(volatile const int *)f.any == 0)
        return;
    long long rows = (long long)f.batch * f.m, lines = rows + (long long)f.batch * f.n;
    for (long long line = blockIdx.x; line < lines; line += gridDim.x) {
        if (line < rows) {
            long long b = line / f.m;
            int r = (int)(line - b * f.m);
            if (!f.rows_a[(f.stride_a ? b : 0) * f.m + r])
                continue;
            for (int j = threadIdx.x; j < f.n; j += blockDim.x)
                fixup_one(f, b, r, j);
        } else {
            long long b = (line - rows) / f.n;
            int j = (int)(line - rows - b * f.n);
            if (!f.cols_b[(f.stride_b ? b : 0) * f.n + j])
                continue;
            const unsigned char *flag_a = f.rows_a + (f.stride_a ? b : 0) * f.m;
            for (int r = threadIdx.x; r < f.m; r += blockDim.x)
                if (!flag_a[r])
                    fixup_one(f, b, r, j);
        }
    }
}

extern "C" cudaError_t tf32_fixup_launch(const struct tf32_fixup *f, cudaStream_t stream)
{
    if (f->m < 1 || f->n < 1 || f->k < 1 || f->batch < 1)
        return cudaSuccess;
    long long lines = (long long)f->batch * ((long long)f->m + f->n);
    unsigned blocks = (unsigned)(lines < (long long)FIXUP_BLOCKS ? lines : (long long)FIXUP_BLOCKS);
    tf32_fixup_kernel<<<blocks, FIXUP_THREADS, 0, stream>>>(*f);
    return launch_result();
}
