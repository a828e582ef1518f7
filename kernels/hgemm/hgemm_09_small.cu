/* f16_small: stacks of small products (M, N, K <= 64) with float16 or
 * bfloat16 operands, FP32 accumulation and float C, the float stage
 * `small` (sgemm_23_small.cu) on 16-bit operands.
 *
 * The same kernel (kernels/memory_bound/small.cuh): chunks copied by
 * cp.async into two shared buffers while the block multiplies the chunk
 * before, C stored from registers.  A 16-byte unit holds 8 values, so an
 * item of 4x8 results reads one LDS.128 per row of A for 8 steps of k and
 * one per row of B, and widens what it reads to float where it reads it
 * (HADD2.F32 for float16, a shift or a mask for bfloat16): 12 widenings
 * per 32 FFMA.  Products of two 16-bit values are exact in float, so the
 * sums are those of an FP32 GEMM on the widened operands, in k order.
 * Against the tensor-core stages, whose tiles (128 x 128 and up) are
 * nearly empty here; and C, in float, is half the bytes moved at 8x8x8.
 * Rows whose length is odd in values are copied 2 bytes at a time through
 * registers (cp.async moves 4, 8 or 16).
 *
 * Two configurations: M and N up to 32, 4x8 results per item, 4 blocks
 * per SM; up to 64, 8x8 results per item (16 widenings per 64 FFMA), 2
 * blocks per SM.  The SASS of the first holds 96 HADD2.F32 per 256 FFMA
 * for each 8 steps of k, as counted above; widening each value once, in
 * shared memory (as f16_simt does for its tiles), is not done here.
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy stacks of small float16 or bfloat16
 * matrices):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f16_small --verify --repeat 20 */
#include "kernels/memory_bound/small.cuh"

typedef small_cfg<__half, 32, 4, 8, 2, 4> small_f16_mid;
typedef small_cfg<__half, 64, 8, 8, 1, 2> small_f16_wide;
typedef small_cfg<__nv_bfloat16, 32, 4, 8, 2, 4> small_bf16_mid;
typedef small_cfg<__nv_bfloat16, 64, 8, 8, 1, 2> small_bf16_wide;

extern "C" int hgemm_small_check(const struct gemm_problem *p, char *why, size_t n)
{
    return small_check("f16_small", p, why, n);
}

extern "C" cudaError_t hgemm_small_launch(const struct hgemm_problem *p,
                                          const struct launch_env *env)
{
    if (p->batch > 1 && p->stride_c != (long long)p->m * p->n)
        return cudaErrorInvalidValue;
    if (p->bf16)
        return small_run<small_bf16_mid, small_bf16_wide>(
            small_args_of<small_bf16_mid>(p, p->lda, p->ldb), env);
    return small_run<small_f16_mid, small_f16_wide>(
        small_args_of<small_f16_mid>(p, p->lda, p->ldb), env);
}

extern "C" cudaError_t hgemm_small_attr(struct kernel_attr *out)
{
    return small_attr<small_f16_mid>(out);
}
