/* gemmcli bench's tables, and what its modes share (src/bench/bench.c,
 * src/bench/sweep.c). */
#ifndef GC_BENCH_H
#define GC_BENCH_H

#include <stddef.h>

#include "src/job/device.h"
#include "src/job/options.h"
#include "src/job/output.h"

/* Times every mul kernel in each signature of `sigs` (a bit per
 * GEMM_*; gemm_sigs[].bench_order orders them) when `mul`, and every
 * transpose kernel when `transpose`, on --sizes or each one's default
 * shapes; prints each table, writes --bench-out's files and
 * --auto-table's.  Returns 0 or an exit status it has reported. */
int bench_run(const struct gc_opts *o, unsigned sigs, int mul, int transpose);

/* PREFIX.csv, PREFIX.json and PREFIX.svg, written together: all three or
 * none. */
struct bench_files {
    struct gc_output csv, json, svg;
    char prefix[4096];
};

/* Opens the three with output_begin's `flags`; returns 0, or an exit status
 * with none left open. */
int bench_files_begin(struct bench_files *f, const char *prefix, int flags);

/* With rc == 0 commits the three (and says so unless `quiet`), else drops
 * them; returns rc or the first commit's failure. */
int bench_files_end(struct bench_files *f, int rc, int quiet);

#endif
