/* The subcommands: each takes the parsed options and returns an exit status. */
#ifndef GC_COMMANDS_H
#define GC_COMMANDS_H

#include "options.h"
#include "output.h"

int cmd_mul(const struct gc_opts *o);
int cmd_transpose(const struct gc_opts *o);
int cmd_convert(const struct gc_opts *o);
int cmd_info(const struct gc_opts *o);
int cmd_kernels(const struct gc_opts *o);
int cmd_bench(const struct gc_opts *o);

/* Prints the run's report as --quiet/--json ask (JSON to stdout unless the
 * matrix goes there).  Returns 0, or GC_EXIT_OUTPUT when stdout failed. */
struct gc_report;
int cmd_emit_report(const struct gc_opts *o, const struct gc_report *r);

/* The end of a mul or transpose.  Unless the result was already streamed
 * into `out` (begun), begins `out` and writes `result` (converted to
 * `dtype`) to it; then completes the report's timings from `t0`, ends the
 * progress line, prints the report, and only then commits the output, so
 * that a run that fails at its last step leaves no result behind. */
struct gc_progress;
int cmd_finish(const struct gc_opts *o, int fmt, struct gc_output *out, int streamed,
               struct gc_matrix *result, enum gc_dtype dtype, struct gc_report *r, double t0,
               struct gc_progress *prog);

#endif
