/* The SGEMM kernels: one launcher and one resource query per stage of the
 * ladder (kernels/sgemm_NN_*.cu), the cuBLAS and CPU kernels, and the FP64
 * reference the GPU tests compare against.  kernels/sgemm_table.c lists them
 * all in gemm_kernels[]; nothing else should need these names. */
#ifndef GC_SGEMM_H
#define GC_SGEMM_H

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SGEMM_STAGE(name)                                                     \
    cudaError_t sgemm_##name##_launch(const struct sgemm_problem *p,          \
                                      const struct launch_env *env);          \
    cudaError_t sgemm_##name##_attr(struct kernel_attr *out);

SGEMM_STAGE(naive)
SGEMM_STAGE(coalesced)
SGEMM_STAGE(smem)
SGEMM_STAGE(blocktile_1d)
SGEMM_STAGE(blocktile_2d)
SGEMM_STAGE(outer_product)
SGEMM_STAGE(strided_4x4)
SGEMM_STAGE(contiguous_4x4)
SGEMM_STAGE(vec4)
SGEMM_STAGE(double_buffer)
SGEMM_STAGE(padded)
SGEMM_STAGE(zorder)
SGEMM_STAGE(warptile)
SGEMM_STAGE(prefetch)
SGEMM_STAGE(cp_async)
SGEMM_STAGE(swizzle)
SGEMM_STAGE(swizzle_64x128)
SGEMM_STAGE(splitk)
SGEMM_STAGE(thread_8x16)
SGEMM_STAGE(narrow_256x64)
SGEMM_STAGE(stream_k)
SGEMM_STAGE(edge_peel)

#undef SGEMM_STAGE

/* cuBLAS SGEMM, FP32 compute (no TF32), on env->cublas and env->stream. */
cudaError_t sgemm_cublas_launch(const struct sgemm_problem *p,
                                const struct launch_env *env);

/* The CPU kernel: p's pointers are host memory.  Each output element is
 * accumulated in double, so the result is at least as accurate as any
 * FP32 kernel's and the kernel can serve as a test oracle. */
void sgemm_cpu(const struct sgemm_problem *p, int threads);

/* out (m x n, double, device) = alpha * A * B + beta * C0 in FP64 arithmetic
 * from FP32 device inputs; c0 is not read when beta == 0.  For tests. */
cudaError_t ref_dgemm(int m, int n, int k, double alpha, const float *a,
                      const float *b, double beta, const float *c0,
                      double *out, cudaStream_t stream);

/* The tile of sgemm_17_thread_8x16.cu's kernel, which sgemm_18_stream_k.cu
 * plans for, and the height in tiles of the bands its blocks walk. */
enum { SGEMM_WIDE_BM = 128, SGEMM_WIDE_BN = 128, SGEMM_WIDE_BK = 16, SGEMM_WIDE_GROUP = 8 };

/* How that kernel's blocks share the tiles_m x tiles_n tiles of C at its
 * top left corner (the whole of C, or less where the edges are computed
 * apart), numbered in its band order: block b < dp_tiles computes tile b
 * whole and writes it; the other sk_workers blocks split the k-steps of the
 * remaining tiles, laid end to end, into equal runs and add alpha times
 * each run's sums into C atomically, so those tiles of C must hold beta * C
 * beforehand. */
struct sgemm_sk_plan {
    int dp_tiles;
    int sk_workers;
    int tiles_m, tiles_n;
};

/* How many blocks of that kernel are resident at once on env's device. */
cudaError_t sgemm_wide_slots(const struct launch_env *env, long *slots);

/* Runs that kernel over a plan, on env->stream. */
cudaError_t sgemm_wide_run(const struct sgemm_problem *p, const struct launch_env *env,
                           const struct sgemm_sk_plan *plan);

/* stream_k over the tiles_m x tiles_n tiles at C's top left corner: whole
 * tiles for the full waves, the last partial wave shared out by k-steps. */
cudaError_t sgemm_stream_k_cover(const struct sgemm_problem *p, const struct launch_env *env,
                                 int tiles_m, int tiles_n);

#ifdef __cplusplus
}
#endif

#endif
