/* The passes around the TF32 tensor-core stages (kernels/sgemm/tf32_split.cu,
 * used by kernels/sgemm/sgemm_tf32.cuh and kernels/sgemm/sgemm_20_tf32.cu):
 * before the product, float operands are rounded to TF32, or split into a
 * TF32 high part and a TF32 low part, into packed copies that a tensor
 * map reads; after it (tf32x3), the rows and columns of C that met an
 * infinity are computed again in FP32.
 * Not registered kernels. */
#ifndef GC_KERNELS_TF32_SPLIT_H
#define GC_KERNELS_TF32_SPLIT_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One operand's packed copy: `count` matrices of `rows` x `ld` floats,
 * each as `parts` consecutive planes (part 0: x rounded to TF32, to
 * nearest; part 1 when parts == 2: x - part 0, rounded to TF32), columns
 * `cols` .. ld - 1 zero.  The source is row-major with rows `src_ld`
 * floats apart and matrices `src_stride` apart; `transpose` reads it as
 * its transpose (B, k x n, becomes n x k: K-major).  flags[m * rows + r]
 * (zeroed by the caller) is set to 1 when row r of matrix m of the copy
 * holds an infinity, and *any with it. */
struct tf32_pack {
    const float *src;
    long long src_ld, src_stride;
    int count, rows, cols, ld, parts;
    int transpose;
    float *dst;
    unsigned char *flags;
    int *any;
};

cudaError_t tf32_pack_launch(const struct tf32_pack *p, cudaStream_t stream);

/* dst[i] = src[i] rounded to TF32 (to nearest, ties away from zero;
 * infinities and NaNs as they are) for i < count: one pass at the copy's
 * rate, 16 bytes at a time where both are 16-byte aligned and count a
 * multiple of 4. */
cudaError_t tf32_round_launch(float *dst, const float *src, size_t count, cudaStream_t stream);

/* Rows of A and columns of B that hold an infinity, as tf32_pack flagged
 * them, for a stack of `batch` products C = alpha A B + beta C (dense,
 * row-major, matrices stride_* apart; a stride of 0 for A or B: one
 * matrix): each element of C in such a row or column is computed again
 * as an FP32 dot product in k order, which is what an FP32 GEMM gives
 * there (the split turns inf * b into inf * (b_hi + b_lo), NaN when b_lo
 * is 0).  Does nothing, on the device, when *any is 0. */
struct tf32_fixup {
    int m, n, k, batch;
    float alpha, beta;
    const float *a, *b;
    float *c;
    long long stride_a, stride_b, stride_c;
    const unsigned char *rows_a, *cols_b;   /* flags: per matrix of A (B) in the copy */
    const int *any;
    /* A product split along K into `slabs` partial sums, slab_stride
     * floats apart, c the first (alpha 1, beta 0): the fix-up writes the
     * whole dot product there and zeros into the other slabs, so that
     * their sum, with alpha and beta applied, is what an FP32 GEMM
     * gives. */
    int slabs;
    long long slab_stride;
};

cudaError_t tf32_fixup_launch(const struct tf32_fixup *f, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
