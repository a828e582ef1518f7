/* gemm_kernels[]: every mul kernel, each ladder in order.  `gemmcli
 * kernels`, --kernel, auto and its model, bench and the GPU tests all walk
 * this one table.  A stage is one file and one row of MUL_STAGES below:
 * the row declares what the file defines (FAMILY_ID_launch and
 * FAMILY_ID_attr; FAMILY_ID_workspace where it says WS or WS_SLICED,
 * FAMILY_ID_slices where it says WS_SLICED, FAMILY_ID_check where it says
 * CHECK) and makes its entry; nothing else names them.
 * tests/stage_docs.py checks that the file's header, the man page and the
 * README agree with the rows.
 *
 * Columns: the name for --kernel; the family (sgemm f32, hgemm f16 and
 * bf16, dgemm f64, igemm i64, i8gemm int8, limbgemm int16 and int32,
 * ozgemm float64 or float32 from int8 products: kernels/gemm.h); the
 * launcher's id; the signatures it computes; flags; the lowest compute
 * capability; its geometry for auto's model (below); WS if it takes
 * workspace from the stream's pool beyond the operands,
 * WS_SLICED where that workspace holds the slabs of slices of K a memory-
 * bound stage cuts itself (their count is auto's model's to ask), or NO_WS;
 * CHECK if it has conditions of its own (alignment, say) for can_implement,
 * or NO_CHECK; the file; the idea; the published work it follows.
 *
 * The geometry says how the stage lays a product on the GPU, which is all
 * auto's model (src/plan/model.c) knows of it besides its measured rate
 * (kernels/auto_table.c): GEO(tile_m, tile_n, per_sm, k_fill, spread,
 * slice_k, block_us), struct gemm_geometry in kernels/registry.h.  The
 * figures are the stage's own (its launcher's tile and blocks per SM; the
 * thin stages' 1 x 1: they read the wide operand once whatever the thin
 * side is, 1 x 8192 x 4096 float in 0.062 ms where 16 rows took 0.095,
 * NVIDIA H100, 2026-11-26).  A row with NO_GEO is never auto's choice. */
#include "kernels/gemm.h"

#define F32 (1u << GEMM_F32)
#define F16 (1u << GEMM_F16)
#define BF16 (1u << GEMM_BF16)
#define F64 (1u << GEMM_F64)
#define I64 (1u << GEMM_I64)
#define TF32 (1u << GEMM_TF32)
#define TF32X3 (1u << GEMM_TF32X3)
#define I8 (1u << GEMM_I8)
#define OZAKI (1u << GEMM_OZAKI)
#define I16 (1u << GEMM_I16)
#define I32 (1u << GEMM_I32)
#define OZAKI32 (1u << GEMM_OZAKI32)

#define B KERNEL_BATCHED
#define NA KERNEL_NO_AUTO
#define MB (KERNEL_BATCHED | KERNEL_MEMORY)
#define TC (KERNEL_BATCHED | KERNEL_SPLIT_K | KERNEL_K_LAST)
#define SM90A (KERNEL_BATCHED | KERNEL_SPLIT_K | KERNEL_ARCH_EXACT)
#define SM90A_F32 (KERNEL_BATCHED | KERNEL_ARCH_EXACT)
#define PERSIST KERNEL_PERSISTENT

#define GEO(tile_m, tile_n, per_sm, k_fill, spread, slice_k, block_us)                             \
    (&(const struct gemm_geometry){ tile_m, tile_n, per_sm, k_fill, SPREAD_##spread, slice_k,      \
                                    block_us })
#define NO_GEO NULL

#define MUL_STAGES(X)                                                                              \
    X("naive", sgemm, naive, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                                   \
      "kernels/sgemm/sgemm_00_naive.cu",                                                            \
      "one thread per element of C, warps walk down columns (uncoalesced)",                         \
      "How to optimize SGEMM on NVIDIA GPUs, kernel 1; CUDA programming: optimising matrix "        \
      "multiplication, naive")                                                                      \
    X("coalesced", sgemm, coalesced, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                           \
      "kernels/sgemm/sgemm_01_coalesced.cu",                                                        \
      "one thread per element, warps walk along rows of C",                                         \
      "CUDA programming: optimising matrix multiplication, memory coalescing")                      \
    X("smem", sgemm, smem, F32, 0, 0, GEO(32, 32, 2, 32, WAVES, 0, 0), NO_WS, NO_CHECK,             \
      "kernels/sgemm/sgemm_02_smem.cu",                                                             \
      "32x32 tiles of A and B staged in shared memory",                                             \
      "CUDA programming: optimising matrix multiplication, shared memory; How to optimize SGEMM "   \
      "on NVIDIA GPUs, kernel 2")                                                                   \
    X("blocktile_1d", sgemm, blocktile_1d, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                     \
      "kernels/sgemm/sgemm_03_blocktile_1d.cu",                                                     \
      "64x64 block tile, 8 results per thread along a column",                                      \
      "SGEMM Optimization, 1D-tile; How to optimize SGEMM on NVIDIA GPUs, kernel 5")                \
    X("blocktile_2d", sgemm, blocktile_2d, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                     \
      "kernels/sgemm/sgemm_04_blocktile_2d.cu",                                                     \
      "128x128 block tile, 8x8 results per thread",                                                 \
      "SGEMM Optimization, 2D-tile; How to optimize SGEMM on NVIDIA GPUs, kernels 7-8")             \
    X("outer_product", sgemm, outer_product, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                   \
      "kernels/sgemm/sgemm_05_outer_product.cu",                                                    \
      "2D tile with operands cached in registers (outer product)",                                  \
      "SGEMM Optimization, 2D-tile register")                                                       \
    X("strided_4x4", sgemm, strided_4x4, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                       \
      "kernels/sgemm/sgemm_06_strided_4x4.cu",                                                      \
      "1024 threads, 4x4 results each, 32 apart",                                                   \
      "Matrix multiplication (RTX 3060 Laptop write-up), matrixMul_2_1")                            \
    X("contiguous_4x4", sgemm, contiguous_4x4, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                 \
      "kernels/sgemm/sgemm_07_contiguous_4x4.cu",                                                   \
      "1024 threads, contiguous 4x4 results (LDS.128)",                                             \
      "Matrix multiplication (RTX 3060 Laptop write-up), matrixMul_2_2")                            \
    X("vec4", sgemm, vec4, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                                     \
      "kernels/sgemm/sgemm_08_vec4.cu",                                                             \
      "float4 loads, A transposed in shared memory",                                                \
      "SGEMM Optimization, float4; How to optimize SGEMM on NVIDIA GPUs, kernel 6; Matrix "         \
      "multiplication (RTX 3060 Laptop write-up), matrixMul_3 and _4")                              \
    X("double_buffer", sgemm, double_buffer, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                   \
      "kernels/sgemm/sgemm_09_double_buffer.cu",                                                    \
      "two shared buffers, next tile loaded during the FMAs",                                       \
      "SGEMM Optimization, double buffer; How to optimize SGEMM on NVIDIA GPUs, kernel 11")         \
    X("padded", sgemm, padded, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                                 \
      "kernels/sgemm/sgemm_10_padded.cu",                                                           \
      "A tile rows padded to BM+4: conflict-free stores",                                           \
      "SGEMM Optimization, eliminating bank conflicts (BM+4)")                                      \
    X("zorder", sgemm, zorder, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                                 \
      "kernels/sgemm/sgemm_11_zorder.cu",                                                           \
      "z-order lanes, 2x2 of 4x4 per thread: conflict-free loads",                                  \
      "SGEMM Optimization, z-order; a hgemm tvm schedule, virtual threads")                         \
    X("warptile", sgemm, warptile, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                             \
      "kernels/sgemm/sgemm_12_warptile.cu",                                                         \
      "block, warp (32x64) and lane tiles; BK 16",                                                  \
      "How to optimize SGEMM on NVIDIA GPUs, kernel 9")                                             \
    X("prefetch", sgemm, prefetch, F32, NA, 0, NO_GEO, NO_WS, NO_CHECK,                             \
      "kernels/sgemm/sgemm_13_prefetch.cu",                                                         \
      "next step's operands read into registers during the FMAs",                                   \
      "How to optimize SGEMM on NVIDIA GPUs, kernel 10")                                            \
    X("cp_async", sgemm, cp_async, F32, B, 80, GEO(128, 128, 2, 64, WAVES, 0, 0), NO_WS, NO_CHECK,  \
      "kernels/sgemm/sgemm_14_cp_async.cu",                                                         \
      "4-stage cp.async pipeline, 2 blocks per SM",                                                 \
      "Efficient GEMM in CUDA (CUTLASS), software pipelining")                                      \
    X("swizzle", sgemm, swizzle, F32, B, 80, GEO(128, 128, 2, 64, WAVES, 0, 0), NO_WS, NO_CHECK,    \
      "kernels/sgemm/sgemm_15_swizzle.cu",                                                          \
      "cp_async with blocks in bands of 8 tile rows (L2 reuse)",                                    \
      "Efficient GEMM in CUDA (CUTLASS), threadblock rasterization")                                \
    X("swizzle_64x128", sgemm, swizzle_64x128, F32, B, 80, GEO(64, 128, 2, 64, WAVES, 0, 0), NO_WS, NO_CHECK, \
      "kernels/sgemm/sgemm_15_swizzle.cu",                                                          \
      "swizzle with 64x128 tiles for small grids",                                                  \
      "Efficient GEMM in CUDA (CUTLASS), threadblock rasterization")                                \
    X("splitk", sgemm, splitk, F32, B, 80, GEO(128, 128, 2, 64, SLICES, 128, 0), WS, NO_CHECK,      \
      "kernels/sgemm/sgemm_16_splitk.cu",                                                           \
      "swizzle with K split across blocks when M x N is small",                                     \
      "Efficient GEMM in CUDA (CUTLASS), split K; How to optimize SGEMM on NVIDIA GPUs, extra "     \
      "notes")                                                                                      \
    X("splitk_64x128", sgemm, splitk_64x128, F32, B, 80, GEO(64, 128, 3, 64, SLICES, 128, 0), WS,   \
      NO_CHECK, "kernels/sgemm/sgemm_16_splitk.cu",                                                 \
      "splitk on swizzle_64x128's tile: a few rows over a long K",                                  \
      "Efficient GEMM in CUDA (CUTLASS), split K")                                                  \
    X("splitk_128x64", sgemm, splitk_128x64, F32, B, 80, GEO(128, 64, 3, 64, SLICES, 128, 0), WS,   \
      NO_CHECK, "kernels/sgemm/sgemm_16_splitk.cu",                                                 \
      "splitk on a 128 x 64 tile: N just past a multiple of 128",                                   \
      "Efficient GEMM in CUDA (CUTLASS), split K")                                                  \
    X("splitk_32x128", sgemm, splitk_32x128, F32, B, 80, GEO(32, 128, 7, 64, SLICES, 64, 0), WS,    \
      CHECK, "kernels/sgemm/sgemm_16_splitk.cu",                                                    \
      "splitk on a 32 x 128 tile of 64 threads: 32 rows or fewer over a long K",                    \
      "Efficient GEMM in CUDA (CUTLASS), split K")                                                  \
    X("thread_8x16", sgemm, thread_8x16, F32, B, 80, GEO(128, 128, 2, 64, WAVES, 0, 0), NO_WS, NO_CHECK, \
      "kernels/sgemm/sgemm_17_thread_8x16.cu",                                                      \
      "64x64 warp tiles, 8x16 results per thread, 128 threads",                                     \
      "gemmcli's own")                                                                              \
    X("narrow_256x64", sgemm, narrow_256x64, F32, B, 80, GEO(256, 64, 2, 64, WAVES, 0, 0), NO_WS, NO_CHECK, \
      "kernels/sgemm/sgemm_17_thread_8x16.cu",                                                      \
      "thread_8x16 with 256x64 blocks for narrow N",                                                \
      "gemmcli's own")                                                                              \
    X("stream_k", sgemm, stream_k, F32, B, 80, GEO(128, 128, 2, 64, STREAM_K, 0, 0), NO_WS, NO_CHECK, \
      "kernels/sgemm/sgemm_18_stream_k.cu",                                                         \
      "thread_8x16 with the last partial wave split by k-steps",                                    \
      "Stream-K: Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication on "    \
      "the GPU, hybrid")                                                                            \
    X("edge_peel", sgemm, edge_peel, F32, B, 80, GEO(128, 128, 2, 64, STREAM_K, 0, 0), WS, NO_CHECK, \
      "kernels/sgemm/sgemm_19_edge_peel.cu",                                                        \
      "stream_k on whole tiles; thin leftover edges by a strip kernel",                             \
      "gemmcli's own, on Stream-K")                                                                 \
    X("gemv", sgemm, gemv, F32, KERNEL_VECTOR | MB, 0, GEO(1, 1, 1, 0, MEMORY, 0, 0), WS_SLICED, CHECK, \
      "kernels/sgemm/sgemm_22_gemv.cu",                                                             \
      "vector times matrix (M = 1, K split) or matrix times vector (N = 1, a warp per row)",        \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("small", sgemm, small, F32, MB, 80, GEO(4, 4, 4, 0, MEMORY, 0, 0), NO_WS, CHECK,              \
      "kernels/sgemm/sgemm_23_small.cu",                                                            \
      "stacks of products up to 64x64x64: chunks streamed by cp.async, 4x4 results per item",       \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("thin", sgemm, thin, F32, MB, 0, GEO(1, 1, 1, 0, MEMORY, 0, 4.0), WS_SLICED, CHECK,            \
      "kernels/sgemm/sgemm_24_thin.cu",                                                             \
      "a thin side (M or N <= 32): the wide operand streamed once, K split into slices",            \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("small_k", sgemm, small_k, F32, MB, 0, GEO(1, 128, 1, 0, MEMORY, 0, 0), NO_WS, CHECK,         \
      "kernels/sgemm/sgemm_25_small_k.cu",                                                          \
      "K <= 32: a warp per strip of 128 columns and a band of rows, B in registers, C written as "  \
      "a copy",                                                                                     \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("tiny", sgemm, tiny, F32, B, 0, GEO(32, 32, 2, 128, WAVES, 0, 0), NO_WS, NO_CHECK,            \
      "kernels/sgemm/sgemm_26_tiny.cu",                                                             \
      "tiny products: 32x32 tiles, K split over a block's 8 warps, FFMA from warp-private staging",  \
      "gemmcli's own")                                                                              \
    X("f16_simt", hgemm, simt, F16, B, 80, GEO(128, 128, 2, 64, WAVES, 0, 0), NO_WS, NO_CHECK,      \
      "kernels/hgemm/hgemm_00_simt.cu",                                                             \
      "f16 operands by cp.async, widened once per tile in shared memory, FP32 FFMA",                \
      "gemmcli's own")                                                                              \
    X("f16_small", hgemm, small, F16 | BF16, MB, 80, GEO(4, 8, 4, 0, MEMORY, 0, 0), NO_WS, CHECK,   \
      "kernels/hgemm/hgemm_09_small.cu",                                                            \
      "small's stacks on f16 and bf16 operands, widened to FP32 where they are read",               \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("mma_sync", hgemm, mma_sync, F16 | BF16, TC, 80, GEO(128, 256, 1, 128, SLICES, 512, 0), NO_WS, NO_CHECK, \
      "kernels/hgemm/hgemm_01_mma_sync.cu",                                                         \
      "tensor cores by warp: mma.sync m16n8k16, ldmatrix from a 4-stage cp.async ring",             \
      "Efficient GEMM in CUDA (CUTLASS), warp-level mma.sync")                                      \
    X("mma_sync_128x128", hgemm, mma_sync_128x128, F16 | BF16, TC, 80, GEO(128, 128, 2, 128, SLICES, 512, 0), NO_WS, NO_CHECK, \
      "kernels/hgemm/hgemm_01_mma_sync.cu",                                                         \
      "mma_sync on a 128 x 128 tile of 4 warps, two blocks an SM: N of 128 or less, or a little past", \
      "Efficient GEMM in CUDA (CUTLASS), warp-level mma.sync")                                      \
    X("mma_sync_128x64", hgemm, mma_sync_128x64, F16 | BF16, TC, 80, GEO(128, 64, 4, 128, SLICES, 512, 0), WS, CHECK, \
      "kernels/hgemm/hgemm_01_mma_sync.cu",                                                         \
      "mma_sync on a 128 x 64 tile of 2 warps, four blocks an SM: N of 64 or less",                 \
      "Efficient GEMM in CUDA (CUTLASS), warp-level mma.sync")                                      \
    X("wgmma", hgemm, wgmma, F16 | BF16, SM90A, 90, GEO(128, 128, 1, 128, SLICES, 2048, 0), NO_WS, CHECK, \
      "kernels/hgemm/hgemm_02_wgmma.cu",                                                            \
      "Hopper warpgroup MMA (wgmma) from 128-byte swizzled shared tiles",                           \
      "Outperforming cuBLAS on H100: a Worklog, wgmma")                                             \
    X("wgmma_tma", hgemm, wgmma_tma, F16 | BF16, SM90A, 90, GEO(128, 128, 1, 128, SLICES, 2048, 0), NO_WS, CHECK, \
      "kernels/hgemm/hgemm_03_wgmma_tma.cu",                                                        \
      "wgmma with tiles brought by the Tensor Memory Accelerator and an mbarrier",                  \
      "Outperforming cuBLAS on H100: a Worklog, TMA")                                               \
    X("wgmma_pipeline", hgemm, wgmma_pipeline, F16 | BF16, SM90A, 90, GEO(128, 256, 1, 256, SLICES, 2048, 0), NO_WS, CHECK, \
      "kernels/hgemm/hgemm_04_wgmma_pipeline.cu",                                                   \
      "a 4-slot TMA ring with full and empty mbarriers; two warpgroups on 128x256",                 \
      "Outperforming cuBLAS on H100: a Worklog, larger tiles, full and empty barriers")             \
    X("warp_specialized", hgemm, warp_specialized, F16 | BF16, SM90A, 90, GEO(128, 256, 1, 256, SLICES, 2048, 0), NO_WS, CHECK, \
      "kernels/hgemm/hgemm_05_warp_specialized.cu",                                                 \
      "a producer warpgroup feeds a 4-slot TMA ring; two consumers, setmaxnreg, 128x256",           \
      "Outperforming cuBLAS on H100: a Worklog, warp specialisation")                               \
    X("persistent", hgemm, persistent, F16 | BF16, SM90A | PERSIST, 90, GEO(128, 256, 1, 256, SLICES, 2048, 0), WS, CHECK, \
      "kernels/hgemm/hgemm_06_persistent.cu",                                                       \
      "warp_specialized on a persistent grid in L2 bands; padded copies take any shape",            \
      "Outperforming cuBLAS on H100: a Worklog, persistent blocks")                                 \
    X("cluster_multicast", hgemm, cluster_multicast, F16 | BF16, SM90A | PERSIST, 90, GEO(128, 256, 1, 256, SLICES, 2048, 0), WS, CHECK, \
      "kernels/hgemm/hgemm_07_cluster_multicast.cu",                                                \
      "persistent in clusters of 2 sharing B by TMA multicast; TMA-store epilogue",                 \
      "Outperforming cuBLAS on H100: a Worklog, clusters and TMA multicast")                        \
    X("f16_gemv", hgemm, gemv, F16 | BF16, KERNEL_VECTOR | MB, 0, GEO(1, 1, 1, 0, MEMORY, 0, 0), WS_SLICED, CHECK, \
      "kernels/hgemm/hgemm_08_gemv.cu",                                                             \
      "f16/bf16 vector times matrix or matrix times vector: gemv's kernels, FP32 accumulation",     \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("f16_thin", hgemm, thin, F16 | BF16, MB, 0, GEO(1, 1, 1, 0, MEMORY, 0, 4.0), WS_SLICED, CHECK,       \
      "kernels/hgemm/hgemm_10_thin.cu",                                                             \
      "thin's kernels on f16/bf16 operands: the wide operand streamed once, FP32 sums",             \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("f16_small_k", hgemm, small_k, F16 | BF16, MB, 0, GEO(1, 128, 1, 0, MEMORY, 0, 0), NO_WS, CHECK, \
      "kernels/hgemm/hgemm_11_small_k.cu",                                                          \
      "small_k's kernels on f16/bf16 operands: K <= 32, C written as a copy, FP32 sums",            \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("mma_tiny", hgemm, mma_tiny, F16 | BF16, TC, 80, GEO(32, 32, 2, 128, SLICES, 512, 0), NO_WS, NO_CHECK, \
      "kernels/hgemm/hgemm_12_mma_tiny.cu",                                                         \
      "tiny products: 32x32 tiles, K split over a block's 8 warps, fragments straight from global", \
      "gemmcli's own, mma.sync m16n8k16")                                                           \
    X("mma_thin", hgemm, mma_thin, F16 | BF16, MB, 80, GEO(1, 1, 1, 0, MEMORY, 0, 4.0), WS_SLICED, CHECK, \
      "kernels/hgemm/hgemm_13_mma_thin.cu",                                                         \
      "M <= 16 over a wide B (paired by PRMT into mma.sync fragments) or N <= 16 under a tall A, K sliced", \
      "gemmcli's own, memory-bound shapes, mma.sync m16n8k16")                                      \
    X("tf32", sgemm, tf32, TF32, SM90A_F32 | PERSIST, 90, GEO(256, 128, 1, 128, SLICES, 256, 0), WS, CHECK,   \
      "kernels/sgemm/sgemm_20_tf32.cu",                                                             \
      "float on the tensor cores, one TF32 pass (lossy): C^T = B^T A^T, B from registers",          \
      "gemmcli's own, persistent's kernel on TF32 wgmma")                                           \
    X("tf32x3", sgemm, tf32x3, TF32X3, SM90A_F32 | PERSIST, 90, GEO(128, 256, 1, 128, SLICES, 256, 0), WS, CHECK, \
      "kernels/sgemm/sgemm_21_tf32x3.cu",                                                           \
      "3xTF32: high and low TF32 parts, three products, sums promoted to FP32 every 32 of k",       \
      "Recovering single precision accuracy from Tensor Cores while surpassing the FP32 "           \
      "theoretical peak performance, 3xTF32")                                                       \
    X("f64_naive", dgemm, naive, F64, B, 0, GEO(32, 32, 1, 0, WAVES, 0, 0), NO_WS, NO_CHECK,        \
      "kernels/dgemm/dgemm_00_naive.cu",                                                            \
      "FP64: one thread per element of C, coalesced rows",                                          \
      "CUDA programming: optimising matrix multiplication, memory coalescing, in FP64")             \
    X("f64_pipeline", dgemm, pipeline, F64, B, 80, GEO(128, 128, 1, 64, WAVES, 0, 0), NO_WS, NO_CHECK, \
      "kernels/dgemm/dgemm_01_pipeline.cu",                                                         \
      "FP64: cp.async pipeline, 8x8 doubles per thread, DFMA",                                      \
      "gemmcli's own, the cp_async pipeline on doubles")                                            \
    X("f64_small", dgemm, small, F64, MB, 80, GEO(4, 4, 4, 0, MEMORY, 0, 0), NO_WS, CHECK,          \
      "kernels/dgemm/dgemm_04_small.cu",                                                            \
      "small's stacks in FP64: chunks streamed by cp.async, 4x4 results per item, DFMA",            \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("f64_dmma", dgemm, dmma, F64, TC, 90, GEO(128, 128, 1, 80, SLICES, 64, 0), NO_WS, NO_CHECK,  \
      "kernels/dgemm/dgemm_02_dmma.cu",                                                             \
      "FP64 tensor cores: mma.sync m16n8k4 (DMMA), LDS.128 fragments, 5-stage cp.async ring",       \
      "gemmcli's own, mma.sync m16n8k4 on doubles")                                                 \
    X("f64_gemv", dgemm, gemv, F64, KERNEL_VECTOR | MB, 0, GEO(1, 1, 1, 0, MEMORY, 0, 0), WS_SLICED, CHECK, \
      "kernels/dgemm/dgemm_03_gemv.cu",                                                             \
      "FP64 vector times matrix or matrix times vector: gemv's kernels, double partial sums",       \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("f64_thin", dgemm, thin, F64, MB, 0, GEO(1, 1, 1, 0, MEMORY, 0, 4.0), WS_SLICED, CHECK,              \
      "kernels/dgemm/dgemm_05_thin.cu",                                                             \
      "thin's kernels in FP64: the wide operand streamed once, 2 columns a thread, K sliced",       \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("f64_small_k", dgemm, small_k, F64, MB, 0, GEO(1, 64, 1, 0, MEMORY, 0, 0), NO_WS, CHECK,      \
      "kernels/dgemm/dgemm_06_small_k.cu",                                                          \
      "small_k's kernels in FP64: K <= 32, C written as a copy, 2 columns a lane (1 past K = 16)",  \
      "gemmcli's own, memory-bound shapes")                                                         \
    X("f64_dmma_small", dgemm, dmma_small, F64, TC, 90, GEO(64, 64, 4, 80, SLICES, 64, 0), NO_WS, NO_CHECK,  \
      "kernels/dgemm/dgemm_07_dmma_small.cu",                                                       \
      "f64_dmma on 64x64 tiles of 2 warps, a 3-stage ring, 4 blocks an SM",                          \
      "gemmcli's own, f64_dmma on a smaller tile")                                                  \
    X("f64_dmma_tiny", dgemm, dmma_tiny, F64, TC, 80, GEO(32, 32, 3, 32, SLICES, 128, 0), NO_WS, NO_CHECK, \
      "kernels/dgemm/dgemm_08_dmma_tiny.cu",                                                        \
      "tiny FP64 products: 32x32 tiles, K split over a block's 4 warps, DMMA fragments from global", \
      "gemmcli's own, mma.sync m8n8k4 on doubles")                                                  \
    X("f64_dmma_128x64", dgemm, dmma_128x64, F64, TC, 90, GEO(128, 64, 2, 80, SLICES, 64, 0), NO_WS, \
      NO_CHECK, "kernels/dgemm/dgemm_09_dmma_128x64.cu",                                            \
      "f64_dmma on 128x64 tiles of 4 warps, a 3-stage ring, 2 blocks an SM",                        \
      "gemmcli's own, f64_dmma on a smaller tile")                                                  \
    X("f64_dmma_64x128", dgemm, dmma_64x128, F64, TC, 90, GEO(64, 128, 2, 80, SLICES, 64, 0), NO_WS, \
      NO_CHECK, "kernels/dgemm/dgemm_10_dmma_64x128.cu",                                            \
      "f64_dmma on 64x128 tiles of 4 warps, a 4-stage ring, 2 blocks an SM",                        \
      "gemmcli's own, f64_dmma on a smaller tile")                                                  \
    X("i64_tiled", igemm, tiled, I64, B, 0, GEO(64, 64, 4, 32, WAVES, 0, 0), NO_WS, NO_CHECK,       \
      "kernels/igemm/igemm_00_tiled.cu",                                                            \
      "exact int64 (mod 2^64) in shared-memory tiles",                                              \
      "SGEMM Optimization, 2D-tile, in exact int64")                                                \
    X("i8_dp4a", i8gemm, dp4a, I8, B, 61, GEO(64, 64, 4, 32, WAVES, 0, 0), NO_WS, NO_CHECK,        \
      "kernels/igemm/igemm_01_dp4a.cu",                                                             \
      "int8 in shared-memory tiles, four products a DP4A, exact int32 sums",                        \
      "gemmcli's own, dp4a on the CUDA cores")                                                      \
    X("i8_imma", i8gemm, imma, I8, B, 80, GEO(128, 128, 2, 64, WAVES, 0, 0), NO_WS, NO_CHECK,      \
      "kernels/igemm/igemm_02_imma.cu",                                                             \
      "int8 tensor cores: mma.sync m16n8k32 (IMMA), B's bytes turned k-major in shared memory",     \
      "gemmcli's own, mma.sync m16n8k32 on int8")                                                   \
    X("i8_igmma", i8gemm, igmma, I8, B | KERNEL_ARCH_EXACT, 90,                                     \
      GEO(128, 256, 1, 128, WAVES, 0, 0), WS, CHECK, "kernels/igemm/igemm_03_igmma.cu",             \
      "int8 wgmma (IGMMA): B^T written first, a TMA ring, producer and two consumers, 128x256",      \
      "gemmcli's own, warp_specialized's ring on int8")                                             \
    X("i8_limbs", limbgemm, limbs, I16 | I32, B | KERNEL_ARCH_EXACT, 90,                            \
      GEO(128, 256, 1, 128, WAVES, 0, 0), WS, CHECK, "kernels/igemm/igemm_04_limbs.cu",             \
      "int16 and int32 as signed byte limbs: L (L + 1) / 2 i8_igmma products, Horner on C",         \
      "gemmcli's own, byte limbs on the int8 tensor cores (after Ozaki scheme II)")                 \
    X("i8_ozaki", ozgemm, ozaki, OZAKI | OZAKI32, KERNEL_ARCH_EXACT, 90,                           \
      GEO(128, 256, 1, 128, WAVES, 0, 0), WS, CHECK, "kernels/igemm/igemm_05_ozaki.cu",             \
      "float64 (or float32) from int8 products: residues modulo 16 (9) moduli on i8_igmma, CRT sum", \
      "Ozaki, Uchino and Imamura, Ozaki scheme II (the Chinese remainder theorem over int8 products)")


/* The declarations and entries a row's WS and CHECK columns stand for. */
#define DECLARE_NO_WS(fam, id)
#define DECLARE_WS(fam, id) size_t fam##_##id##_workspace(const struct gemm_problem *p);
#define DECLARE_WS_SLICED(fam, id)                                                                 \
    DECLARE_WS(fam, id) int64_t fam##_##id##_slices(const struct gemm_problem *p, int sm_count,    \
                                                    int *joined, double *busy);
#define DECLARE_NO_CHECK(fam, id)
#define DECLARE_CHECK(fam, id)                                                                     \
    int fam##_##id##_check(const struct gemm_problem *p, char *why, size_t n);
#define ENTRY_NO_WS(fam, id) NULL
#define ENTRY_WS(fam, id) fam##_##id##_workspace
#define ENTRY_WS_SLICED(fam, id) fam##_##id##_workspace
#define SLICES_NO_WS(fam, id) NULL
#define SLICES_WS(fam, id) NULL
#define SLICES_WS_SLICED(fam, id) fam##_##id##_slices
#define ENTRY_NO_CHECK(fam, id) NULL
#define ENTRY_CHECK(fam, id) fam##_##id##_check

#define DECLARE(name, fam, id, sigs, flags, cc, geometry, ws, check, file, idea, source)          \
    cudaError_t fam##_##id##_launch(const struct fam##_problem *p, const struct launch_env *env); \
    cudaError_t fam##_##id##_attr(struct kernel_attr *out);                                        \
    DECLARE_##ws(fam, id) DECLARE_##check(fam, id)
MUL_STAGES(DECLARE)

/* cuBLAS in every signature it has (kernels/reference/gemm_cublas.c) and the host
 * kernel in all of them (kernels/reference/gemm_cpu.c). */
cudaError_t gemm_cublas_run(const struct gemm_kernel *k, const struct gemm_problem *p,
                            const struct launch_env *env);
int gemm_cublas_check(const struct gemm_problem *p, char *why, size_t n);
void gemm_cpu(const struct gemm_problem *p, int threads);
/* OpenBLAS on the host, loaded on first use (kernels/reference/gemm_blas.c). */
void gemm_blas(const struct gemm_problem *p, int threads);
int gemm_blas_check(const struct gemm_problem *p, char *why, size_t n);

#define ROW(name, fam, id, sigs, flags, cc, geometry, ws, check, file, idea, source)              \
    { name, idea, source, file, flags, sigs, cc, gemm_run_##fam,                                   \
      (const void *)fam##_##id##_launch, NULL, fam##_##id##_attr, ENTRY_##check(fam, id),          \
      ENTRY_##ws(fam, id), SLICES_##ws(fam, id), geometry },

const struct gemm_kernel gemm_kernels[] = {
    { "cublas", "cuBLAS: SGEMM (FP32, no TF32), GemmEx f16/bf16 (FP32 compute), TF32, DGEMM, int8",
      "cuBLAS", "kernels/reference/gemm_cublas.c", KERNEL_REFERENCE | KERNEL_BATCHED | KERNEL_ANY_LD,
      F32 | F16 | BF16 | F64 | TF32 | I8, 0, gemm_cublas_run, NULL, NULL, NULL, gemm_cublas_check,
      NULL, NULL, NULL },
    { "cpu", "multithreaded blocked C: double accumulators, exact int64 and int32 (no GPU)",
      "gemmcli's own",
      "kernels/reference/gemm_cpu.c", KERNEL_HOST | KERNEL_NO_AUTO | KERNEL_BATCHED | KERNEL_ANY_LD,
      F32 | F16 | BF16 | F64 | I64 | TF32 | TF32X3 | I8 | OZAKI | I16 | I32 | OZAKI32, 0, NULL,
      NULL, gemm_cpu, NULL, NULL, NULL, NULL, NULL },
    { "blas", "OpenBLAS's SGEMM and DGEMM on the host, loaded when first used (no GPU)",
      "OpenBLAS", "kernels/reference/gemm_blas.c",
      KERNEL_HOST | KERNEL_NO_AUTO | KERNEL_BATCHED | KERNEL_ANY_LD, F32 | F64, 0, NULL, NULL,
      gemm_blas, NULL, gemm_blas_check, NULL, NULL, NULL },
    MUL_STAGES(ROW)
};

const size_t gemm_kernel_count = sizeof gemm_kernels / sizeof gemm_kernels[0];
