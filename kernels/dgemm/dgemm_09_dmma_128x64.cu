/* dgemm dmma_128x64: f64_dmma on 128 x 64 block tiles of 4 warps, a
 * 3-stage cp.async ring, two blocks an SM; for float64 products of a
 * middling size and for tall ones with few columns.
 *
 * Against f64_dmma (kernels/dgemm/dmma.cuh holds both): the fragments,
 * the banks, the copies, the barriers and the order of the blocks stay
 * (dgemm_02_dmma.cu's header says how); the block tile halves along N, so
 * a block is 4 warps of 64 x 32 and two blocks share an SM.  Each block's
 * barrier then holds 4 warps, not 8, and while one block waits at it or
 * on its copies the other multiplies.  Three stages of 25 KiB a block; a
 * fourth (the 2 blocks' 205 KiB still fit) ran slower.  On 64 columns a
 * tile holds 64 x 128 of C where f64_dmma's holds half that.
 *
 * The README ("Measurements behind the stages") has what each tile
 * gains and where the large tile keeps its products.
 *
 * ptxas (CUDA 13.0, sm_90): see tests/sass_check.sh; the main loop is
 * f64_dmma's, 64 DMMA.16x8x4 a tile of 16 values of k per warp.
 *
 * Follows no published write-up: gemmcli's own, f64_dmma on a smaller
 * tile (cuBLAS's own FP64 kernels on Hopper run 128 x 64 and 64 x 64
 * tiles of 4 warps, ncu names them).
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_dmma_128x64 --verify --repeat 20 */
#include "kernels/dgemm/dmma.cuh"

typedef dmma_cfg<128, 64, 3, 2> DW;

DMMA_STAGE(dmma_128x64, DW)
