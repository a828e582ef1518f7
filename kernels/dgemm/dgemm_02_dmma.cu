/* dgemm dmma: FP64 on the tensor cores, by the warp-level
 * mma.sync.m16n8k4 with double operands (DMMA.16x8x4 in SASS), 128x128
 * block tiles, 64x32 of C per warp, a 5-stage cp.async ring; a stack of
 * products in one launch.
 *
 * Against f64_pipeline (DFMA on the CUDA cores, 8x8 doubles per thread):
 * the block tile, the ring of shared stages filled by cp.async, the zero
 * fill at the edges, the order of the blocks and the stack stay; the
 * arithmetic moves to the FP64 tensor cores, which retire 128 FMA per SM
 * and clock where the DFMA units retire 64, and one DMMA does the 512
 * multiply-adds of a 16x8x4 product in one issue slot where DFMA takes 16
 * warp instructions.  The main loop is bound not by issue but by keeping
 * the tensor pipe fed: at the peak each scheduler's share takes a
 * DMMA.16x8x4 every 16 clocks, so each of its 2 warps must have one ready
 * every 32.
 *
 * Fragments (the PTX ISA's layout for m16n8k4 .f64).  Lane l, g = l / 4,
 * t = l % 4, holds A rows g and g + 8 at k t (a0, a1); B row k t, column
 * g (b0); C rows g and g + 8 at columns 2t, 2t + 1 (c0, c1 and c2, c3).
 * Which rows and columns of the block those are is the kernel's choice,
 * the same for A or B and for C, so it picks them to make every fragment
 * one 16-byte load that lands in the registers as the DMMA takes them:
 *   - A is stored transposed (as[k][m]), and the mma's row g + 8 v of m16
 *     tile i is row 16 i + 2 g + v of the warp's piece: a0, a1 adjacent,
 *     one LDS.128 per m16 tile and k-step.
 *   - B keeps its layout (bs[k][n]), and the mma's column g of n8 tile j
 *     is column 2 g + j (j < 2) or 16 + 2 g + j - 2 (j >= 2) of the
 *     warp's 32: the b0 of tiles 0, 1 and of tiles 2, 3 are two LDS.128.
 *   - So lane (g, t) ends with rows 16 i + 2 g + {0, 1} and columns
 *     4 t + {0..3} and 16 + 4 t + {0..3} of the warp's piece: pairs of
 *     adjacent doubles for the stores of C.
 * Per k-step of 4 a warp loads 6 LDS.128 (4 of A, 2 of B) for 16 DMMA;
 * the next k-step's fragments load while this one multiplies (two sets of
 * 24 registers).  64 accumulators are 128 registers, so one block of 8
 * warps fills an SM (__launch_bounds__(256, 1)).
 *
 * Banks.  Rows of as and bs are 132 doubles, 1056 bytes: 2 (mod 8) units
 * of 16 bytes.  An LDS.128 is served 8 lanes at a time, lanes (g, t) with
 * g in {2p, 2p + 1}, t < 4, at rows k0 + t and units u + g: units 2 t + g
 * + const (mod 8), 8 distinct, for A and B alike.  Rows of 128 doubles
 * would put the 4 rows t on the same banks (4-way conflicts).  Copies:
 * B's 16-byte copies put 8 lanes on 8 adjacent units of one row (8-byte
 * copies, 16 lanes on 16 adjacent doubles); A's 8-byte copies, which also
 * transpose, give a warp rows m0..m0+3 at k0..k0+7 (m0 a multiple of 4,
 * k0 of 8), and element (k, m) sits at the 8-byte bank pair 4 k + m (mod
 * 16): two copies a pair.
 *
 * Copies.  A always moves in 8-byte pieces (the transpose), a warp
 * instruction taking 4 rows x 8 values of k (64 contiguous bytes of each
 * row, two whole sectors); B in 16-byte pieces where its rows are 16-byte
 * aligned (even N, aligned bases and batch strides), in 8-byte pieces
 * otherwise.  A tile of k is bk / 4 chunks (chunk s: half s / 2 of the
 * tile's k of two rows of A a thread, among the tile's rows s % 2 of 2,
 * and k-group s of its one or two rows of B), and the tile stages - 1 ahead is
 * issued one chunk per k-step, between the DMMAs.  Outside A or B a copy
 * reads nothing and fills zeros (src-size 0), so the main loop has no
 * bounds checks: the zeros of A past K meet the zeros of B past K, and
 * those past M or N land in results never stored.
 *
 * One barrier per tile, before its last k-step: every warp then holds the
 * tile's last fragments in registers, so the barrier both frees the
 * tile's slot for the copies that follow and publishes the next tile
 * (after cp.async.wait_group), whose first fragments load while the last
 * k-step multiplies.  Tile t + 1 is issued during tile t - 3: 48 values
 * of k, some 6000 clocks at the peak, cover the latency of L2.  Five
 * stages: the README ("Measurements behind the stages") has the counts
 * tried.
 *
 * Blocks.  x is the tile, walked down bands of 8 tile rows so that the
 * blocks resident at one time share their A rows and B columns in L2;
 * y + 65535 z is the product, so any batch fits one launch.
 *
 * A long K on few tiles.  Rows of A are lda apart (K, but for a split):
 * kernels/gemm_dispatch.c hands a single product whose tiles are fewer
 * than the SMs over as a stack of slices of K, at least 64 deep (its
 * row's slice_k: a small product, 115 x 253 x 674, takes 10 slices on
 * its 2 tiles) where they are 4 or more, else 256 deep at least, each
 * into its own FP64 slab, and sums the slabs in a fixed order (the README
 * has what the split gains).
 *
 * ptxas (CUDA 13.0, sm_90): 232 registers (234 with 8-byte copies of B),
 * no spills, 165 KiB of dynamic shared memory (5 stages of 33 KiB), one
 * block per SM.  The main loop's SASS per tile of 16 holds 64 DMMA.16x8x4
 * in 264 instructions: 24 LDS.128, 12 LDGSTS (8 of 8 bytes for A, 4 of 16
 * for B), one BAR.SYNC, 12 never-executed LDS before LDGSTS, 17 DEPBAR,
 * the rest addresses and predicates (281 with 8-byte copies of B: 16
 * LDGSTS).
 *
 * Its results equal DGEMM's bit for bit on tests/accuracy.py's data: both
 * sum in k order, one rounding per multiply-add.
 *
 * The kernel is kernels/dgemm/dmma.cuh's template at 128 x 128, five
 * stages, one block an SM (f64_dmma_small takes it at 64 x 64).
 *
 * Follows no published write-up: gemmcli's own, mma.sync m16n8k4 on
 * doubles (the PTX ISA's mma for .f64; the m16 shapes need sm_90) on the
 * f64_pipeline's ring.
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --kernel f64_dmma --verify --repeat 20 */
#include "kernels/dgemm/dmma.cuh"

typedef dmma_cfg<128, 128, 5, 1> DM;

DMMA_STAGE(dmma, DM)
