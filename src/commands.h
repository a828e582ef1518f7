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
int cmd_tune(const struct gc_opts *o);

#endif
