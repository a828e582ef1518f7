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

int npz_probe(const unsigned char *head, size_t n);
int npz_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int npz_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);
int npz_members(struct gc_input *in, struct gc_info *archive);
int npz_member_info(struct gc_input *in, const struct gc_read_opts *o, size_t i,
                    struct gc_info *info);

#endif
