/* The transpose kernels, in ladder order: the one table that `gemmcli
 * kernels`, --kernel, auto, the bench and the GPU tests iterate.  A stage
 * is one file and one row of TRANSPOSE_STAGES: the row declares the
 * stage's transpose_ID_launch and transpose_ID_attr and makes its entry.
 * tests/stage_docs.py checks that the file's header, the man page and the
 * README agree with the rows.
 *
 * Columns: id (also the name), flags, element sizes moved, the file, the
 * idea, the published work it follows. */
#include "kernels/transpose.h"

enum {
    sizes_all = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8,
    sizes_float = 1u << 4 | 1u << 8,
};

#define TRANSPOSE_STAGES(X)                                                                 \
    X(copy, KERNEL_BENCH_ONLY, sizes_all, "kernels/transpose/transpose_01_copy.cu",         \
      "bandwidth reference: a flat 16-byte copy, no transpose",                             \
      "Matrix transpose (RTX 3060 Laptop write-up), matrixCopy_1, as a flat 16-byte copy")  \
    X(copy_smem, KERNEL_BENCH_ONLY, sizes_all, "kernels/transpose/transpose_02_copy_smem.cu", \
      "bandwidth reference: a copy through 32x32 shared-memory tiles",                      \
      "Matrix transpose (RTX 3060 Laptop write-up), matrixCopy_2; An Efficient Matrix "     \
      "Transpose in CUDA C/C++, copySharedMem")                                             \
    X(naive, KERNEL_NO_AUTO, sizes_all, "kernels/transpose/transpose_03_naive.cu",          \
      "one thread per element: coalesced reads, scattered writes",                          \
      "Matrix transpose (RTX 3060 Laptop write-up), matrixTranspos_1; An Efficient Matrix " \
      "Transpose in CUDA C/C++, naive")                                                     \
    X(smem, KERNEL_NO_AUTO, sizes_all, "kernels/transpose/transpose_04_smem.cu",            \
      "a 32x32 tile turned around in shared memory: coalesced both ways",                   \
      "Matrix transpose (RTX 3060 Laptop write-up), matrixTranspos_2; An Efficient Matrix " \
      "Transpose in CUDA C/C++, coalesced")                                                 \
    X(smem_pad, KERNEL_NO_AUTO, sizes_all, "kernels/transpose/transpose_05_smem_pad.cu",    \
      "smem with a 33-wide tile: no shared-memory bank conflicts",                          \
      "Matrix transpose (RTX 3060 Laptop write-up), matrixTranspos_3; An Efficient Matrix " \
      "Transpose in CUDA C/C++, no bank conflicts")                                         \
    X(diagonal, KERNEL_NO_AUTO, sizes_all, "kernels/transpose/transpose_06_diagonal.cu",    \
      "smem_pad with blocks taken along diagonals (partition camping)",                     \
      "Matrix transpose (RTX 3060 Laptop write-up), matrixTranspos_4; Optimizing Matrix "   \
      "Transpose in CUDA, diagonal block reordering")                                       \
    X(vec, 0, sizes_all, "kernels/transpose/transpose_07_vec.cu",                           \
      "16-byte loads and stores via a swizzled tile, shifted for unaligned rows; bytes by " \
      "4x4 permutes",                                                                       \
      "gemmcli's own, 16-byte accesses")

#define DECLARE(id, flags, sizes, file, idea, source)                                        \
    cudaError_t transpose_##id##_launch(const struct transpose_problem *p,                   \
                                        const struct launch_env *env);                       \
    cudaError_t transpose_##id##_attr(struct kernel_attr *out);
TRANSPOSE_STAGES(DECLARE)

/* cuBLAS geam (kernels/reference/transpose_geam.c) and the host kernel
 * (kernels/reference/transpose_cpu.c). */
cudaError_t transpose_geam_launch(const struct transpose_problem *p, const struct launch_env *env);
void transpose_cpu_host(const struct transpose_problem *p);

#define ROW(id, flags, sizes, file, idea, source)                                            \
    { #id, idea, source, file, flags, sizes, transpose_##id##_launch, NULL,        \
      transpose_##id##_attr },

const struct transpose_kernel transpose_kernels[] = {
    TRANSPOSE_STAGES(ROW)
    { "geam", "cuBLAS cublasSgeam/cublasDgeam with op T", "cuBLAS", "kernels/reference/transpose_geam.c",
      KERNEL_REFERENCE | KERNEL_FLOAT_VALUES, sizes_float, transpose_geam_launch, NULL, NULL },
    { "cpu", "cache-blocked host transpose, one thread per core", "gemmcli's own",
      "kernels/reference/transpose_cpu.c", KERNEL_HOST, sizes_all, NULL, transpose_cpu_host, NULL },
};

const size_t transpose_kernel_count = sizeof transpose_kernels / sizeof transpose_kernels[0];
