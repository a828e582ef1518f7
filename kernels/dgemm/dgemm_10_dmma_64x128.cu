/* dgemm dmma_64x128: f64_dmma on 64 x 128 block tiles of 4 warps, a
 * 4-stage cp.async ring, two blocks an SM; for float64 products of a
 * middling size and for short wide ones.
 *
 * Against f64_dmma_128x64 (the same 4 warps of 64 x 32 and two blocks an
 * SM; kernels/dgemm/dmma.cuh holds both): the tile is turned, 64 rows of
 * 128 columns, so a block's warps lie side by side along N and share
 * their 64 rows of A; few rows waste less (148 rows fill 3 tiles of 64,
 * 77%, where tiles of 128 hold 58%).  Four stages of 25 KiB a block.
 *
 * The README ("Measurements behind the stages") has what each tile
 * gains and where the large tile keeps its products.
 *
 * ptxas (CUDA 13.0, sm_90): see tests/sass_check.sh; the main loop is
 * f64_dmma's, 64 DMMA.16x8x4 a tile of 16 values of k per warp.
 *
 * Follows no published write-up: gemmcli's own, f64_dmma on a smaller
 * tile.
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_dmma_64x128 --verify --repeat 20 */
#include "kernels/dgemm/dmma.cuh"

typedef dmma_cfg<64, 128, 4, 2> DN;

DMMA_STAGE(dmma_64x128, DN)
