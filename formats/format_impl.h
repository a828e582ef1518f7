/* The entry points behind gc_formats[]: one set per format file, plus the
 * helpers those files share.  Private to formats/. */
#ifndef GC_FORMAT_IMPL_H
#define GC_FORMAT_IMPL_H

#include "formats/format.h"

/* Probe results: a magic number long enough to trust before the file name
 * matched, or the bytes look like this format (trusted only when the name
 * says nothing). */
enum { PROBE_NO = 0, PROBE_LOOKS = 1, PROBE_MAGIC = 2 };

int npy_probe(const unsigned char *head, size_t n);
int npy_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int npy_write(FILE *f, const char *name, const struct gc_tensor *t,
              const struct gc_write_opts *o);
int npy_write_header(FILE *f, const char *name, const struct gc_tensor *t);
int raw_write_header(FILE *f, const char *name, const struct gc_tensor *t);
int npy_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);

int raw_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int raw_write(FILE *f, const char *name, const struct gc_tensor *t,
              const struct gc_write_opts *o);
int raw_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);

int csv_probe(const unsigned char *head, size_t n);
int csv_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int csv_write(FILE *f, const char *name, const struct gc_tensor *t,
              const struct gc_write_opts *o);
int csv_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);

int csv_gz_probe(const unsigned char *head, size_t n);
int csv_gz_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int csv_gz_write(FILE *f, const char *name, const struct gc_tensor *t,
                 const struct gc_write_opts *o);
int csv_gz_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);

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
