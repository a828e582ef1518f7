/* The transpose kernels, in ladder order: the one table that `gemmcli
 * kernels`, --kernel, auto, the bench and the GPU tests iterate. */
#include "transpose.h"

enum {
    sizes_all = 1u << 2 | 1u << 4 | 1u << 8,
    sizes_float = 1u << 4 | 1u << 8,
};

const struct transpose_kernel transpose_kernels[] = {
    { "copy", "bandwidth reference: a flat 16-byte copy, no transpose",
      "seed 001 matrixCopy_1", "kernels/transpose_01_copy.cu",
      KERNEL_BENCH_ONLY, sizes_all, transpose_copy_launch, NULL, transpose_copy_attr },
    { "copy_smem", "bandwidth reference: a copy through 32x32 shared-memory tiles",
      "seed 001 matrixCopy_2", "kernels/transpose_02_copy_smem.cu",
      KERNEL_BENCH_ONLY, sizes_all, transpose_copy_smem_launch, NULL, transpose_copy_smem_attr },
    { "naive", "one thread per element: coalesced reads, scattered writes",
      "seed 001 matrixTranspos_1", "kernels/transpose_03_naive.cu",
      KERNEL_NO_AUTO, sizes_all, transpose_naive_launch, NULL, transpose_naive_attr },
    { "smem", "a 32x32 tile turned around in shared memory: coalesced both ways",
      "seed 001 matrixTranspos_2", "kernels/transpose_04_smem.cu",
      KERNEL_NO_AUTO, sizes_all, transpose_smem_launch, NULL, transpose_smem_attr },
    { "smem_pad", "smem with a 33-wide tile: no shared-memory bank conflicts",
      "seed 001 matrixTranspos_3", "kernels/transpose_05_smem_pad.cu",
      KERNEL_NO_AUTO, sizes_all, transpose_smem_pad_launch, NULL, transpose_smem_pad_attr },
    { "diagonal", "smem_pad with blocks taken along diagonals (partition camping)",
      "seed 001 matrixTranspos_4", "kernels/transpose_06_diagonal.cu",
      KERNEL_NO_AUTO, sizes_all, transpose_diagonal_launch, NULL, transpose_diagonal_attr },
    { "vec", "16-byte loads and stores via a swizzled tile, shifted for unaligned rows",
      "beyond seed 001", "kernels/transpose_07_vec.cu",
      0, sizes_all, transpose_vec_launch, NULL, transpose_vec_attr },
    { "geam", "cuBLAS cublasSgeam/cublasDgeam with op T",
      "cuBLAS", "kernels/transpose_geam.c",
      KERNEL_REFERENCE, sizes_float, transpose_geam_launch, NULL, NULL },
    { "cpu", "cache-blocked host transpose, one thread per core",
      "gemmcli", "kernels/transpose_cpu.c",
      KERNEL_HOST, sizes_all, NULL, transpose_cpu_host, NULL },
};

const size_t transpose_kernel_count = sizeof transpose_kernels / sizeof transpose_kernels[0];
