/* Reading and writing a payload, the elements after a format's header:
 * the size checks that keep a short or lying file from allocating much,
 * reads split among threads, and writes with pwrite from several threads
 * to a regular file (formats/payload.c).  Private to formats/. */
#ifndef GC_PAYLOAD_H
#define GC_PAYLOAD_H

#include <stdio.h>

#include "formats/format.h"

/* Fails (GC_EXIT_INPUT, naming the size) when `bytes` for `what` exceed the
 * host memory available now, so that a reader refuses a matrix it cannot
 * hold instead of allocating until the kernel kills the process. */
int payload_memory_check(const struct gc_input *in, size_t bytes, const char *what);

/* Fails unless the bytes left in a regular file are exactly `bytes`; says
 * nothing for pipes.  Called before allocating, so that a header cannot
 * make a short file allocate much. */
int payload_check_left(struct gc_input *in, size_t bytes, const char *what);

/* Reads exactly `bytes` of payload into `dst` and requires the input to end
 * there; `what` names the expected layout in the error messages. */
int payload_read_exact(struct gc_input *in, void *dst, size_t bytes, const char *what);

/* Allocates t's payload (t already shaped) from `alloc` and reads it with
 * payload_read_exact.  On a pipe a large payload is first read into a
 * buffer that grows with the data, so that a header claiming terabytes
 * fails as truncated instead of allocating them.  A regular file's
 * payload goes to `sink` instead when it takes it (t->data stays NULL);
 * NULL: no sink. */
int payload_read_tensor(struct gc_input *in, struct gc_tensor *t, const struct gc_alloc *alloc,
                        const struct gc_sink *sink, const char *what);

/* Writes `n` bytes, reporting a failure as an output error naming `name`. */
int write_all(FILE *f, const char *name, const void *p, size_t n);

/* write_all for a payload: to a regular file, a large one goes out on up
 * to `threads` threads (0: all cores) with pwrite after f is flushed, and
 * f is left positioned after it. */
int write_payload(FILE *f, const char *name, const void *p, size_t n, int threads);

/* Writes the tensor's elements in C order whatever its storage order,
 * converting nothing; a C-order payload goes through write_payload. */
int write_c_order(FILE *f, const char *name, const struct gc_tensor *t, int threads);

#endif
