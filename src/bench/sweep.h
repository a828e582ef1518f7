/* gemmcli bench --sweep: auto against cuBLAS over random shapes and the
 * edge families (src/bench/sweep.c). */
#ifndef GC_SWEEP_H
#define GC_SWEEP_H

#include "kernels/registry.h"
#include "src/job/options.h"

/* Sweeps o->sweep random shapes (seed o->seed) and the edge families in
 * signature `sig`; prints the summary, writes files under --bench-out.
 * Returns an exit status. */
int bench_sweep(const struct gc_opts *o, enum gemm_sig sig);

#endif
