/* One small interface for every matrix file format.
 *
 * Readers take a gc_input (a file or stdin, with a peek buffer so that the
 * format can be told from its first bytes) and fill a gc_tensor.  Writers
 * take a gc_tensor and a FILE* that the caller opened (the program makes it
 * a temporary file renamed into place only on success).  Every error is
 * reported through gc_fail() naming the file, and returns GC_EXIT_INPUT for
 * bad data or GC_EXIT_OUTPUT for I/O errors.  .npy and raw carry any number
 * of dimensions; CSV holds one matrix (or a vector, one value a line); an
 * .npz archive holds .npy members and is read, never written.
 *
 * An input named PATH:NAME is member NAME of the archive PATH (see
 * input_open). */
#ifndef GC_FORMAT_H
#define GC_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/tensor.h"

struct gc_sink;
struct stat;

enum gc_format_id { GC_FMT_NPY, GC_FMT_RAW, GC_FMT_CSV, GC_FMT_CSV_GZ, GC_FMT_CSV_ZST,
                    GC_FMT_NPY_ZST, GC_FMT_NPZ, GC_FMT_COUNT, GC_FMT_AUTO = -1 };

/* An input being read: a regular file, a pipe or stdin, or a member of an
 * archive read as an input of its own. */
struct gc_input {
    const char *path;         /* the file opened: as given, or PATH of PATH:NAME; "-" for stdin */
    const char *name;         /* for messages */
    const char *member;       /* NAME of PATH:NAME, else NULL */
    int fd;
    int is_regular;
    off_t size;               /* file size when is_regular, else -1 */
    unsigned char *buf;       /* bytes read ahead and not yet consumed */
    size_t buf_pos, buf_len, buf_cap;
    int eof;
    int threads;              /* for a large payload from a regular file; 0: all cores */
    char *path_copy;          /* PATH of PATH:NAME, which `path` points to */
    /* Where the bytes come from instead of fd (NULL: fd): a member of an
     * archive (formats/npz.c) or the decoder of another input
     * (formats/zstd.c).  source fills dst with up to n bytes, *got 0 only
     * at the end, and returns 0 or a status after saying what is wrong;
     * source_end, where set, frees source_ctx on input_close.  source_left:
     * the bytes still to come where they are known (a member's), else -1. */
    int (*source)(void *ctx, unsigned char *dst, size_t n, size_t *got);
    void (*source_end)(void *ctx);
    void *source_ctx;
    int64_t source_left;
    /* An archive's directory once read (formats/npz.c), freed on closing:
     * what names its members, and the info() of one, point into it. */
    void *archive;
    void (*archive_free)(void *archive);
};

/* Opens `path`: "-" is stdin; a path that names no file but whose part
 * before a ':' names an archive is PATH:NAME, member NAME of archive PATH.
 * The rule: a path that names an existing file (or "-") is that file;
 * else it splits at the last ':' whose left part is "-" or an existing
 * file that is named *.npz or begins as a zip archive does, so that NAME
 * may hold ':' too.  A path that does not split is opened whole (and may
 * be missing).  Returns 0 or GC_EXIT_INPUT after saying why. */
int input_open(struct gc_input *in, const char *path);
/* An input whose bytes come from `source` (see struct gc_input), `bytes`
 * of them (-1: not known before the end), named `name` in messages;
 * closing it closes nothing else. */
void input_from_source(struct gc_input *in, const char *name,
                       int (*source)(void *ctx, unsigned char *dst, size_t n, size_t *got),
                       void *ctx, int64_t bytes);
void input_close(struct gc_input *in);
/* Whether `path` is read from stdin: "-", or "-:NAME". */
int input_is_stdin(const char *path);
/* stat(2) of the file `path` opens (PATH of PATH:NAME). */
int input_stat(const char *path, struct stat *st);
/* Makes up to `want` bytes available at *p without consuming them; *got may
 * be less at end of input.  Returns 0 or GC_EXIT_INPUT on a read error. */
int input_peek(struct gc_input *in, size_t want, const unsigned char **p, size_t *got);
/* Consumes up to n bytes into dst (buffered bytes first, then read(2)). */
int input_read(struct gc_input *in, void *dst, size_t n, size_t *got);
/* input_read for a payload: from a regular file, a large read is split
 * among up to `threads` threads, each doing pread on slices of it. */
int input_read_payload(struct gc_input *in, void *dst, size_t n, size_t *got);
/* The same for the next n bytes of a regular file into `sink`'s slots
 * (the sink's accept already said yes); *got as for input_read.  A
 * sink's failure is returned as it is (the sink reported it). */
int input_read_to_sink(struct gc_input *in, const struct gc_sink *sink, size_t n, size_t *got);
/* Consumes the rest of the input into a malloc'd buffer. */
int input_slurp(struct gc_input *in, unsigned char **data, size_t *len);
/* Bytes left when that is known (regular files), else -1. */
off_t input_remaining(const struct gc_input *in);

/* Where a large payload may go instead of host memory (the device, say).
 * A regular file's payload, stored as it will be used (native byte
 * order), is offered to it once the tensor is shaped; taken, it arrives in
 * slices, in no set order, from several reading threads, and the tensor
 * comes back shaped with no data (data NULL).  Where it goes is the
 * sink's business, not the format's. */
struct gc_sink {
    /* 1: take the payload of `bytes` for `t` (shaped, no data); 0: let it
     * be read into host memory as usual. */
    int (*accept)(void *ctx, const struct gc_tensor *t, size_t bytes);
    /* A buffer of slot_bytes to read into, once one is free; NULL after
     * the sink has reported why (or reported an earlier failure). */
    void *(*slot)(void *ctx);
    /* `buf`, from slot(), holds bytes [off, off + n) of the payload: hand
     * it on.  n == 0 gives the buffer back unused.  0, or a status that
     * the sink has reported. */
    int (*put)(void *ctx, void *buf, size_t off, size_t n);
    /* The payload's end: every slice was put (status 0) or the read
     * failed (status nonzero, to be returned).  Waits for what is still on
     * its way; 0 or a status that the sink has reported. */
    int (*finish)(void *ctx, int status);
    size_t slot_bytes;
    void *ctx;
};

struct gc_read_opts {
    int has_shape;            /* --shape was given (zeros included) */
    int ndim;                 /* --shape */
    size_t shape[GC_MAX_DIMS];
    int dtype;                /* --in-dtype: raw input's (-1: f32) and text's (-1: f64);
                                 .npy ignores it */
    int fortran_order;        /* --order F for raw input */
    char delimiter;           /* CSV: ' ' means any whitespace; 0: ',', or
                                 whitespace when the first row has no comma */
    int header;               /* CSV: skip one header row */
    const struct gc_alloc *alloc;   /* payload allocator; NULL: malloc */
    int announce;             /* say which format was assumed when nothing decided it */
    int threads;              /* host threads for parsing and reading; 0: all cores */
    const struct gc_sink *sink;   /* a large payload's destination; NULL: host memory */
};

struct gc_write_opts {
    int precision;            /* CSV: significant digits; 0: shortest round-trip */
    char delimiter;
    int level;                /* compression level; -1: the format's default */
    int threads;              /* host threads for formatting and compressing; 0: all cores */
};

struct gc_info {
    enum gc_format_id format;
    enum gc_dtype dtype;
    int ndim;
    size_t shape[GC_MAX_DIMS];
    int fortran_order;
    int big_endian;
    unsigned version_major, version_minor;   /* .npy only */
    size_t header_bytes;      /* bytes before the payload (.npy) */
    off_t file_bytes;         /* -1 if unknown; an archive's member: its .npy's bytes */
    /* An archive's member (format GC_FMT_NPY, as its bytes are): where it
     * lies and how; the strings stay valid until the input is closed. */
    const char *archive;      /* the archive's name; NULL for a file */
    const char *member;       /* its name as stored ("w.npy") */
    const char *key;          /* NAME of PATH:NAME, the name less ".npy" ("w") */
    int deflated;             /* else stored */
    uint64_t stored_bytes;    /* its bytes in the archive */
    /* An archive (.npz) itself: */
    size_t members;
};

/* What a format can do, as columns of its row, so that no caller asks
 * which format it is. */
enum gc_format_caps {
    FORMAT_BINARY = 1 << 0,     /* bytes that are not text (compressed text counts): not
                                   written to a terminal */
    FORMAT_AT_OFFSETS = 1 << 1, /* the elements in C order after a header whose length
                                   info() gives (write_header writes it): read and
                                   written at byte offsets, in any order */
    FORMAT_VERSIONED = 1 << 2,  /* a header of its own with a format version (info's
                                   version and header_bytes) */
    FORMAT_ARCHIVE = 1 << 3,    /* a zip of .npy members (.npz): read, never written (no
                                   write); a pipeline reading one writes .npy */
};

/* gc_format.dtypes: a bit (1 << GC_*) per dtype. */
#define GC_DTYPES_ALL ((1u << GC_DTYPE_COUNT) - 1)

struct gc_format {
    const char *name;         /* "npy", "raw", "csv", "csv.gz", "csv.zst", "npy.zst" */
    const char *extensions;   /* space-separated, with dots: ".npy" */
    const char *summary;      /* one line for --help and the man page */
    /* Returns 1 if the first bytes look like this format. NULL: never. */
    int (*probe)(const unsigned char *head, size_t n);
    int (*read)(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t);
    int (*write)(FILE *f, const char *name, const struct gc_tensor *t,
                 const struct gc_write_opts *o);
    /* Fills `info` reading as little of the input as the format allows. */
    int (*info)(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info);
    /* For formats whose payload is the elements in C order, as stored in
     * memory: writes what comes before them (nothing, for raw), so that a
     * caller can stream the payload itself.  NULL for other formats. */
    int (*write_header)(FILE *f, const char *name, const struct gc_tensor *t);
    int max_ndim;             /* the most dimensions it can write */
    unsigned caps;            /* FORMAT_* */
    unsigned dtypes;          /* the dtypes it can hold: a bit (1 << GC_*) each */
    int level_min, level_max; /* --level's range; level_max 0: it compresses nothing */
    /* 0 when what the format needs at run time (a library loaded on first
     * use) is there, else `status` after saying why, naming `name`.  NULL:
     * it needs nothing. */
    int (*ready)(const char *name, int status);
    /* An archive's (FORMAT_ARCHIVE; NULL for the others): read() and
     * info() take the member named (in->member) or the only one; these
     * list them.  `members` fills the archive's own info (its member
     * count, its bytes), `member_info` member i's, as info() would. */
    int (*members)(struct gc_input *in, struct gc_info *archive);
    int (*member_info)(struct gc_input *in, const struct gc_read_opts *o, size_t i,
                       struct gc_info *info);
};

extern const struct gc_format gc_formats[GC_FMT_COUNT];

/* Whether `format` has every capability of `caps` (FORMAT_*). */
int format_can(int format, unsigned caps);
/* Whether `format` can hold elements of `dtype`. */
int format_holds(int format, enum gc_dtype dtype);

/* By name ("npy", "csv.gz", "bin" and "raw" for raw); -1 if unknown. */
int format_by_name(const char *name);
/* By a path's extension; -1 if none matches. */
int format_by_extension(const char *path);
/* The format of `in` into *format: .npz when a member is named, then a
 * real magic number (.npy), then the extension; then, for stdin or an
 * unknown extension, what the bytes look like (zip, gzip, zstd, CSV text,
 * else raw), saying so on stderr when `announce`.  zstd data is .npy.zst
 * when its first decompressed bytes are .npy's magic, else what the
 * extension says or .csv.zst.  Returns 0, or a status after reporting a
 * read error. */
int format_identify(struct gc_input *in, int announce, int *format);
/* The format to read `in` as into *format: `fmt` (--in-format) when it is
 * not GC_FMT_AUTO, else format_identify's.  A member named (PATH:NAME) is
 * read from an archive only: another format named for it is a usage
 * error. */
int format_choose(struct gc_input *in, int fmt, int announce, int *format);

/* 1 when `c` may separate CSV fields: it cannot occur inside a number,
 * inf or nan, nor start a comment or a quote, nor end a line. */
int csv_delimiter_ok(char c);

/* Opens, detects (unless `fmt` >= 0), reads, closes; the format read
 * goes to *read_as when it is not NULL. */
int format_read_path(const char *path, int fmt, const struct gc_read_opts *o,
                     struct gc_tensor *t, int *read_as);

#endif
