/* dgemm dmma_small: f64_dmma on 64 x 64 block tiles of 2 warps, a
 * 3-stage cp.async ring, four blocks an SM; for the float64 products whose
 * 128 x 128 tiles are mostly empty or too few.
 *
 * Against f64_dmma (kernels/dgemm/dmma.cuh holds both): the fragments,
 * the banks, the copies, the barriers and the order of the blocks stay
 * (its header says how); the block tile shrinks from 128 x 128 to 64 x 64,
 * so a product of 101 x 189 computes on 2 x 3 tiles of which 78% is C
 * where the large tile's 1 x 2 hold 58%, and a product 24 columns wide
 * 38% where the large tile's hold 19%.  Two warps a block, each thread
 * copying two rows of B's k-group per chunk (four with 8-byte copies);
 * three stages of 17 KiB instead of five of 33, so that four blocks (8
 * warps, two a scheduler, as f64_dmma's one block has) share an SM and
 * cover each other's barriers and loads of L2.  A long K over few tiles
 * is split by the dispatcher as f64_dmma's is, from 4 times as many
 * tiles.
 *
 * ptxas (CUDA 13.0, sm_90): see tests/sass_check.sh; the main loop is
 * f64_dmma's, 64 DMMA.16x8x4 a tile of 16 values of k per warp.
 *
 * Follows no published write-up: gemmcli's own, f64_dmma on a smaller
 * tile.
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_dmma_small --verify --repeat 20 */
#include "kernels/dgemm/dmma.cuh"

typedef dmma_cfg<64, 64, 3, 4> DS;

DMMA_STAGE(dmma_small, DS)
