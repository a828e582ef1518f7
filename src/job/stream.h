/* Writing a result straight from device memory: the matrix is copied to
 * the host in chunks through a few page-locked buffers and written while
 * the next chunks are on their way, so the copy hides behind the write and
 * no host copy of the whole result exists.  A pipe gets the chunks in
 * order from this thread; a regular file gets them from a few writer
 * threads, each with pwrite at the chunk's offset, several at once. */
#ifndef GC_STREAM_H
#define GC_STREAM_H

#include "src/job/device.h"
#include "src/job/options.h"
#include "src/job/output.h"

/* 1 if a result of dtype `dt` can be streamed to format `fmt` as it is. */
int stream_can_write(int fmt, enum gc_dtype dt, enum gc_dtype wanted);

/* Writes the C-order tensor at device address `d` (of `shape`'s shape and
 * dtype) in `fmt` to `out`, which the caller began and commits or aborts.
 * Adds the time spent waiting for copies to *d2h_ms and the time spent
 * writing, or waiting for the writer threads, to *write_ms.  Leaves the
 * FILE positioned after the payload. */
int stream_write_result(struct gc_output *out, int fmt, struct gc_device *dev,
                        const void *d, const struct gc_tensor *shape, double *d2h_ms,
                        double *write_ms);

#endif
