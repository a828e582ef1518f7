/* The subcommands: each takes the parsed options and returns an exit status. */
#ifndef GC_COMMANDS_H
#define GC_COMMANDS_H

#include "src/job/options.h"

/* What the command line alone makes wrong (operands, options that do not
 * go together), checked by main before the command runs, so that under
 * an MPI launcher one rank can say it for all: 0 or GC_EXIT_USAGE after
 * saying why.  The commands run only after it passed. */
int mul_check_usage(const struct gc_opts *o);
int info_check_usage(const struct gc_opts *o);
int kernels_check_usage(const struct gc_opts *o);

int cmd_mul(const struct gc_opts *o);
int cmd_transpose(const struct gc_opts *o);
int cmd_convert(const struct gc_opts *o);
int cmd_info(const struct gc_opts *o);
int cmd_kernels(const struct gc_opts *o);
int cmd_bench(const struct gc_opts *o);
int cmd_tune(const struct gc_opts *o);
int cmd_completion(const struct gc_opts *o);
int completion_check_usage(const struct gc_opts *o);

/* The command table's rows (src/cli/main.c), for what lists them: at most
 * `max` names, each with the option groups it takes; returns how many. */
size_t commands_list(const char **names, unsigned *groups, size_t max);

#endif
