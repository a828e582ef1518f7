/* The transpose kernels, in ladder order: the one table that `gemmcli
 * kernels`, --kernel, auto, the bench and the GPU tests iterate.  A stage
 * is one file and one line of TRANSPOSE_STAGES: the line declares the
 * stage's transpose_ID_launch and transpose_ID_attr and makes its row.
 *
 * Columns: id (also the name), flags, element sizes moved, idea, source,
 * file. */
#include "kernels/transpose.h"

enum {
    sizes_all = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8,
    sizes_float = 1u << 4 | 1u << 8,
};

#define TRANSPOSE_STAGES(X)                                                                  \
    X(copy, KERNEL_BENCH_ONLY, sizes_all,                                                    \
      "bandwidth reference: a flat 16-byte copy, no transpose", "seed 001 matrixCopy_1",     \
      "kernels/transpose/transpose_01_copy.cu")                                                                \
    X(copy_smem, KERNEL_BENCH_ONLY, sizes_all,                                               \
      "bandwidth reference: a copy through 32x32 shared-memory tiles",                       \
      "seed 001 matrixCopy_2", "kernels/transpose/transpose_02_copy_smem.cu")                                  \
    X(naive, KERNEL_NO_AUTO, sizes_all,                                                      \
      "one thread per element: coalesced reads, scattered writes",                           \
      "seed 001 matrixTranspos_1", "kernels/transpose/transpose_03_naive.cu")                                  \
    X(smem, KERNEL_NO_AUTO, sizes_all,                                                       \
      "a 32x32 tile turned around in shared memory: coalesced both ways",                    \
      "seed 001 matrixTranspos_2", "kernels/transpose/transpose_04_smem.cu")                                   \
    X(smem_pad, KERNEL_NO_AUTO, sizes_all,                                                   \
      "smem with a 33-wide tile: no shared-memory bank conflicts",                           \
      "seed 001 matrixTranspos_3", "kernels/transpose/transpose_05_smem_pad.cu")                               \
    X(diagonal, KERNEL_NO_AUTO, sizes_all,                                                   \
      "smem_pad with blocks taken along diagonals (partition camping)",                      \
      "seed 001 matrixTranspos_4", "kernels/transpose/transpose_06_diagonal.cu")                               \
    X(vec, 0, sizes_all,                                                                     \
      "16-byte loads and stores via a swizzled tile, shifted for unaligned rows; "           \
      "bytes by 4x4 permutes",                                                               \
      "beyond seed 001", "kernels/transpose/transpose_07_vec.cu")

#define DECLARE(id, flags, sizes, idea, source, file)                                        \
    cudaError_t transpose_##id##_launch(const struct transpose_problem *p,                   \
                                        const struct launch_env *env);                       \
    cudaError_t transpose_##id##_attr(struct kernel_attr *out);
TRANSPOSE_STAGES(DECLARE)

/* cuBLAS geam (kernels/reference/transpose_geam.c) and the host kernel
 * (kernels/reference/transpose_cpu.c). */
cudaError_t transpose_geam_launch(const struct transpose_problem *p, const struct launch_env *env);
void transpose_cpu_host(const struct transpose_problem *p);

#define ROW(id, flags, sizes, idea, source, file)                                            \
    { #id, idea, source, file, flags, sizes, transpose_##id##_launch, NULL,        \
      transpose_##id##_attr },

const struct transpose_kernel transpose_kernels[] = {
    TRANSPOSE_STAGES(ROW)
    { "geam", "cuBLAS cublasSgeam/cublasDgeam with op T", "cuBLAS", "kernels/reference/transpose_geam.c",
      KERNEL_REFERENCE | KERNEL_FLOAT_VALUES, sizes_float, transpose_geam_launch, NULL, NULL },
    { "cpu", "cache-blocked host transpose, one thread per core", "gemmcli",
      "kernels/reference/transpose_cpu.c", KERNEL_HOST, sizes_all, NULL, transpose_cpu_host, NULL },
};

const size_t transpose_kernel_count = sizeof transpose_kernels / sizeof transpose_kernels[0];
