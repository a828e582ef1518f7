/* f64_small: stacks of small products (M, N, K <= 64) in FP64, the float
 * stage `small` (sgemm_23_small.cu) on doubles.
 *
 * The same kernel (kernels/memory_bound/small.cuh): chunks of products
 * copied by cp.async into two shared buffers while the block multiplies
 * the chunk before, tiles of 4x4 results per item, C stored from
 * registers.  A 16-byte unit holds 2 doubles, so an item reads 4 LDS.128
 * of A and 2 per row of B for each two steps of k (8 DFMA each).  FP64
 * products are heavier in bytes than in work: 8x8x8 moves 1536 bytes for
 * 512 DFMA and 32x32x32 24 KB for 32768, both below the FP64 rate where
 * the float versions are below the FP32 rate.  Against f64_dmma, whose
 * tensor-core tiles (64 x 64 and up) are mostly empty here.  The sums run
 * in k order with one DFMA per step, as f64_pipeline's.
 *
 * Two configurations: M and N up to 32, 4 blocks per SM; up to 64, 2
 * blocks per SM (a 64x64x64 product's A and B take 68 KB of shared
 * memory: one buffer, whose next copies start once the products are
 * done).  At 32^3 two buffers of doubles fill shared memory and only half
 * the block's threads compute.
 *
 * Follows no published write-up: gemmcli's own, for the memory-bound
 * shapes.
 *
 * Run and checked by (a.npy and b.npy stacks of small float64 matrices):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_small --verify --repeat 20 */
#include "kernels/memory_bound/small.cuh"

typedef small_cfg<double, 32, 4, 4, 2, 4> small_f64_mid;
typedef small_cfg<double, 64, 4, 4, 2, 2> small_f64_wide;

extern "C" int dgemm_small_check(const struct gemm_problem *p, char *why, size_t n)
{
    return small_check("f64_small", p, why, n);
}

extern "C" cudaError_t dgemm_small_launch(const struct dgemm_problem *p,
                                          const struct launch_env *env)
{
    if (p->batch > 1 && p->stride_c != (long long)p->m * p->n)
        return cudaErrorInvalidValue;
    return small_run<small_f64_mid, small_f64_wide>(
        small_args_of<small_f64_mid>(p, p->k, p->n), env);
}

extern "C" cudaError_t dgemm_small_attr(struct kernel_attr *out)
{
    return small_attr<small_f64_mid>(out);
}
