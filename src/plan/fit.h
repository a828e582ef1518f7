/* auto's rates fitted to timings: the rules `gemmcli bench --auto-table`
 * and a calibration (src/job/calibrate.h) share. */
#ifndef GC_FIT_H
#define GC_FIT_H

#include "src/plan/rates.h"

/* One timed run of a kernel: the problem and its median time. */
struct rate_sample {
    struct gemm_problem p;
    double ms;
};

/* Kernel k's entry from its samples on a GPU of `sm_count` SMs and
 * `copy_gbps` (the rules of `gemmcli bench --auto-table` and of the
 * calibration alike): a tiled kernel's TFLOP/s, each sample's figure over
 * the share of its full rate the model says the shape allows, taken at the
 * largest shape where that share is at least a half (else the samples'
 * median); a memory-bound kernel's best bytes a second, and its TFLOP/s
 * where it was seen doing more than moving bytes; a sliced kernel's
 * slice_eff from its samples that the model slices; a tiled kernel's
 * store rate from samples whose C outweighs A and B and whose time its
 * compute does not explain (a K of 1); and any kernel's floor, the least
 * time it took.  0, or -1 when no sample yields a rate. */
int rates_fit(const struct gemm_kernel *k, enum gemm_sig sig, const struct rate_sample *s,
              int n, int sm_count, double copy_gbps, struct rate_entry *out);

/* Whether a kernel's least time, `floor_ms`, is out of line with the
 * least times of its signature's n kernels (floors, itself among them):
 * over RATES_STALL_FLOOR times their median, with 3 kernels at least.
 * Each kernel's least time is a tiny product's, its launch and first
 * wave, within 1.7 times of the median in eight calibrations (NVIDIA
 * H100, 2026-11-27); one whose every run something else on the GPU slowed
 * is far beyond (4.5 times), and a calibration times it again. */
#define RATES_STALL_FLOOR 3.0
int rates_stalled(const double *floors, int n, double floor_ms);

#endif
