/* The one result writer: every executor's result reaches the output
 * through it, and every run ends in result_finish.  An executor hands it
 *   - a host tensor: result_finish writes it;
 *   - a device buffer: result_from_device streams it into the output at
 *     once when nothing on the host needs it, or copies it to the host;
 *   - rows at their offsets, while the tiles that computed them are still
 *     running: result_open_rows, then result_put_rows from any thread.
 * A failed verification writes nothing and keeps an earlier file; the
 * output is committed only after the summary went out.  MPI ranks
 * (src/scale/dist.c) use the same steps: result_refused, result_open_rows
 * or result_write, and result_commit on rank 0. */
#ifndef GC_RESULT_H
#define GC_RESULT_H

#include "src/job/job.h"

/* The device result `d` (C order, `shape`'s dtype and shape): streamed
 * into the output when `may_stream` and the format allows, else copied
 * into `host` (allocated here). */
int result_from_device(struct job *j, const void *d, const struct gc_tensor *shape,
                       int may_stream, struct gc_tensor *host);

/* Begins the output (with output_begin's `flags` besides the format's)
 * for a result of `whole`'s shape and dtype and, where the output is a
 * regular .npy or raw file, writes its header and sets its length, so
 * that rows can go to their offsets: *at_offsets 1.  Otherwise (standard
 * output, a FIFO, a text format) *at_offsets is 0 and result_finish
 * writes the whole result into the begun output. */
int result_open_rows(struct job *j, const struct gc_tensor *whole, int flags, int *at_offsets);

/* `rows` rows of `cols` elements, at `data`, data + ld, ... (in elements),
 * to elements first, first + ld, ... of the result, for a job (`job`)
 * whose rows go to their offsets: 0 or GC_EXIT_OUTPUT after saying why.
 * The shape of tiled_sink's put, so that tiles hand their rows straight
 * to it. */
int result_put_rows(void *job, size_t first, int64_t rows, int64_t cols, size_t ld,
                    const void *data);

/* 0 when the result may be written; GC_EXIT_VERIFY when its verification
 * failed, after printing the summary and saying that nothing is written
 * (or the summary's own status, when it could not be printed). */
int result_refused(struct job *j);

/* `t` as `dtype`, C order, into the output (begun here unless it is); the
 * time it took goes to the report's write time. */
int result_write(struct job *j, struct gc_tensor *t, enum gc_dtype dtype);

/* The run's end: the summary printed, then the output committed. */
int result_commit(struct job *j);

/* The end of every successful run: refused, or `result` written as
 * `dtype` unless it is in the output already, and committed. */
int result_finish(struct job *j, struct gc_tensor *result, enum gc_dtype dtype);

#endif
