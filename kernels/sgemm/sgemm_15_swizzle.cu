/* swizzle: cp_async with the blocks rasterised in bands of 8 tile rows, for
 * L2 reuse; and swizzle_64x128, a 64x128 tile variant for grids that
 * 128x128 tiles fill badly.
 *
 * Against cp_async: in row-major order the 264 blocks resident at once span
 * about 8 tile rows of a 4096-wide C but all of B, so B may stream from
 * DRAM once per tile row.  Walking down a band of 8 tile rows before moving
 * right keeps the resident blocks on 8 tile rows and a few tile columns:
 * the A and B panels they read stay in L2.  swizzle_64x128 uses 2x2 warps
 * (128 threads, up to 4 blocks per SM): for 1000x3000 it makes 384 blocks
 * that fill the SMs evenly where 128x128 tiles make 192, a wave and a half.
 * A stack of products is one launch, product blockIdx.y: each product's
 * tiles are walked in bands, the products one after another.  At the
 * ladder's square sizes the band order's own gain is small (the README's
 * table).
 *
 * Follows "Efficient GEMM in CUDA" (CUTLASS), section "Threadblock
 * Rasterization" (CUTLASS's threadblock swizzle).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel swizzle --verify --repeat 20
 *   gemmcli mul a.npy b.npy -o c.npy --kernel swizzle_64x128 --verify --repeat 20 */
#include "kernels/sgemm/sgemm_pipeline.cuh"

enum { SWIZZLE_GROUP = 8 };

typedef pipe_cfg<4, 2, 16, 4> swizzle_cfg;
typedef pipe_cfg<2, 2, 16, 4> swizzle_64x128_cfg;

extern "C" cudaError_t sgemm_swizzle_launch(const struct sgemm_problem *p,
                                            const struct launch_env *env)
{
    return pipe_launch<swizzle_cfg, SWIZZLE_GROUP>(p, env, 1, p->k, NULL);
}

extern "C" cudaError_t sgemm_swizzle_attr(struct kernel_attr *out)
{
    return pipe_attr<swizzle_cfg, SWIZZLE_GROUP>(out);
}

extern "C" cudaError_t sgemm_swizzle_64x128_launch(const struct sgemm_problem *p,
                                                   const struct launch_env *env)
{
    return pipe_launch<swizzle_64x128_cfg, SWIZZLE_GROUP>(p, env, 1, p->k, NULL);
}

extern "C" cudaError_t sgemm_swizzle_64x128_attr(struct kernel_attr *out)
{
    return pipe_attr<swizzle_64x128_cfg, SWIZZLE_GROUP>(out);
}
