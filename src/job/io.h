/* Reading operands and writing results as the command line asks: which
 * --shape goes with which operand, the output's format and dtype. */
#ifndef GC_IO_H
#define GC_IO_H

#include <stdint.h>
#include <sys/types.h>

#include "src/job/options.h"
#include "src/job/output.h"

/* The read options for operand number `index` (0 = first): --shape given
 * once serves every raw operand, several go in operand order. */
struct gc_read_opts io_read_opts(const struct gc_opts *o, int index);

/* Reads operand number `index` from `path` into `t`, as stored; the
 * format it was read as goes to *read_as (NULL: not wanted).  `sink`, if
 * not NULL, may take a large payload instead of host memory (then
 * t->data is NULL). */
int io_read_operand(const struct gc_opts *o, int index, const char *path,
                    const struct gc_sink *sink, struct gc_tensor *t, int *read_as);

/* Operand number `index` as its header tells it (shape, dtype, order:
 * no data), reading as little of it as its format allows; the format to
 * *read_as. */
int io_read_header(const struct gc_opts *o, int index, const char *path, struct gc_tensor *t,
                   int *read_as);

/* Reads `count` operands (paths[i] is operand number i) at once, one
 * thread each, as stored, operand i offered to sinks[i] when `sinks` and
 * it are not NULL; the first one's format goes to *first_read_as (NULL:
 * not wanted).  Returns the first failing operand's status. */
int io_read_operands(const struct gc_opts *o, int count, const char *const *paths,
                     const struct gc_sink *const *sinks, struct gc_tensor *out,
                     int *first_read_as);

/* 0 when an output format can be told for o->output (--format, an
 * extension gemmcli knows, or standard output), else a status after saying
 * why: the name is checked before any input is read. */
int io_output_check(const struct gc_opts *o);

/* The output's format, decided once, after the inputs are read: --format,
 * else the extension; standard output keeps the pipeline's format, the
 * one the first input was read as (`read_as`: its magic bytes, then its
 * extension, then its content; .npy for an .npz member), else `fallback`.
 * 0 with *format set, or a status after saying why. */
int io_output_format(const struct gc_opts *o, int read_as, int fallback, int *format);

/* 0, or GC_EXIT_USAGE after saying so, when `format` cannot hold a tensor
 * of `ndim` dimensions (CSV: one or two) or of `dtype` (.npy: no bfloat16;
 * dtype < 0: not checked). */
int io_check_ndim(const struct gc_opts *o, int format, int ndim, const size_t *shape, int dtype);

/* Writes `t` in `format` to `out`, begun by the caller, who commits it. */
int io_write_tensor(struct gc_output *out, const struct gc_opts *o, int format,
                    const struct gc_tensor *t);

/* 1 when `format` is binary (FORMAT_BINARY: refused on a terminal). */
int io_format_is_binary(int format);

/* output_begin's flags for the result in `format`, as the options ask. */
int io_output_flags(const struct gc_opts *o, int format);

/* 0 when the summary just written to `f` (cleared of errors before it)
 * went out, else GC_EXIT_OUTPUT after saying so: a run whose summary was
 * lost must not look like a success, so the output is then not committed. */
int io_summary_check(FILE *f);

/* A result written at its offsets, in any order and from any thread: a
 * regular .npy or raw file whose header is written and whose length is
 * set before the rows come. */
struct io_offsets {
    int fd;
    off_t payload;             /* the first element's byte */
    size_t es;
    const char *name;
    int threads;               /* writing threads (<= 0: one per core, a few at most) */
};

/* For `out` (begun by the caller) in `format`, whose whole result is
 * `whole` (shape and dtype; no data): readies *at when the result can be
 * written at offsets (a regular file replaced on commit, in a
 * FORMAT_AT_OFFSETS format), setting *ready; else *ready is 0 and the
 * result is written whole (standard output, a FIFO; a text format).
 * Returns 0, or a status after saying why. */
int io_offsets_start(struct gc_output *out, int format, const struct gc_tensor *whole,
                     struct io_offsets *at, int *ready);

/* `rows` rows of `cols` elements, at `data`, data + ld, ... (in elements),
 * to elements first, first + ld, ... of the result; 0 or GC_EXIT_OUTPUT
 * after saying why. */
int io_offsets_write(const struct io_offsets *at, size_t first, int64_t rows, int64_t cols,
                     size_t ld, const void *data);

/* Converts `t` in place to a C-order tensor of dtype `dt` (no-op if it
 * already is one); dt < 0 keeps its dtype. */
int io_to_c_order(struct gc_tensor *t, int dt);

#endif
