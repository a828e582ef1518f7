/* small: stacks of small products (M, N, K <= 64), such as NumPy's matmul
 * of (100000, 8, 8) by (100000, 8, 8), or of (4096, 32, 32) by one 32 x 32
 * matrix, for which the tile ladder's 128 x 128 tiles are nearly empty.
 *
 * Against the tile stages: at these sizes a product is bound by memory
 * (8x8x8: 1024 flops per 768 bytes; 32x32x32: 65536 per 12 KB), so the
 * stage is a stream of A, B and C at the memory's rate rather than a
 * tiling: the kernel in kernels/memory_bound/small.cuh moves the products
 * of a chunk in 16-byte copies (cp.async) into one of two shared buffers
 * while the block multiplies the chunk before, each thread computing tiles
 * of 4x4 results of a product from shared memory (8 LDS.128 per 64 FFMA),
 * and writes C from registers in 16-byte stores that cover whole rows.
 * Against thread_8x16 on 8x8x8, whose block computes one product in a
 * 128 x 128 tile (1/256 of it used), a block here computes dozens of
 * products at once; and where a tile stage reads a broadcast operand again
 * for every product, here it is copied once per block.  thin (M or N <= 32)
 * and small_k (K <= 32) take 8x8x8 and 32x32x32 too, but lay their blocks
 * over one product's columns (small_k a warp per strip of 128, thin a block
 * per product of the stack), which an 8-wide C fills a sliver of.
 *
 * Two configurations, chosen by the shape: M and N up to 32, 4x4 results
 * per item, 4 blocks of 128 threads per SM (a quarter of the shared memory
 * each); up to 64, 4x8 results per item, 2 blocks per SM.  The sums run in
 * k order, one FFMA per step, as the tile ladder's do.  Any batch, a stride
 * of 0 for A or B, beta != 0 and K = 0 are taken; M, N or K above 64 is
 * refused.
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy stacks of small matrices):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel small --verify --repeat 20 */
#include "kernels/memory_bound/small.cuh"

typedef small_cfg<float, 32, 4, 4, 2, 4> small_f32_mid;
typedef small_cfg<float, 64, 4, 8, 2, 2> small_f32_wide;

extern "C" int sgemm_small_check(const struct gemm_problem *p, char *why, size_t n)
{
    return small_check("small", p, why, n);
}

extern "C" cudaError_t sgemm_small_launch(const struct sgemm_problem *p,
                                          const struct launch_env *env)
{
    if (p->batch > 1 && p->stride_c != (long long)p->m * p->n)
        return cudaErrorInvalidValue;
    return small_run<small_f32_mid, small_f32_wide>(
        small_args_of<small_f32_mid>(p, p->k, p->n), env);
}

extern "C" cudaError_t sgemm_small_attr(struct kernel_attr *out)
{
    return small_attr<small_f32_mid>(out);
}
