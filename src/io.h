/* Reading operands and writing results as the command line asks: which
 * --shape goes with which operand, the output's format and dtype, and the
 * safe-output dance of output.h. */
#ifndef GC_IO_H
#define GC_IO_H

#include "options.h"
#include "output.h"

/* Reads operand number `index` (0 = first) from `path` into `m`, payload
 * from `alloc` (NULL: malloc). */
int io_read_operand(const struct gc_opts *o, int index, const char *path,
                    const struct gc_alloc *alloc, struct gc_matrix *m);

/* Reads `count` operands (paths[i] is operand number i) at once, one
 * thread each, and converts each to a C-order matrix of `dtype` when
 * `dtype` >= 0 (else leaves them as read).  Returns the first failing
 * operand's status. */
int io_read_operands(const struct gc_opts *o, int count, const char *const *paths,
                     int dtype, struct gc_matrix *out);

/* The output format for o->output: --format, else the extension, else (for
 * stdout) `fallback`.  Returns the format or a negative status after
 * reporting why none could be chosen. */
int io_output_format(const struct gc_opts *o, int fallback);

/* Writes `m` in `format` to `out`, begun by the caller, who commits it. */
int io_write_matrix(struct gc_output *out, const struct gc_opts *o, int format,
                    const struct gc_matrix *m);

/* 1 when `format` is binary (refused on a terminal). */
int io_format_is_binary(int format);

/* Converts `m` in place to a C-order matrix of dtype `dt` (no-op if it
 * already is one). */
int io_to_c_order(struct gc_matrix *m, enum gc_dtype dt, const struct gc_alloc *alloc);

#endif
