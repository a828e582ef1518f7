/* gemm_kernels[]: every mul kernel, in ladder order.  `gemmcli kernels`,
 * --kernel, auto, bench and the GPU tests all walk this one table. */
#include "sgemm.h"

#define STAGE(name, idea, source, file, flags)                                 \
    { #name, idea, source, "kernels/" file, flags, sgemm_##name##_launch, NULL, \
      sgemm_##name##_attr }

const struct gemm_kernel gemm_kernels[] = {
    { "cublas", "cuBLAS SGEMM, FP32 compute (the reference)", "cuBLAS",
      "kernels/sgemm_cublas.c", KERNEL_REFERENCE, sgemm_cublas_launch, NULL, NULL },
    { "cpu", "multithreaded blocked C, double accumulators (no GPU)", "-",
      "kernels/sgemm_cpu.c", KERNEL_HOST | KERNEL_NO_AUTO, NULL, sgemm_cpu, NULL },
    STAGE(naive, "one thread per element of C, warps walk down columns (uncoalesced)",
          "seed 004 naive; seed 003 kernel 1", "sgemm_00_naive.cu", KERNEL_NO_AUTO),
    STAGE(coalesced, "one thread per element, warps walk along rows of C",
          "seed 004 coalescing", "sgemm_01_coalesced.cu", KERNEL_NO_AUTO),
    STAGE(smem, "32x32 tiles of A and B staged in shared memory",
          "seed 004 shared memory; seed 003 kernel 2", "sgemm_02_smem.cu", KERNEL_NO_AUTO),
    STAGE(blocktile_1d, "64x64 block tile, 8 results per thread along a column",
          "seed 000 1D tile; seed 003 kernel 5", "sgemm_03_blocktile_1d.cu", KERNEL_NO_AUTO),
    STAGE(blocktile_2d, "128x128 block tile, 8x8 results per thread",
          "seed 000 2D tile; seed 003 kernels 7-8", "sgemm_04_blocktile_2d.cu", KERNEL_NO_AUTO),
    STAGE(outer_product, "2D tile with operands cached in registers (outer product)",
          "seed 000 2D tile register", "sgemm_05_outer_product.cu", KERNEL_NO_AUTO),
    STAGE(strided_4x4, "1024 threads, 4x4 results each, 32 apart",
          "seed 001 matrixMul_2_1", "sgemm_06_strided_4x4.cu", KERNEL_NO_AUTO),
    STAGE(contiguous_4x4, "1024 threads, contiguous 4x4 results (LDS.128)",
          "seed 001 matrixMul_2_2", "sgemm_07_contiguous_4x4.cu", KERNEL_NO_AUTO),
    STAGE(vec4, "float4 loads, A transposed in shared memory",
          "seed 000 float4; seed 001 matrixMul_4; seed 003 kernel 6", "sgemm_08_vec4.cu",
          KERNEL_NO_AUTO),
    STAGE(double_buffer, "two shared buffers, next tile loaded during the FMAs",
          "seed 000 double buffer; seed 003 kernel 11", "sgemm_09_double_buffer.cu",
          KERNEL_NO_AUTO),
    STAGE(padded, "A tile rows padded to BM+4: conflict-free stores",
          "seed 000 bank conflicts (BM+4)", "sgemm_10_padded.cu", KERNEL_NO_AUTO),
    STAGE(zorder, "z-order lanes, 2x2 of 4x4 per thread: conflict-free loads",
          "seed 000 z-order; seed 002 virtual threads", "sgemm_11_zorder.cu", KERNEL_NO_AUTO),
    STAGE(warptile, "block, warp (32x64) and lane tiles; BK 16",
          "seed 003 kernel 9", "sgemm_12_warptile.cu", KERNEL_NO_AUTO),
    STAGE(prefetch, "next step's operands read into registers during the FMAs",
          "seed 003 kernel 10", "sgemm_13_prefetch.cu", KERNEL_NO_AUTO),
    STAGE(cp_async, "4-stage cp.async pipeline, 2 blocks per SM",
          "beyond the seeds", "sgemm_14_cp_async.cu", 0),
    STAGE(swizzle, "cp_async with blocks in bands of 8 tile rows (L2 reuse)",
          "beyond the seeds", "sgemm_15_swizzle.cu", 0),
    STAGE(swizzle_64x128, "swizzle with 64x128 tiles for small grids",
          "beyond the seeds", "sgemm_15_swizzle.cu", 0),
    STAGE(splitk, "swizzle with K split across blocks when M x N is small",
          "beyond the seeds; seed 003 closing note", "sgemm_16_splitk.cu", 0),
};

const size_t gemm_kernel_count = sizeof gemm_kernels / sizeof gemm_kernels[0];
