/* gemm_kernels[]: every mul kernel, each ladder in order.  `gemmcli
 * kernels`, --kernel, auto, bench and the GPU tests all walk this one
 * table.  A stage is one file and one line of MUL_STAGES below: the line
 * declares the stage's launcher and resource query (FAMILY_ID_launch and
 * FAMILY_ID_attr, defined in the file) and makes its row; nothing else
 * names them.
 *
 * Columns: the name for --kernel, the family (sgemm f32, hgemm f16 and
 * bf16, dgemm f64, igemm i64: kernels/gemm.h), the launcher's id, the
 * signatures it computes, flags, the lowest compute capability, the idea,
 * the source document, the file, the workspace it takes from the pool, and
 * its own conditions (alignment, say) for can_implement (NULL: none). */
#include "kernels/gemm.h"

#define F32 (1u << GEMM_F32)
#define F16 (1u << GEMM_F16)
#define BF16 (1u << GEMM_BF16)
#define F64 (1u << GEMM_F64)
#define I64 (1u << GEMM_I64)
#define TF32 (1u << GEMM_TF32)
#define TF32X3 (1u << GEMM_TF32X3)

/* The small stages' limit on M, N and K (kernels/memory_bound/small.cuh). */
int sgemm_small_check(const struct gemm_problem *p, char *why, size_t n);
int dgemm_small_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_small_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_thin_check(const struct gemm_problem *p, char *why, size_t n);
int dgemm_thin_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_small_k_check(const struct gemm_problem *p, char *why, size_t n);
int dgemm_small_k_check(const struct gemm_problem *p, char *why, size_t n);

/* Workspace sizes, from the files that allocate them. */
size_t sgemm_splitk_workspace(const struct gemm_problem *p);
size_t sgemm_edge_peel_workspace(const struct gemm_problem *p);
size_t hgemm_persistent_workspace(const struct gemm_problem *p);
size_t hgemm_cluster_multicast_workspace(const struct gemm_problem *p);
size_t sgemm_tf32_workspace(const struct gemm_problem *p);
size_t sgemm_tf32x3_workspace(const struct gemm_problem *p);
size_t sgemm_gemv_workspace(const struct gemm_problem *p);
size_t sgemm_thin_workspace(const struct gemm_problem *p);
size_t hgemm_gemv_workspace(const struct gemm_problem *p);
size_t hgemm_thin_workspace(const struct gemm_problem *p);
size_t dgemm_thin_workspace(const struct gemm_problem *p);
size_t dgemm_gemv_workspace(const struct gemm_problem *p);

/* Conditions of their own (alignment, the one architecture they run on). */
int hgemm_wgmma_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_wgmma_tma_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_wgmma_pipeline_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_warp_specialized_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_persistent_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_cluster_multicast_check(const struct gemm_problem *p, char *why, size_t n);
int sgemm_tf32_check(const struct gemm_problem *p, char *why, size_t n);
int sgemm_tf32x3_check(const struct gemm_problem *p, char *why, size_t n);
int sgemm_gemv_check(const struct gemm_problem *p, char *why, size_t n);
int sgemm_thin_check(const struct gemm_problem *p, char *why, size_t n);
int sgemm_small_k_check(const struct gemm_problem *p, char *why, size_t n);
int hgemm_gemv_check(const struct gemm_problem *p, char *why, size_t n);
int dgemm_gemv_check(const struct gemm_problem *p, char *why, size_t n);

#define B KERNEL_BATCHED
#define NA KERNEL_NO_AUTO
#define MB (KERNEL_BATCHED | KERNEL_MEMORY)
#define TC (KERNEL_BATCHED | KERNEL_SPLIT_K)
#define SM90A (KERNEL_BATCHED | KERNEL_SPLIT_K | KERNEL_ARCH_EXACT)
#define SM90A_F32 (KERNEL_BATCHED | KERNEL_ARCH_EXACT)

#define MUL_STAGES(X)                                                                              \
    X("naive", sgemm, naive, F32, NA, 0,                                                           \
      "one thread per element of C, warps walk down columns (uncoalesced)",                        \
      "seed 004 naive; seed 003 kernel 1", "kernels/sgemm/sgemm_00_naive.cu", NULL, NULL)                        \
    X("coalesced", sgemm, coalesced, F32, NA, 0, "one thread per element, warps walk along rows of C", \
      "seed 004 coalescing", "kernels/sgemm/sgemm_01_coalesced.cu", NULL, NULL)                                  \
    X("smem", sgemm, smem, F32, 0, 0, "32x32 tiles of A and B staged in shared memory",           \
      "seed 004 shared memory; seed 003 kernel 2", "kernels/sgemm/sgemm_02_smem.cu", NULL, NULL)                 \
    X("blocktile_1d", sgemm, blocktile_1d, F32, NA, 0,                                             \
      "64x64 block tile, 8 results per thread along a column",                                     \
      "seed 000 1D tile; seed 003 kernel 5", "kernels/sgemm/sgemm_03_blocktile_1d.cu", NULL, NULL)               \
    X("blocktile_2d", sgemm, blocktile_2d, F32, NA, 0, "128x128 block tile, 8x8 results per thread", \
      "seed 000 2D tile; seed 003 kernels 7-8", "kernels/sgemm/sgemm_04_blocktile_2d.cu", NULL, NULL)            \
    X("outer_product", sgemm, outer_product, F32, NA, 0,                                           \
      "2D tile with operands cached in registers (outer product)",                                 \
      "seed 000 2D tile register", "kernels/sgemm/sgemm_05_outer_product.cu", NULL, NULL)                        \
    X("strided_4x4", sgemm, strided_4x4, F32, NA, 0, "1024 threads, 4x4 results each, 32 apart",   \
      "seed 001 matrixMul_2_1", "kernels/sgemm/sgemm_06_strided_4x4.cu", NULL, NULL)                             \
    X("contiguous_4x4", sgemm, contiguous_4x4, F32, NA, 0,                                         \
      "1024 threads, contiguous 4x4 results (LDS.128)", "seed 001 matrixMul_2_2",                  \
      "kernels/sgemm/sgemm_07_contiguous_4x4.cu", NULL, NULL)                                                    \
    X("vec4", sgemm, vec4, F32, NA, 0, "float4 loads, A transposed in shared memory",              \
      "seed 000 float4; seed 001 matrixMul_4; seed 003 kernel 6", "kernels/sgemm/sgemm_08_vec4.cu", NULL, NULL)  \
    X("double_buffer", sgemm, double_buffer, F32, NA, 0,                                           \
      "two shared buffers, next tile loaded during the FMAs",                                      \
      "seed 000 double buffer; seed 003 kernel 11", "kernels/sgemm/sgemm_09_double_buffer.cu", NULL, NULL)       \
    X("padded", sgemm, padded, F32, NA, 0, "A tile rows padded to BM+4: conflict-free stores",     \
      "seed 000 bank conflicts (BM+4)", "kernels/sgemm/sgemm_10_padded.cu", NULL, NULL)                          \
    X("zorder", sgemm, zorder, F32, NA, 0, "z-order lanes, 2x2 of 4x4 per thread: conflict-free loads", \
      "seed 000 z-order; seed 002 virtual threads", "kernels/sgemm/sgemm_11_zorder.cu", NULL, NULL)              \
    X("warptile", sgemm, warptile, F32, NA, 0, "block, warp (32x64) and lane tiles; BK 16",        \
      "seed 003 kernel 9", "kernels/sgemm/sgemm_12_warptile.cu", NULL, NULL)                                     \
    X("prefetch", sgemm, prefetch, F32, NA, 0, "next step's operands read into registers during the FMAs", \
      "seed 003 kernel 10", "kernels/sgemm/sgemm_13_prefetch.cu", NULL, NULL)                                    \
    X("cp_async", sgemm, cp_async, F32, B, 80, "4-stage cp.async pipeline, 2 blocks per SM",       \
      "beyond the seeds", "kernels/sgemm/sgemm_14_cp_async.cu", NULL, NULL)                                      \
    X("swizzle", sgemm, swizzle, F32, B, 80, "cp_async with blocks in bands of 8 tile rows (L2 reuse)", \
      "beyond the seeds", "kernels/sgemm/sgemm_15_swizzle.cu", NULL, NULL)                                       \
    X("swizzle_64x128", sgemm, swizzle_64x128, F32, B, 80, "swizzle with 64x128 tiles for small grids", \
      "beyond the seeds", "kernels/sgemm/sgemm_15_swizzle.cu", NULL, NULL)                                       \
    X("splitk", sgemm, splitk, F32, B, 80, "swizzle with K split across blocks when M x N is small", \
      "beyond the seeds; seed 003 closing note", "kernels/sgemm/sgemm_16_splitk.cu", sgemm_splitk_workspace, NULL) \
    X("thread_8x16", sgemm, thread_8x16, F32, B, 80,                                               \
      "64x64 warp tiles, 8x16 results per thread, 128 threads", "beyond the seeds",                \
      "kernels/sgemm/sgemm_17_thread_8x16.cu", NULL, NULL)                                                       \
    X("narrow_256x64", sgemm, narrow_256x64, F32, B, 80, "thread_8x16 with 256x64 blocks for narrow N", \
      "beyond the seeds", "kernels/sgemm/sgemm_17_thread_8x16.cu", NULL, NULL)                                   \
    X("stream_k", sgemm, stream_k, F32, B, 80, "thread_8x16 with the last partial wave split by k-steps", \
      "beyond the seeds (stream-K)", "kernels/sgemm/sgemm_18_stream_k.cu", NULL, NULL)                           \
    X("edge_peel", sgemm, edge_peel, F32, B, 80,                                                   \
      "stream_k on whole tiles; thin leftover edges by a strip kernel", "beyond the seeds",        \
      "kernels/sgemm/sgemm_19_edge_peel.cu", sgemm_edge_peel_workspace, NULL)                                    \
    X("gemv", sgemm, gemv, F32, KERNEL_VECTOR | MB, 0,                                              \
      "vector times matrix (M = 1, K split) or matrix times vector (N = 1, a warp per row)",       \
      "beyond the seeds (memory-bound shapes)", "kernels/sgemm/sgemm_22_gemv.cu", sgemm_gemv_workspace,          \
      sgemm_gemv_check)                                                                            \
    X("small", sgemm, small, F32, MB, 80,                                                           \
      "stacks of products up to 64x64x64: chunks streamed by cp.async, 4x4 results per item",      \
      "beyond the seeds (memory-bound shapes)", "kernels/sgemm/sgemm_23_small.cu", NULL, sgemm_small_check)      \
    X("thin", sgemm, thin, F32, MB, 0,                                                              \
      "a thin side (M or N <= 32): the wide operand streamed once, K split into slices",          \
      "beyond the seeds (memory-bound shapes)", "kernels/sgemm/sgemm_24_thin.cu", sgemm_thin_workspace,          \
      sgemm_thin_check)                                                                            \
    X("small_k", sgemm, small_k, F32, MB, 0,                                                        \
      "K <= 32: a warp per strip of 128 columns and a band of rows, B in registers, C written as a copy", \
      "beyond the seeds (memory-bound shapes)", "kernels/sgemm/sgemm_25_small_k.cu", NULL, sgemm_small_k_check)  \
    X("f16_simt", hgemm, simt, F16, B, 80,                                                         \
      "f16 operands by cp.async, widened once per tile in shared memory, FP32 FFMA",               \
      "beyond the seeds", "kernels/hgemm/hgemm_00_simt.cu", NULL, NULL)                                          \
    X("f16_small", hgemm, small, F16 | BF16, MB, 80,                                                \
      "small's stacks on f16 and bf16 operands, widened to FP32 where they are read",              \
      "beyond the seeds (memory-bound shapes)", "kernels/hgemm/hgemm_09_small.cu", NULL, hgemm_small_check)      \
    X("mma_sync", hgemm, mma_sync, F16 | BF16, TC, 80,                                             \
      "tensor cores by warp: mma.sync m16n8k16, ldmatrix from a 4-stage cp.async ring",            \
      "beyond the seeds (tensor cores, Ampere style)", "kernels/hgemm/hgemm_01_mma_sync.cu",                     \
      NULL, NULL)                                                                                  \
    X("wgmma", hgemm, wgmma, F16 | BF16, SM90A, 90,                                                \
      "Hopper warpgroup MMA (wgmma) from 128-byte swizzled shared tiles",                          \
      "beyond the seeds (Hopper wgmma)", "kernels/hgemm/hgemm_02_wgmma.cu", NULL,                                \
      hgemm_wgmma_check)                                                                           \
    X("wgmma_tma", hgemm, wgmma_tma, F16 | BF16, SM90A, 90,                                        \
      "wgmma with tiles brought by the Tensor Memory Accelerator and an mbarrier",                 \
      "beyond the seeds (Hopper TMA)", "kernels/hgemm/hgemm_03_wgmma_tma.cu", NULL,                              \
      hgemm_wgmma_tma_check)                                                                       \
    X("wgmma_pipeline", hgemm, wgmma_pipeline, F16 | BF16, SM90A, 90,                              \
      "a 4-slot TMA ring with full and empty mbarriers; two warpgroups on 128x256",                \
      "beyond the seeds (Hopper TMA)", "kernels/hgemm/hgemm_04_wgmma_pipeline.cu", NULL,                         \
      hgemm_wgmma_pipeline_check)                                                                  \
    X("warp_specialized", hgemm, warp_specialized, F16 | BF16, SM90A, 90,                          \
      "a producer warpgroup feeds a 4-slot TMA ring; two consumers, setmaxnreg, 128x256",          \
      "beyond the seeds (warp specialisation)", "kernels/hgemm/hgemm_05_warp_specialized.cu",                    \
      NULL, hgemm_warp_specialized_check)                                                          \
    X("persistent", hgemm, persistent, F16 | BF16, SM90A, 90,                                      \
      "warp_specialized on a persistent grid in L2 bands; padded copies take any shape",           \
      "beyond the seeds (persistent kernels)", "kernels/hgemm/hgemm_06_persistent.cu",                           \
      hgemm_persistent_workspace, hgemm_persistent_check)                                          \
    X("cluster_multicast", hgemm, cluster_multicast, F16 | BF16, SM90A, 90,                        \
      "persistent in clusters of 2 sharing B by TMA multicast; TMA-store epilogue",                \
      "beyond the seeds (thread-block clusters)", "kernels/hgemm/hgemm_07_cluster_multicast.cu",                 \
      hgemm_cluster_multicast_workspace, hgemm_cluster_multicast_check)                            \
    X("f16_gemv", hgemm, gemv, F16 | BF16, KERNEL_VECTOR | MB, 0,                                   \
      "f16/bf16 vector times matrix or matrix times vector: gemv's kernels, FP32 accumulation",    \
      "beyond the seeds (memory-bound shapes)", "kernels/hgemm/hgemm_08_gemv.cu", hgemm_gemv_workspace,          \
      hgemm_gemv_check)                                                                            \
    X("f16_thin", hgemm, thin, F16 | BF16, MB, 0,                                                  \
      "thin's kernels on f16/bf16 operands: the wide operand streamed once, FP32 sums",            \
      "beyond the seeds (memory-bound shapes)", "kernels/hgemm/hgemm_10_thin.cu", hgemm_thin_workspace,          \
      hgemm_thin_check)                                                                            \
    X("f16_small_k", hgemm, small_k, F16 | BF16, MB, 0,                                            \
      "small_k's kernels on f16/bf16 operands: K <= 32, C written as a copy, FP32 sums",          \
      "beyond the seeds (memory-bound shapes)", "kernels/hgemm/hgemm_11_small_k.cu", NULL, hgemm_small_k_check) \
    X("tf32", sgemm, tf32, TF32, SM90A_F32, 90,                                                    \
      "float on the tensor cores, one TF32 pass (lossy): persistent's ring on packed TF32 copies",  \
      "beyond the seeds (TF32 tensor cores)", "kernels/sgemm/sgemm_20_tf32.cu", sgemm_tf32_workspace,            \
      sgemm_tf32_check)                                                                            \
    X("tf32x3", sgemm, tf32x3, TF32X3, SM90A_F32, 90,                                              \
      "3xTF32: high and low TF32 parts, three products, sums promoted to FP32 every 32 of k",      \
      "beyond the seeds (3xTF32)", "kernels/sgemm/sgemm_21_tf32x3.cu", sgemm_tf32x3_workspace,                   \
      sgemm_tf32x3_check)                                                                          \
    X("f64_naive", dgemm, naive, F64, B, 0, "FP64: one thread per element of C, coalesced rows",   \
      "seed 004 coalescing, in FP64", "kernels/dgemm/dgemm_00_naive.cu", NULL, NULL)                             \
    X("f64_pipeline", dgemm, pipeline, F64, B, 80,                                                 \
      "FP64: cp.async pipeline, 8x8 doubles per thread, DFMA",                                     \
      "beyond the seeds", "kernels/dgemm/dgemm_01_pipeline.cu", NULL, NULL)                                      \
    X("f64_small", dgemm, small, F64, MB, 80,                                                       \
      "small's stacks in FP64: chunks streamed by cp.async, 4x4 results per item, DFMA",           \
      "beyond the seeds (memory-bound shapes)", "kernels/dgemm/dgemm_04_small.cu", NULL, dgemm_small_check)      \
    X("f64_dmma", dgemm, dmma, F64, TC, 90,                                                         \
      "FP64 tensor cores: mma.sync m16n8k4 (DMMA), LDS.128 fragments, 5-stage cp.async ring",      \
      "beyond the seeds (FP64 tensor cores)", "kernels/dgemm/dgemm_02_dmma.cu", NULL, NULL)                      \
    X("f64_gemv", dgemm, gemv, F64, KERNEL_VECTOR | MB, 0,                                          \
      "FP64 vector times matrix or matrix times vector: gemv's kernels, double partial sums",      \
      "beyond the seeds (memory-bound shapes)", "kernels/dgemm/dgemm_03_gemv.cu", dgemm_gemv_workspace,          \
      dgemm_gemv_check)                                                                            \
    X("f64_thin", dgemm, thin, F64, MB, 0,                                                         \
      "thin's kernels in FP64: the wide operand streamed once, 2 columns a thread, K sliced",      \
      "beyond the seeds (memory-bound shapes)", "kernels/dgemm/dgemm_05_thin.cu", dgemm_thin_workspace,          \
      dgemm_thin_check)                                                                            \
    X("f64_small_k", dgemm, small_k, F64, MB, 0,                                                   \
      "small_k's kernels in FP64: K <= 32, C written as a copy, 2 columns a lane",                 \
      "beyond the seeds (memory-bound shapes)", "kernels/dgemm/dgemm_06_small_k.cu", NULL, dgemm_small_k_check) \
    X("i64_tiled", igemm, tiled, I64, B, 0, "exact int64 (mod 2^64) in shared-memory tiles",       \
      "gemmcli", "kernels/igemm/igemm_00_tiled.cu", NULL, NULL)

#define DECLARE(name, fam, id, sigs, flags, cc, idea, source, file, ws, check)                 \
    cudaError_t fam##_##id##_launch(const struct fam##_problem *p, const struct launch_env *env); \
    cudaError_t fam##_##id##_attr(struct kernel_attr *out);
MUL_STAGES(DECLARE)

/* cuBLAS in every signature it has (kernels/reference/gemm_cublas.c) and the host
 * kernel in all of them (kernels/reference/gemm_cpu.c). */
cudaError_t gemm_cublas_run(const struct gemm_kernel *k, const struct gemm_problem *p,
                            const struct launch_env *env);
void gemm_cpu(const struct gemm_problem *p, int threads);

#define ROW(name, fam, id, sigs, flags, cc, idea, source, file, ws, check)                     \
    { name, idea, source, file, flags, sigs, cc, gemm_run_##fam,                     \
      (const void *)fam##_##id##_launch, NULL, fam##_##id##_attr, check, ws },

const struct gemm_kernel gemm_kernels[] = {
    { "cublas", "cuBLAS: SGEMM (FP32, no TF32), GemmEx f16/bf16 (FP32 compute), TF32, DGEMM",
      "cuBLAS", "kernels/reference/gemm_cublas.c", KERNEL_REFERENCE | KERNEL_BATCHED | KERNEL_ANY_LD,
      F32 | F16 | BF16 | F64 | TF32, 0, gemm_cublas_run, NULL, NULL, NULL, NULL, NULL },
    { "cpu", "multithreaded blocked C: double accumulators, exact int64 (no GPU)", "gemmcli",
      "kernels/reference/gemm_cpu.c", KERNEL_HOST | KERNEL_NO_AUTO | KERNEL_BATCHED | KERNEL_ANY_LD,
      F32 | F16 | BF16 | F64 | I64 | TF32 | TF32X3, 0, NULL, NULL, gemm_cpu, NULL, NULL, NULL },
    MUL_STAGES(ROW)
};

const size_t gemm_kernel_count = sizeof gemm_kernels / sizeof gemm_kernels[0];
