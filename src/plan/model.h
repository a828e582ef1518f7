/* auto's model: the time a kernel should take for a product, from its
 * geometry (its row of kernels/gemm_table.c) and its rates
 * (src/plan/rates.h: measured on this GPU, or kernels/auto_table.c's). */
#ifndef GC_MODEL_H
#define GC_MODEL_H

#include "kernels/registry.h"

/* What the model saw, for `gemmcli kernels --for`. */
struct model_estimate {
    double ms;                 /* the estimate; INFINITY: no geometry or no rate */
    double compute_ms, memory_ms, overhead_ms;
    double reduce_ms;          /* summing the slices (SPREAD_SLICES; gemv, thin) */
    double prepare_ms;         /* the stage's workspace written and read before it runs */
    double store_ms;           /* a tiled kernel's stores of C at its own measured rate,
                                  after its tiles' compute (0: C is in memory_ms) */
    double util;               /* share of the kernel's full rate the shape allows */
    int slices;                /* slices of K (1: none) */
};

/* The estimate for kernel `k` computing p (in p->sig) on a device of
 * `sm_count` SMs (0: the active rates' device), at the active rates
 * (src/plan/rates.h). */
struct model_estimate model_estimate(const struct gemm_kernel *k, const struct gemm_problem *p,
                                     int sm_count);

/* The same at rate r (NULL: none) and copy bandwidth copy_gbps, on
 * sm_count SMs (> 0). */
struct rate_entry;
struct model_estimate model_estimate_rate(const struct gemm_kernel *k,
                                          const struct gemm_problem *p, int sm_count,
                                          const struct rate_entry *r, double copy_gbps);

/* Bytes the product moves at least: A and B read once (a broadcast operand
 * once for the stack), C written, and read too when beta != 0. */
double model_bytes(const struct gemm_problem *p);

/* The part of them that is C's: written, and read too when beta != 0. */
double model_out_bytes(const struct gemm_problem *p);

/* Whether the rows of p's A or B are not whole 16-byte units (the
 * stages' vector loads and tensor maps need them). */
int model_ragged(const struct gemm_problem *p);

/* Whether, beyond that, 16-bit rows of A or B are an odd number of values:
 * no 4-byte loads either. */
int model_odd(const struct gemm_problem *p);

/* Whether p is ragged with A of at most MODEL_FEW_ROWS rows: the thin
 * stages take such a product on their M path (B's rows across the
 * lanes), whose narrow loads cost otherwise than the N path's. */
#define MODEL_FEW_ROWS 32
int model_few(const struct gemm_problem *p);

/* Whether p fills kernel k's tiles whole (M and N at least its tile's):
 * where a tiled kernel streams both operands through every tile, which
 * its stream_eff describes; a thin product's mostly idle tiles read one
 * operand otherwise. */
int model_whole_tiles(const struct gemm_kernel *k, const struct gemm_problem *p);

/* The factor of rate r that p's rows call for on kernel k: few_eff (where
 * measured) for a ragged product of few rows that take it
 * (model_few_rows), odd_eff (where measured) for odd 16-bit rows,
 * ragged_eff for other ragged rows, else 1. */
double model_ragged_factor(const struct gemm_kernel *k, const struct gemm_problem *p,
                           const struct rate_entry *r);
/* Whether p's few rows take k's few_eff: a memory-bound 16-bit stage's
 * only over odd rows, even narrow ones taking ragged_eff (model.c). */
int model_few_rows(const struct gemm_kernel *k, const struct gemm_problem *p);

/* A tiled kernel's share of its loads that p's narrow rows take: the
 * rows of a tile (A's tile_m, B's tile_n per value of k) of the operands
 * whose rows are not whole 16-byte units, over both; 1 for the others.
 * A ragged factor over 1, measured where both operands are narrow,
 * scales a product where one is by this share of it (model.c). */
double model_narrow_share(const struct gemm_kernel *k, const struct gemm_problem *p);

/* What a ragged factor f over 1 makes of a tiled kernel's compute: each
 * narrow operand's share of the tile's loads (model_narrow_share) at f,
 * except that where one operand's rows are an odd number of 16-bit values
 * and the other's are not, the other's take f_even (ragged_eff) and the
 * odd ones f (odd_eff).  A factor of 1 or less applies whole: the aligned
 * model's own error at the ragged shapes measured, not a load's cost. */
double model_narrow_factor(const struct gemm_kernel *k, const struct gemm_problem *p, double f,
                           double f_even);

/* The share of a tiled kernel's k per tile that its pipeline's fill and
 * drain take: k_fill / (k of a slice + k_fill), for p cut into `slices`
 * slices of K (1: none); 0 for a kernel without a tiled geometry.  A
 * ragged product's factor is short_eff (where measured) over this share
 * and the factor above over the rest.  A ragged sample of K at most
 * MODEL_SHORT_K fits short_eff (src/plan/fit.c). */
#define MODEL_SHORT_K 64
/* Unsliced tiles fewer than a wave over a K this long at least run at a
 * sliced launch's rate (slice_eff: model.c, model_part_wave). */
#define MODEL_PART_WAVE_K 512
double model_fill_share(const struct gemm_kernel *k, const struct gemm_problem *p, int slices);

/* The share of kernel k's full rate that p allows (1 for memory-bound
 * kernels and kernels without a geometry). */
double model_util(const struct gemm_kernel *k, const struct gemm_problem *p, int sm_count);

/* The time of one launch, back to back on a stream. */
#define MODEL_LAUNCH_MS 0.004
/* A workspace taken from the stream's pool and given back, in a run. */
#define MODEL_POOL_MS 0.002
/* A launch's own join of its slices, past the slabs' bytes: the last
 * block's fence and ticket, and its reads that wait on L2.  It saved 1.0
 * to 5.7 us against a second launch and a pooled workspace (modelled as
 * 6) on the thin and gemv stages' small products (NVIDIA H100,
 * 2026-11-27). */
#define MODEL_JOIN_MS 0.002

#endif
