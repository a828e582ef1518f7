/* The subcommands: each takes the parsed options and returns an exit status. */
#ifndef GC_COMMANDS_H
#define GC_COMMANDS_H

#include "options.h"

int cmd_mul(const struct gc_opts *o);
int cmd_transpose(const struct gc_opts *o);
int cmd_convert(const struct gc_opts *o);
int cmd_info(const struct gc_opts *o);
int cmd_kernels(const struct gc_opts *o);
int cmd_bench(const struct gc_opts *o);

/* Prints the run's report as --quiet/--json ask (JSON to stdout unless the
 * matrix goes there). */
struct gc_report;
void cmd_emit_report(const struct gc_opts *o, const struct gc_report *r);

/* The end of a mul or transpose: writes `result` (converted to `dtype`)
 * unless it was already streamed from the device, then completes the
 * report's timings from `t0`, ends the progress line and prints it. */
struct gc_progress;
int cmd_finish(const struct gc_opts *o, int fmt, struct gc_matrix *result, enum gc_dtype dtype,
               int streamed, struct gc_report *r, double t0, struct gc_progress *prog);

#endif
