/* What the SGEMM stages (kernels/sgemm_NN_*.cu) share beyond their
 * problem struct (kernels/gemm.h): the wide kernel's tile and its stream-K
 * plan, which thread_8x16, stream_k and edge_peel build on. */
#ifndef GC_SGEMM_H
#define GC_SGEMM_H

#include "kernels/gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stages whose launchers other stages call (the table in gemm_table.c
 * declares every stage's launcher for itself). */
cudaError_t sgemm_thread_8x16_attr(struct kernel_attr *out);
cudaError_t sgemm_stream_k_launch(const struct sgemm_problem *p, const struct launch_env *env);

/* The tile of sgemm_17_thread_8x16.cu's kernel, which sgemm_18_stream_k.cu
 * plans for, and the height in tiles of the bands its blocks walk. */
enum { SGEMM_WIDE_BM = 128, SGEMM_WIDE_BN = 128, SGEMM_WIDE_BK = 16, SGEMM_WIDE_GROUP = 8 };

/* How that kernel's blocks share the tiles_m x tiles_n tiles of C at its
 * top left corner (the whole of C, or less where the edges are computed
 * apart), numbered in its band order; for a stack of p->batch products,
 * the tiles of every product, product by product (tile t is tile
 * t mod (tiles_m * tiles_n) of product t / (tiles_m * tiles_n)), dp_tiles
 * counting over the stack.  Block b < dp_tiles computes tile b whole and
 * writes it; the other sk_workers blocks split the k-steps of the
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

/* stream_k over the tiles_m x tiles_n tiles at the top left corner of each
 * product's C: whole tiles for the full waves, the last partial wave of the
 * stack shared out by k-steps. */
cudaError_t sgemm_stream_k_cover(const struct sgemm_problem *p, const struct launch_env *env,
                                 int tiles_m, int tiles_n);

#ifdef __cplusplus
}
#endif

#endif
