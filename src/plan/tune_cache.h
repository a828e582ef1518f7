/* The cache of tuned choices: for one device, one kernel signature and one
 * bucket of shapes, the fastest of gemmcli's own kernels as `gemmcli tune`
 * or `mul --tune` measured it (src/bench/tune.c).  Host code only: no CUDA,
 * nothing printed, and no failure here ever fails a product.
 *
 * Where: $XDG_CACHE_HOME/gemmcli/tune.txt when XDG_CACHE_HOME is set to an
 * absolute path, else $HOME/.cache/gemmcli/tune.txt when HOME is an
 * absolute path; otherwise there is no cache.  Missing directories are
 * created with mode 0700, the file with 0600.
 *
 * The file is text: a first line naming the format's version, then one
 * entry a line, twelve fields apart by blanks:
 *
 *   # gemmcli tune cache 1
 *   NVIDIA_H200 9.0 132 f32 1/1 q48/8 q48/8 q48/8 edge_peel 2.8731 2.7012 2026-11-22T10:31:05Z
 *
 *   device name (blanks made '_'), compute capability, SM count,
 *   signature (gemm_sigs[].name), the buckets of batch, m, n and k,
 *   kernel, its median ms, cuBLAS's median ms ('-': not measured), and
 *   when it was stored (UTC).
 *
 * The first eight fields are the key.  The bucket of a dimension d:
 *   - d itself for d <= 16 ("12/4"), else "qQ" with Q = round(4 log2 d),
 *     its nearest quarter octave (4096, 4097 and 4100 are all q48; 4871
 *     is q49);
 *   - then "/8" when d is a multiple of 8, "/4" when a multiple of 4 but
 *     not of 8, "/1" otherwise (vector loads and TMA care): 4096 is
 *     q48/8, 4100 q48/4, 4097 q48/1.
 *
 * A file whose first line names another version, or that is not text
 * (a NUL or another control byte), larger than TUNE_CACHE_MAX_BYTES, not
 * a regular file, or unreadable, has no entries; a malformed line is
 * skipped.  A store replaces such a file if it is a regular file its
 * owner may write; anything else it leaves as it is. */
#ifndef GC_TUNE_CACHE_H
#define GC_TUNE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define TUNE_CACHE_VERSION 1
#define TUNE_CACHE_MAX_BYTES ((size_t)1 << 20)
/* Above this many entries a store drops the oldest (a line is at most
 * TUNE_LINE_MAX bytes, so the file stays far below the size limit). */
#define TUNE_CACHE_MAX_ENTRIES 1000
#define TUNE_LINE_MAX 512
#define TUNE_KEY_MAX 384
#define TUNE_PATH_MAX 4096

/* The first eight fields, as they appear in the file. */
struct tune_key {
    char text[TUNE_KEY_MAX];
};

struct tune_entry {
    struct tune_key key;
    char kernel[64];
    double ms;                  /* the kernel's median */
    double cublas_ms;           /* < 0: not measured */
    char date[24];              /* "2026-11-22T10:31:05Z"; empty: now, when stored */
};

/* The bucket of one dimension (d >= 1) as written in the file: "12/4",
 * "q48/8".  `buf` holds at least 16 bytes. */
void tune_bucket_text(int64_t d, char *buf, size_t n);

/* The key of a product: `device` the device's name (blanks made '_'),
 * compute capability cc_major.cc_minor, `sm_count` SMs, signature `sig`,
 * and the buckets of batch, m, n, k (each >= 1).  Returns 0, or -1 when a
 * field cannot be written (an empty or overlong name, a signature that is
 * not a lowercase word, a dimension below 1). */
int tune_key_make(struct tune_key *key, const char *device, int cc_major, int cc_minor,
                  int sm_count, const char *sig, int64_t batch, int64_t m, int64_t n, int64_t k);

/* The cache file's path into buf: 0, or -1 when there is no cache
 * (neither variable is an absolute path, or the path would not fit). */
int tune_cache_path(char *buf, size_t n);

/* The directory the cache file lives in (and auto's measured rates,
 * src/plan/rates.h): 0, or -1 as tune_cache_path. */
int tune_cache_dir(char *buf, size_t n);

/* A text file's whole text, NUL-terminated, in *text (free it), read as
 * the cache is: TUNE_CACHE_OK, or TUNE_CACHE_MISSING / TUNE_CACHE_FOREIGN
 * (not a regular file, over TUNE_CACHE_MAX_BYTES, not text) with *text
 * NULL; -1 when out of memory. */
int tune_cache_read_text(const char *path, char **text, size_t *len);

/* mkdir -p with mode 0700 for what is missing of `dir`: 0, or -1 with the
 * reason in why[0..n). */
int tune_cache_make_dirs(const char *dir, char *why, size_t n);

/* Replaces (or creates) the file at `path` with `text` as a store
 * replaces the cache: missing directories made 0700, the new file written
 * beside it and renamed over it, a file without its owner's write
 * permission left as it is.  0, or -1 with the reason in why[0..n). */
int tune_cache_write_text(const char *path, const char *text, size_t len, char *why, size_t n);

/* 1 and the kernel's name in kernel_out when an entry has `key` (the last
 * such line), else 0.  Reads at most TUNE_CACHE_MAX_BYTES. */
int tune_cache_lookup(const struct tune_key *key, char *kernel_out, size_t n);

/* The same for several keys and one read of the file: out[i] is the
 * entry of keys[i], or has an empty kernel when there is none.  Returns
 * how many were found. */
int tune_cache_lookup_entries(const struct tune_key *keys, int n_keys, struct tune_entry *out);

/* Adds `count` entries (an entry whose key is already there replaces that
 * line), keeping at most TUNE_CACHE_MAX_ENTRIES by dropping the oldest.
 * The new file is written beside the old one and renamed over it: a
 * reader sees the old file or the new one, never a part; of concurrent
 * stores the last rename wins, and no temporary file outlives a failure.
 * A file without its owner's write permission is left as it is (a way to
 * keep a set of choices fixed).  Returns 0, or -1 with the reason in
 * why[0..n), which names any path other than the file's own (callers name
 * that: tune_cache_path). */
int tune_cache_store(const struct tune_entry *entries, int count, char *why, size_t n);

/* Removes the file: 0 when removed, 1 when there was none (or no cache),
 * -1 with the reason in why[0..n), as tune_cache_store gives it. */
int tune_cache_clear(char *why, size_t n);

enum tune_cache_state {
    TUNE_CACHE_NONE,            /* no cache location */
    TUNE_CACHE_MISSING,         /* no file yet */
    TUNE_CACHE_FOREIGN,         /* unreadable, not a regular file, too large, not text,
                                   or another version: no entries */
    TUNE_CACHE_OK,
};

/* Everything in the file, and whether a store would replace it, for
 * `gemmcli tune --show`. */
struct tune_cache_listing {
    char path[TUNE_PATH_MAX];   /* empty for TUNE_CACHE_NONE */
    enum tune_cache_state state;
    struct tune_entry *entries;
    size_t count;
    size_t malformed;           /* lines skipped */
    int stored;                 /* a store would replace the file (or create it) */
    char kept[128];             /* else why a store leaves it as it is */
};

/* Reads the listing: 0, or -1 when out of memory. */
int tune_cache_list(struct tune_cache_listing *l);
void tune_cache_listing_free(struct tune_cache_listing *l);

#endif
