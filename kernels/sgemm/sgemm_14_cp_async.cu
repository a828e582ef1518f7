/* cp_async: a 4-stage cp.async pipeline from global to shared memory, A
 * transposed on the fly by the copy itself, 2 blocks of 256 threads per SM.
 *
 * Against prefetch: the next tiles do not pass through registers (LDG,
 * then STS after the FMAs): cp.async writes shared memory directly, three
 * tiles ahead, and the thread only waits on a group of copies when it needs
 * that tile.  Freed of the staging registers and held to 128 by
 * __launch_bounds__(256, 2), two blocks share each SM, so one block's
 * barrier is covered by the other's FMAs.  The kernel itself is in
 * sgemm_pipeline.cuh; this stage launches it with a plain row-major order
 * of blocks, 128x128x16 tiles.  A stack of products is one launch: product
 * blockIdx.y, the tiles of each in the same order.
 *
 * Follows "Efficient GEMM in CUDA" (CUTLASS), section "Software
 * Pipelining": several shared-memory stages in flight, here filled by
 * Ampere's cp.async (the PTX ISA).
 *
 * Run and checked by:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel cp_async --verify --repeat 20 */
#include "kernels/sgemm/sgemm_pipeline.cuh"

typedef pipe_cfg<4, 2, 16, 4> cp_async_cfg;

extern "C" cudaError_t sgemm_cp_async_launch(const struct sgemm_problem *p,
                                             const struct launch_env *env)
{
    return pipe_launch<cp_async_cfg, 0>(p, env, 1, p->k, NULL);
}

extern "C" cudaError_t sgemm_cp_async_attr(struct kernel_attr *out)
{
    return pipe_attr<cp_async_cfg, 0>(out);
}
