/* The entry points behind gc_formats[]: one set per format file, plus the
 * helpers those files share.  Private to formats/. */
#ifndef GC_FORMAT_IMPL_H
#define GC_FORMAT_IMPL_H

#include "formats/format.h"

/* Probe results: a magic number long enough to trust before the file name
 * matched; one too short to trust before the name (gzip's, zstd's: raw
 * floats may start so) but trusted over the look of text; or the bytes
 * look like this format.  The last two count only when the name says
 * nothing. */
enum { PROBE_NO = 0, PROBE_LOOKS = 1, PROBE_SHORT_MAGIC = 2, PROBE_MAGIC = 3 };

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

/* formats/zstd.c: zstd through libzstd, loaded on first use. */

/* The level .csv.zst and .npy.zst are written at without --level, and
 * the range --level takes for them. */
#define ZSTD_LEVEL_DEFAULT 3
#define ZSTD_LEVEL_MIN 1
#define ZSTD_LEVEL_MAX 19

/* 0 when libzstd can be loaded, else `status` after saying why (the file
 * `name`, the library, its Debian package). */
int zstd_ready(const char *name, int status);
/* Sets *npy to 1 when the first decompressed bytes of the zstd data at
 * the start of `in` are .npy's magic, 0 when they are not, without
 * consuming anything (it decompresses what it peeks at, a block or two);
 * -1 when it cannot tell (data that is not zstd, a missing library: the
 * reader says why).  0 or a status after a read error. */
int zstd_peek_npy(struct gc_input *in, int *npy);
int zstd_probe(const unsigned char *head, size_t n);
int csv_zst_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int csv_zst_write(FILE *f, const char *name, const struct gc_tensor *t,
                  const struct gc_write_opts *o);
int csv_zst_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);
int npy_zst_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int npy_zst_write(FILE *f, const char *name, const struct gc_tensor *t,
                  const struct gc_write_opts *o);
int npy_zst_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);

/* formats/npz.c: .npz archives, read a member at a time. */
int npz_probe(const unsigned char *head, size_t n);
int npz_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
int npz_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);
int npz_members(struct gc_input *in, struct gc_info *archive);
int npz_member_info(struct gc_input *in, const struct gc_read_opts *o, size_t i,
                    struct gc_info *info);

#endif
