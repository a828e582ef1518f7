/* NumPy .npz: a zip archive of .npy members, as np.savez (stored) and
 * np.savez_compressed (deflated) write it.  Read, never written.
 *
 * The archive is found from its end: the end record (zip64's when there
 * is one) says where the central directory lies, and the directory where
 * each member lies; each member's local header must agree with it.  A
 * member is named as np.load names it, its name less ".npy"; PATH:NAME
 * (input_open) takes it by that name or by its whole name, and PATH alone
 * takes the only member.  Names are only ever keys: never paths, and
 * escaped where they are shown (gc_fail escapes what it prints).
 *
 * A member is read as an .npy stream by formats/npy.c, its bytes given on
 * demand (copied, or inflated by zlib straight into the reader's buffers),
 * so that the .npy header's size must agree with the member's size before
 * anything is allocated for the payload.  Inflating never writes more than
 * the member's declared size, which is itself held to what deflate can
 * make of its compressed bytes (1032 to 1), and those to the file; the
 * CRC-32 is checked at the member's end.
 *
 * A regular file is read where the directory points (pread); an archive
 * from a pipe is read into memory first, since its directory comes last.
 * Refused: encryption, methods other than stored (0) and deflate (8),
 * archives on several disks, sizes or offsets that disagree or point
 * past the data, names holding a NUL byte, two members of one name
 * (np.load would see one), more than NPZ_MEMBERS_MAX members. */
#include "formats/format_impl.h"

#include <errno.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/error.h"

#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_END_SIG 0x06054b50u
#define ZIP64_END_SIG 0x06064b50u
#define ZIP64_LOCATOR_SIG 0x07064b50u
#define ZIP_LOCAL_LEN 30
#define ZIP_CENTRAL_LEN 46
#define ZIP_END_LEN 22
#define ZIP64_END_LEN 56
#define ZIP64_LOCATOR_LEN 20
#define ZIP_COMMENT_MAX 65535
#define ZIP_EXTRA_ZIP64 0x0001
#define ZIP_FLAG_ENCRYPTED 0x0001
#define ZIP_FLAG_DESCRIPTOR 0x0008
#define ZIP_FLAG_STRONG_ENCRYPTION 0x0040
#define ZIP_STORED 0
#define ZIP_DEFLATED 8
#define ZIP_AES 99
#define ZIP_FFFF 0xffffu
#define ZIP_FFFFFFFF 0xffffffffu
/* An archive of more members is refused before its directory is read. */
#define NPZ_MEMBERS_MAX ((size_t)1 << 20)
/* Nor is a directory larger than this read: a million members of
 * np.savez's names take under 100 MiB. */
#define NPZ_DIRECTORY_MAX ((uint64_t)256 << 20)
/* Deflate's most: a 258-byte match in every 2 bits. */
#define DEFLATE_RATIO_MAX 1032
/* Compressed bytes read from a file at a time, after a first read that
 * holds an .npy header. */
#define NPZ_CHUNK ((size_t)256 << 10)
#define NPZ_FIRST_CHUNK ((size_t)4 << 10)
/* How many names a message lists. */
#define NPZ_LISTED 8

struct npz_member {
    const char *name;         /* as stored, NUL-terminated */
    const char *key;          /* the name less ".npy", NUL-terminated */
    size_t name_len;
    unsigned flags, method;
    uint32_t crc;
    uint64_t csize, usize;    /* compressed and uncompressed bytes */
    uint64_t local;           /* the local header's offset */
};

struct npz_archive {
    const char *name;         /* for messages */
    int fd;
    unsigned char *mem;       /* a pipe's whole archive; NULL: read from fd */
    uint64_t size;
    uint64_t cd_at;           /* the directory: every member's data lies before it */
    struct npz_member *m;
    size_t count;
    char *names;              /* names and keys, each NUL-terminated */
};

/* A member being read: the source of its input (input_from_source). */
struct npz_stream {
    const struct npz_archive *z;
    const struct npz_member *m;
    char *label;              /* ARCHIVE:KEY */
    uint64_t at;              /* the next compressed byte's offset */
    uint64_t cleft, uleft;    /* compressed bytes not yet taken, bytes not yet given */
    uint32_t crc;
    z_stream zs;
    int z_ready, ended;       /* inflate started; deflate's end seen */
    unsigned char *chunk;     /* compressed bytes read from a file */
    size_t chunk_cap;
    int done, status;         /* the end was checked; the first failure */
};

static uint32_t le16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
    return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
    return le32(p) | (uint64_t)le32(p + 4) << 32;
}

int npz_probe(const unsigned char *head, size_t n)
{
    return n >= 4 && head[0] == 'P' && head[1] == 'K' &&
           ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))
        ? PROBE_SHORT_MAGIC : PROBE_NO;
}

/* n bytes of the archive at `at` into dst: 0, or GC_EXIT_INPUT after
 * saying why (`what`: the structure being read). */
static int zip_get(const struct npz_archive *z, void *dst, size_t n, uint64_t at,
                   const char *what)
{
    if (at > z->size || n > z->size - at)
        return gc_fail(GC_EXIT_INPUT, "%s: truncated zip archive: %s at byte %ju runs past "
                       "its end (%ju bytes)", z->name, what, (uintmax_t)at, (uintmax_t)z->size);
    if (z->mem) {
        memcpy(dst, z->mem + at, n);
        return 0;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(z->fd, (unsigned char *)dst + done, n - done, (off_t)(at + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return gc_fail(GC_EXIT_INPUT, "%s: read error: %s", z->name, strerror(errno));
        if (r == 0)
            return gc_fail(GC_EXIT_INPUT, "%s: truncated: the file ends inside %s at byte %ju "
                           "(it shrank while read?)", z->name, what, (uintmax_t)(at + done));
        done += (size_t)r;
    }
    return 0;
}

/* The zip64 extra field's values for those of *usize, *csize and *local
 * (NULL: not asked) that hold 0xFFFFFFFF, in the APPNOTE's order.  0, 1
 * when a value is missing, 2 when the extra field is malformed. */
static int zip64_values(const unsigned char *extra, size_t len, uint64_t *usize,
                        uint64_t *csize, uint64_t *local)
{
    uint64_t *want[3] = { usize, csize, local };
    int need = 0;
    for (int i = 0; i < 3; i++)
        need += want[i] && *want[i] == ZIP_FFFFFFFF;
    while (len >= 4) {
        size_t id = le16(extra), n = le16(extra + 2);
        if (n > len - 4)
            return 2;
        if (id == ZIP_EXTRA_ZIP64 && need) {
            const unsigned char *p = extra + 4;
            if (n < (size_t)need * 8)
                return 1;
            for (int i = 0; i < 3; i++)
                if (want[i] && *want[i] == ZIP_FFFFFFFF) {
                    *want[i] = le64(p);
                    p += 8;
                }
            need = 0;
        }
        extra += 4 + n;
        len -= 4 + n;
    }
    return need ? 1 : 0;
}

/* Why an archive has no end record: not a zip at all, or cut short. */
static int npz_no_end(const struct npz_archive *z)
{
    unsigned char head[4];
    int zip = z->size >= 4 && zip_get(z, head, sizeof head, 0, "the first bytes") == 0 &&
              npz_probe(head, sizeof head);
    return gc_fail(GC_EXIT_INPUT, "%s: %s: no zip end record", z->name,
                   zip ? "truncated zip archive" : "not a zip archive (.npz)");
}

/* The end record: the last whose comment ends the file (a comment may
 * hold the signature's bytes).  Its offset to *end_at, its fields to the
 * others. */
static int npz_end_record(const struct npz_archive *z, uint64_t *end_at, uint64_t *cd_at,
                          uint64_t *cd_size, uint64_t *count)
{
    size_t tail = z->size < ZIP_END_LEN + ZIP_COMMENT_MAX ? (size_t)z->size
                                                          : ZIP_END_LEN + ZIP_COMMENT_MAX;
    if (tail < ZIP_END_LEN)
        return npz_no_end(z);
    unsigned char *t = malloc(tail);
    if (!t)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", z->name);
    uint64_t base = z->size - tail;
    int status = zip_get(z, t, tail, base, "the end record");
    size_t at = tail - ZIP_END_LEN + 1;
    while (!status && at > 0) {
        at--;
        if (le32(t + at) == ZIP_END_SIG && at + ZIP_END_LEN + le16(t + at + 20) == tail)
            break;
        if (at == 0)
            status = npz_no_end(z);
    }
    const unsigned char *e = t + at;
    if (!status && ((le16(e + 4) != 0 && le16(e + 4) != ZIP_FFFF) ||
                    (le16(e + 6) != 0 && le16(e + 6) != ZIP_FFFF) || le16(e + 8) != le16(e + 10)))
        status = gc_fail(GC_EXIT_INPUT, "%s: a zip archive on several disks is not read",
                         z->name);
    if (!status) {
        *end_at = base + at;
        *count = le16(e + 10);
        *cd_size = le32(e + 12);
        *cd_at = le32(e + 16);
    }
    free(t);
    return status;
}

/* zip64's end record, when a locator precedes the end record: its
 * offset to *end64, its fields to the others (which it replaces). */
static int npz_zip64_end(const struct npz_archive *z, uint64_t end_at, uint64_t *end64,
                         uint64_t *cd_at, uint64_t *cd_size, uint64_t *count)
{
    unsigned char loc[ZIP64_LOCATOR_LEN], e[ZIP64_END_LEN];
    *end64 = end_at;
    if (end_at < ZIP64_LOCATOR_LEN ||
        zip_get(z, loc, sizeof loc, end_at - ZIP64_LOCATOR_LEN, "the zip64 locator") != 0 ||
        le32(loc) != ZIP64_LOCATOR_SIG) {
        if (*count == ZIP_FFFF || *cd_size == ZIP_FFFFFFFF || *cd_at == ZIP_FFFFFFFF)
            return gc_fail(GC_EXIT_INPUT, "%s: bad zip archive: its end record points to a "
                           "zip64 end record that is not there", z->name);
        return 0;
    }
    uint64_t at = le64(loc + 8), room = end_at - ZIP64_LOCATOR_LEN;
    int status = 0;
    if (at > room || room - at < ZIP64_END_LEN ||
        (status = zip_get(z, e, sizeof e, at, "the zip64 end record")) ||
        le32(e) != ZIP64_END_SIG)
        return status ? status : gc_fail(GC_EXIT_INPUT, "%s: bad zip64 end record: its "
                                         "locator points to byte %ju", z->name, (uintmax_t)at);
    if (le32(loc + 4) != 0 || le32(loc + 16) > 1 || le32(e + 16) != 0 || le32(e + 20) != 0 ||
        le64(e + 24) != le64(e + 32))
        return gc_fail(GC_EXIT_INPUT, "%s: a zip archive on several disks is not read",
                       z->name);
    *end64 = at;
    *count = le64(e + 32);
    *cd_size = le64(e + 40);
    *cd_at = le64(e + 48);
    return 0;
}

/* The directory's place and entry count, from the end records, checked
 * against each other and against what gemmcli reads. */
static int npz_find_end(const struct npz_archive *z, uint64_t *cd_at, uint64_t *cd_size,
                        uint64_t *count)
{
    uint64_t end_at = 0, end = 0;
    int status = npz_end_record(z, &end_at, cd_at, cd_size, count);
    if (status || (status = npz_zip64_end(z, end_at, &end, cd_at, cd_size, count)))
        return status;
    if (*cd_at > end || *cd_size != end - *cd_at)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip archive: its directory (%ju bytes at byte "
                       "%ju) does not end where the end record begins (byte %ju)", z->name,
                       (uintmax_t)*cd_size, (uintmax_t)*cd_at, (uintmax_t)end);
    if (*count > NPZ_MEMBERS_MAX || *cd_size > NPZ_DIRECTORY_MAX)
        return gc_fail(GC_EXIT_INPUT, "%s: %ju members in a directory of %ju bytes: more than "
                       "gemmcli reads (%zu members, %ju MiB)", z->name, (uintmax_t)*count,
                       (uintmax_t)*cd_size, NPZ_MEMBERS_MAX,
                       (uintmax_t)(NPZ_DIRECTORY_MAX >> 20));
    if (*count > *cd_size / ZIP_CENTRAL_LEN)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip archive: %ju members cannot fit its "
                       "directory of %ju bytes", z->name, (uintmax_t)*count,
                       (uintmax_t)*cd_size);
    return 0;
}

/* One directory entry at d[0..left) into m, its name and key to *names;
 * the entry's length to *len. */
static int npz_entry(const struct npz_archive *z, const unsigned char *d, size_t left,
                     struct npz_member *m, char **names, size_t *len)
{
    if (left < ZIP_CENTRAL_LEN || le32(d) != ZIP_CENTRAL_SIG)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip directory: entry %zu is not one", z->name,
                       (size_t)(m - z->m) + 1);
    size_t nlen = le16(d + 28), elen = le16(d + 30), clen = le16(d + 32);
    if (ZIP_CENTRAL_LEN + nlen + elen + clen > left)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip directory: entry %zu runs past its end",
                       z->name, (size_t)(m - z->m) + 1);
    const char *name = (const char *)d + ZIP_CENTRAL_LEN;
    if (memchr(name, '\0', nlen))
        return gc_fail(GC_EXIT_INPUT, "%s: a member's name holds a NUL byte (after '%s')",
                       z->name, name);
    m->flags = le16(d + 8);
    m->method = le16(d + 10);
    m->crc = le32(d + 16);
    m->csize = le32(d + 20);
    m->usize = le32(d + 24);
    m->local = le32(d + 42);
    int bad = zip64_values(d + ZIP_CENTRAL_LEN + nlen, elen, &m->usize, &m->csize, &m->local);
    if (bad)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip directory: member '%.*s': %s", z->name,
                       (int)nlen, name, bad == 1 ? "a zip64 size or offset is missing"
                                                 : "malformed extra field");
    if (le16(d + 34) != 0 && le16(d + 34) != ZIP_FFFF)
        return gc_fail(GC_EXIT_INPUT, "%s: a zip archive on several disks is not read",
                       z->name);
    m->name = *names;
    m->name_len = nlen;
    memcpy(*names, name, nlen);
    (*names)[nlen] = '\0';
    *names += nlen + 1;
    size_t klen = nlen >= 4 && memcmp(name + nlen - 4, ".npy", 4) == 0 ? nlen - 4 : nlen;
    m->key = *names;
    memcpy(*names, name, klen);
    (*names)[klen] = '\0';
    *names += klen + 1;
    *len = ZIP_CENTRAL_LEN + nlen + elen + clen;
    return 0;
}

static int npz_key_order(const void *a, const void *b)
{
    const struct npz_member *x = *(const struct npz_member *const *)a;
    const struct npz_member *y = *(const struct npz_member *const *)b;
    return strcmp(x->key, y->key);
}

/* Two members of one key: np.load would see only one of them. */
static int npz_check_keys(const struct npz_archive *z)
{
    const struct npz_member **by = malloc((z->count ? z->count : 1) * sizeof *by);
    if (!by)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", z->name);
    for (size_t i = 0; i < z->count; i++)
        by[i] = &z->m[i];
    qsort(by, z->count, sizeof *by, npz_key_order);
    int status = 0;
    for (size_t i = 1; i < z->count && !status; i++)
        if (strcmp(by[i - 1]->key, by[i]->key) == 0)
            status = gc_fail(GC_EXIT_INPUT, "%s: two members are both named '%s' ('%s' and "
                             "'%s'): which one is meant is not clear", z->name, by[i]->key,
                             by[i - 1]->name, by[i]->name);
    free(by);
    return status;
}

static int npz_read_directory(struct npz_archive *z)
{
    uint64_t cd_at = 0, cd_size = 0, count = 0;
    int status = npz_find_end(z, &cd_at, &cd_size, &count);
    if (status)
        return status;
    /* cd_size is within the file, so these allocations are too. */
    unsigned char *d = malloc(cd_size ? (size_t)cd_size : 1);
    z->m = calloc(count ? (size_t)count : 1, sizeof *z->m);
    z->names = malloc(2 * (size_t)cd_size + 1);
    if (!d || !z->m || !z->names) {
        free(d);
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory for a directory of %ju bytes",
                       z->name, (uintmax_t)cd_size);
    }
    z->cd_at = cd_at;
    z->count = (size_t)count;
    status = zip_get(z, d, (size_t)cd_size, cd_at, "the directory");
    size_t at = 0, len = 0;
    char *names = z->names;
    for (size_t i = 0; i < z->count && !status; i++, at += len)
        status = npz_entry(z, d + at, (size_t)cd_size - at, &z->m[i], &names, &len);
    if (!status && at != cd_size)
        status = gc_fail(GC_EXIT_INPUT, "%s: bad zip directory: %ju bytes after its %zu "
                         "entries", z->name, (uintmax_t)(cd_size - at), z->count);
    free(d);
    return status ? status : npz_check_keys(z);
}

static void npz_free(void *archive)
{
    struct npz_archive *z = archive;
    if (!z)
        return;
    free(z->mem);
    free(z->m);
    free(z->names);
    free(z);
}

/* The archive `in` holds, its directory read once and kept with it. */
static int npz_open(struct gc_input *in, struct npz_archive **out)
{
    if (in->archive) {
        *out = in->archive;
        return 0;
    }
    struct npz_archive *z = calloc(1, sizeof *z);
    if (!z)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", in->name);
    z->name = in->name;
    z->fd = in->fd;
    int status = 0;
    if (in->is_regular) {
        z->size = (uint64_t)in->size;
    } else {
        size_t len = 0;
        status = input_slurp(in, &z->mem, &len);
        z->size = len;
    }
    if (!status)
        status = npz_read_directory(z);
    if (status) {
        npz_free(z);
        return status;
    }
    in->archive = z;
    in->archive_free = npz_free;
    *out = z;
    return 0;
}

/* "a, b, w" (the first NPZ_LISTED keys) into buf. */
static void npz_list_keys(const struct npz_archive *z, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < z->count && i < NPZ_LISTED && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", z->m[i].key);
    if (z->count > NPZ_LISTED && used < cap)
        snprintf(buf + used, cap - used, ", ... (%zu in all)", z->count);
}

/* The member `in` names, or the only one. */
static int npz_select(const struct npz_archive *z, const char *want, size_t *index)
{
    char names[512];
    npz_list_keys(z, names, sizeof names);
    if (!want) {
        if (z->count == 1) {
            *index = 0;
            return 0;
        }
        if (z->count == 0)
            return gc_fail(GC_EXIT_INPUT, "%s: holds no arrays", z->name);
        return gc_fail(GC_EXIT_INPUT, "%s: holds %zu arrays (%s): name one as %s:NAME",
                       z->name, z->count, names, z->name);
    }
    /* Its whole name first, as np.load looks it up. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < z->count; i++)
            if (strcmp(pass ? z->m[i].key : z->m[i].name, want) == 0) {
                *index = i;
                return 0;
            }
    return gc_fail(GC_EXIT_INPUT, "%s: no array named '%s'%s%s%s", z->name, want,
                   z->count ? " (it holds " : " (it holds none", names, ")");
}

static const char *zip_method_name(unsigned method)
{
    switch (method) {
    case 1: return "shrink";
    case 6: return "implode";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "LZMA";
    case 93: return "Zstandard";
    case 95: return "xz";
    case 98: return "PPMd";
    default: return "unknown";
    }
}

/* What the directory says of member m, before its data is touched. */
static int npz_check_member(const struct npz_archive *z, const struct npz_member *m,
                            const char *label)
{
    if ((m->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENCRYPTION)) || m->method == ZIP_AES)
        return gc_fail(GC_EXIT_INPUT, "%s: the member is encrypted; gemmcli reads no "
                       "encrypted archives", label);
    if (m->method != ZIP_STORED && m->method != ZIP_DEFLATED)
        return gc_fail(GC_EXIT_INPUT, "%s: compression method %u (%s) is not read: only "
                       "stored (0) and deflate (8), as np.savez and np.savez_compressed write",
                       label, m->method, zip_method_name(m->method));
    if (m->local >= z->cd_at)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip directory: the member's header offset %ju "
                       "is past its data (%ju bytes)", label, (uintmax_t)m->local,
                       (uintmax_t)z->cd_at);
    if (m->method == ZIP_STORED && m->csize != m->usize)
        return gc_fail(GC_EXIT_INPUT, "%s: a stored member of %ju bytes takes %ju in the "
                       "archive", label, (uintmax_t)m->usize, (uintmax_t)m->csize);
    if (m->method == ZIP_DEFLATED &&
        (m->csize > UINT64_MAX / DEFLATE_RATIO_MAX - 1 ||
         m->usize > (m->csize + 1) * DEFLATE_RATIO_MAX))
        return gc_fail(GC_EXIT_INPUT, "%s: declares %ju bytes from %ju compressed: more than "
                       "deflate can make of them (1032 to 1)", label, (uintmax_t)m->usize,
                       (uintmax_t)m->csize);
    return 0;
}

/* The local header of m: its name, method, CRC and sizes as the
 * directory has them; the data's offset to *data. */
static int npz_check_local(const struct npz_archive *z, const struct npz_member *m,
                           const char *label, uint64_t *data)
{
    unsigned char h[ZIP_LOCAL_LEN];
    int status = zip_get(z, h, sizeof h, m->local, "a member's header");
    if (status)
        return status;
    if (le32(h) != ZIP_LOCAL_SIG)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip archive: no member header at byte %ju, "
                       "where the directory puts it", label, (uintmax_t)m->local);
    size_t nlen = le16(h + 26), elen = le16(h + 28);
    unsigned char *ne = malloc(nlen + elen + 1);
    if (!ne)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", label);
    status = zip_get(z, ne, nlen + elen, m->local + ZIP_LOCAL_LEN, "a member's header");
    const char *differs = NULL;
    uint64_t usize = le32(h + 22), csize = le32(h + 18);
    if (!status && (nlen != m->name_len || memcmp(ne, m->name, nlen) != 0))
        differs = "name";
    else if (!status && le16(h + 8) != m->method)
        differs = "compression method";
    else if (!status && (le16(h + 6) & ZIP_FLAG_ENCRYPTED) != (m->flags & ZIP_FLAG_ENCRYPTED))
        differs = "encryption";
    else if (!status && !(m->flags & ZIP_FLAG_DESCRIPTOR) &&
             (zip64_values(ne + nlen, elen, &usize, &csize, NULL) != 0 || le32(h + 14) != m->crc ||
              usize != m->usize || csize != m->csize))
        differs = le32(h + 14) != m->crc ? "CRC-32" : "sizes";
    free(ne);
    if (status)
        return status;
    if (differs)
        return gc_fail(GC_EXIT_INPUT, "%s: bad zip archive: the member's header and the "
                       "directory give different %s", label, differs);
    *data = m->local + ZIP_LOCAL_LEN + nlen + elen;
    if (*data > z->cd_at || m->csize > z->cd_at - *data)
        return gc_fail(GC_EXIT_INPUT, "%s: truncated or bad zip archive: %ju bytes of data at "
                       "byte %ju run past the members' end (byte %ju)", label,
                       (uintmax_t)m->csize, (uintmax_t)*data, (uintmax_t)z->cd_at);
    return 0;
}

static void npz_stream_close(struct npz_stream *s)
{
    if (s->z_ready)
        inflateEnd(&s->zs);
    free(s->chunk);
    free(s->label);
    memset(s, 0, sizeof *s);
}

/* "ARCHIVE:KEY" into a new string. */
static char *npz_label(const struct npz_archive *z, const struct npz_member *m)
{
    size_t n = strlen(z->name) + strlen(m->key) + 2;
    char *label = malloc(n);
    if (label)
        snprintf(label, n, "%s:%s", z->name, m->key);
    return label;
}

/* Readies member i to be read from its first byte. */
static int npz_stream_open(const struct npz_archive *z, size_t i, struct npz_stream *s)
{
    memset(s, 0, sizeof *s);
    s->z = z;
    s->m = &z->m[i];
    if (!(s->label = npz_label(z, s->m)))
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", z->name);
    uint64_t data = 0;
    int status = npz_check_member(z, s->m, s->label);
    if (!status)
        status = npz_check_local(z, s->m, s->label, &data);
    if (!status && s->m->method == ZIP_DEFLATED) {
        if (inflateInit2(&s->zs, -MAX_WBITS) != Z_OK)
            status = gc_fail(GC_EXIT_INPUT, "%s: cannot start zlib", s->label);
        s->z_ready = !status;
    }
    s->at = data;
    s->cleft = s->m->csize;
    s->uleft = s->m->usize;
    return status;
}

/* More compressed bytes for zlib, when it has taken what it had. */
static int npz_refill(struct npz_stream *s)
{
    if (s->zs.avail_in || !s->cleft)
        return 0;
    /* A first read small enough for a header alone (all info wants). */
    size_t want = s->chunk ? NPZ_CHUNK : NPZ_FIRST_CHUNK;
    size_t n = s->cleft < want ? (size_t)s->cleft : want;
    if (s->z->mem) {
        s->zs.next_in = s->z->mem + s->at;
    } else {
        if (s->chunk_cap < n) {
            unsigned char *c = realloc(s->chunk, want);
            if (!c)
                return gc_fail(GC_EXIT_INPUT, "%s: out of memory", s->label);
            s->chunk = c;
            s->chunk_cap = want;
        }
        int status = zip_get(s->z, s->chunk, n, s->at, "a member's data");
        if (status)
            return status;
        s->zs.next_in = s->chunk;
    }
    s->zs.avail_in = (uInt)n;
    s->at += n;
    s->cleft -= n;
    return 0;
}

/* Inflates into dst[0..n); n never passes what the member has left, so
 * zlib never writes past the declared size. */
static int npz_inflate(struct npz_stream *s, unsigned char *dst, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (s->ended)
            return gc_fail(GC_EXIT_INPUT, "%s: the deflate data ends after %ju of the %ju "
                           "bytes the directory declares", s->label,
                           (uintmax_t)(s->m->usize - s->uleft + done), (uintmax_t)s->m->usize);
        int status = npz_refill(s);
        if (status)
            return status;
        uInt room = n - done < ((size_t)1 << 30) ? (uInt)(n - done) : (uInt)1 << 30;
        s->zs.next_out = dst + done;
        s->zs.avail_out = room;
        int r = inflate(&s->zs, Z_NO_FLUSH);
        done += room - s->zs.avail_out;
        if (r == Z_STREAM_END)
            s->ended = 1;
        else if (r == Z_BUF_ERROR && !s->zs.avail_in && !s->cleft)
            return gc_fail(GC_EXIT_INPUT, "%s: truncated deflate data: its %ju compressed "
                           "bytes end before the %ju bytes declared", s->label,
                           (uintmax_t)s->m->csize, (uintmax_t)s->m->usize);
        else if (r != Z_OK && r != Z_BUF_ERROR)
            return gc_fail(GC_EXIT_INPUT, "%s: corrupt deflate data (%s)", s->label,
                           s->zs.msg ? s->zs.msg : "zlib error");
    }
    return 0;
}

/* The member's end: deflate's stream must end here, on its last
 * compressed byte, and the CRC-32 agree. */
static int npz_finish(struct npz_stream *s)
{
    s->done = 1;
    while (s->m->method == ZIP_DEFLATED && !s->ended) {
        unsigned char extra;
        int status = npz_refill(s);
        if (status)
            return status;
        s->zs.next_out = &extra;
        s->zs.avail_out = 1;
        int r = inflate(&s->zs, Z_NO_FLUSH);
        if (s->zs.avail_out == 0)
            return gc_fail(GC_EXIT_INPUT, "%s: the deflate data inflates to more than the %ju "
                           "bytes the directory declares", s->label, (uintmax_t)s->m->usize);
        if (r == Z_STREAM_END)
            s->ended = 1;
        else if (r == Z_BUF_ERROR && !s->zs.avail_in && !s->cleft)
            return gc_fail(GC_EXIT_INPUT, "%s: truncated deflate data: its %ju compressed "
                           "bytes end before the stream does", s->label,
                           (uintmax_t)s->m->csize);
        else if (r != Z_OK && r != Z_BUF_ERROR)
            return gc_fail(GC_EXIT_INPUT, "%s: corrupt deflate data (%s)", s->label,
                           s->zs.msg ? s->zs.msg : "zlib error");
    }
    if (s->m->method == ZIP_DEFLATED && (s->zs.avail_in || s->cleft))
        return gc_fail(GC_EXIT_INPUT, "%s: %ju compressed bytes after the end of the deflate "
                       "data", s->label, (uintmax_t)(s->zs.avail_in + s->cleft));
    if (s->crc != s->m->crc)
        return gc_fail(GC_EXIT_INPUT, "%s: CRC-32 mismatch: the data's is %08x, the archive "
                       "says %08x", s->label, (unsigned)s->crc, (unsigned)s->m->crc);
    return 0;
}

/* The member input's source (input_from_source). */
static int npz_source(void *ctx, unsigned char *dst, size_t n, size_t *got)
{
    struct npz_stream *s = ctx;
    *got = 0;
    if (s->status || s->done)
        return s->status;
    size_t want = n < s->uleft ? n : (size_t)s->uleft;
    int status = 0;
    if (s->m->method == ZIP_DEFLATED) {
        status = npz_inflate(s, dst, want);
    } else if (want) {
        status = zip_get(s->z, dst, want, s->at, "a member's data");
        s->at += want;
    }
    if (!status) {
        s->crc = libdeflate_crc32(s->crc, dst, want);
        s->uleft -= want;
        *got = want;
        if (!s->uleft)
            status = npz_finish(s);
    }
    s->status = status;
    return status;
}

int npz_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t)
{
    struct npz_archive *z;
    struct npz_stream s;
    size_t i;
    int status = npz_open(in, &z);
    if (status || (status = npz_select(z, in->member, &i)))
        return status;
    if (!(status = npz_stream_open(z, i, &s))) {
        struct gc_input member;
        input_from_source(&member, s.label, npz_source, &s, (int64_t)s.m->usize);
        /* The .npy reader reads to the member's end, where the checks are. */
        status = npy_read(&member, o, t);
        if (!status && !s.done) {
            status = gc_fail(GC_EXIT_INPUT, "%s: %ju bytes after the .npy data", s.label,
                             (uintmax_t)s.uleft);
            gc_tensor_free(t);
        }
        input_close(&member);
    }
    npz_stream_close(&s);
    return status;
}

int npz_member_info(struct gc_input *in, const struct gc_read_opts *o, size_t i,
                    struct gc_info *info)
{
    struct npz_archive *z;
    struct npz_stream s;
    int status = npz_open(in, &z);
    if (status)
        return status;
    if (i >= z->count)
        return gc_fail(GC_EXIT_INPUT, "%s: no member %zu", z->name, i);
    if (!(status = npz_stream_open(z, i, &s))) {
        struct gc_input member;
        input_from_source(&member, s.label, npz_source, &s, (int64_t)s.m->usize);
        status = npy_info(&member, o, info);
        input_close(&member);
    }
    npz_stream_close(&s);
    if (status)
        return status;
    info->file_bytes = (off_t)z->m[i].usize;
    info->archive = z->name;
    info->member = z->m[i].name;
    info->key = z->m[i].key;
    info->deflated = z->m[i].method == ZIP_DEFLATED;
    info->stored_bytes = z->m[i].csize;
    return 0;
}

int npz_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    struct npz_archive *z;
    size_t i;
    int status = npz_open(in, &z);
    if (status || (status = npz_select(z, in->member, &i)))
        return status;
    return npz_member_info(in, o, i, info);
}

int npz_members(struct gc_input *in, struct gc_info *archive)
{
    struct npz_archive *z;
    int status = npz_open(in, &z);
    if (status)
        return status;
    memset(archive, 0, sizeof *archive);
    archive->format = GC_FMT_NPZ;
    archive->members = z->count;
    archive->file_bytes = (off_t)z->size;
    return 0;
}
