/* gzip text for the CSV reader: members are read one after another, so a
 * multi-member file reads as one, in time linear in the text whatever the
 * members' sizes.  From a regular file (up to GZ_WHOLE_MAX):
 *   - the members whose headers give their sizes (as gemmcli writes them)
 *     are inflated side by side, one a thread;
 *   - a large member of another kind (gzip's, np.savetxt's: one member for
 *     the whole text) is inflated on every thread by speculative
 *     block-boundary search (formats/inflate_par.c); where that gives up,
 *     zlib inflates the member again from its start, past the text already
 *     given, and says what is wrong;
 *   - any other member that inflates into the text buffer goes through
 *     libdeflate in one call, at about twice zlib's speed.
 * Larger members on one thread and pipes stream through zlib.  A truncated
 * stream, a bad CRC, length or header CRC, reserved flags and bytes after
 * the last member are errors, with the same messages on every path. */
#include "formats/text_source.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "formats/inflate_par.h"

/* Above this, a regular .csv.gz file is inflated from a stream instead of
 * being read whole first. */
#define GZ_WHOLE_MAX ((size_t)1 << 30)
#define GZ_IN_CHUNK ((size_t)256 << 10)
/* A member with fewer compressed bytes left than this, or read on one
 * thread, is inflated in one go: parallel inflation would gain little. */
#define GZ_PAR_MIN ((size_t)2 << 20)
#define GZ_PROBE ((size_t)256 << 10)
#define GZ_PROBE_OUT ((size_t)4 << 20)

struct gz_member {
    size_t at, bytes;         /* in comp */
    uint32_t text;            /* ISIZE: the text it inflates to */
    char *dst;
    int ok;
};

static int gz_fail(struct text_source *s, const char *why)
{
    return gc_fail(GC_EXIT_INPUT, "%s: %s (member at byte %ju)", s->name, why,
                   (uintmax_t)s->member_at);
}

/* zlib's words for a fault, in this program's. */
static const char *gz_zlib_why(const z_stream *zs)
{
    const char *m = zs->msg ? zs->msg : "";
    return strstr(m, "header crc") ? "bad header CRC in gzip data"
         : strstr(m, "data check") ? "bad CRC in gzip data"
         : strstr(m, "length check") ? "bad length in gzip trailer"
         : strstr(m, "unknown header flags") ? "reserved flags set in gzip header"
         : "corrupt gzip data";
}

/* Why zlib rejects a member that libdeflate would not inflate. */
static const char *gz_diagnose(const unsigned char *p, size_t n)
{
    z_stream zs;
    static const char *const unknown = "corrupt gzip data";
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return unknown;
    unsigned char scratch[1 << 16];
    const char *why = unknown;
    size_t off = 0;
    for (;;) {
        size_t chunk = n - off < (1u << 30) ? n - off : (1u << 30);
        zs.next_in = (unsigned char *)p + off;
        zs.avail_in = (uInt)chunk;
        zs.next_out = scratch;
        zs.avail_out = sizeof scratch;
        int r = inflate(&zs, Z_NO_FLUSH);
        off += chunk - zs.avail_in;
        if (r == Z_DATA_ERROR) {
            why = gz_zlib_why(&zs);
            break;
        }
        if (r == Z_STREAM_END || r == Z_MEM_ERROR || r == Z_STREAM_ERROR)
            break;
        if (zs.avail_out != 0 && off == n) {
            why = "truncated gzip data";
            break;
        }
    }
    inflateEnd(&zs);
    return why;
}

/* Checks a member's header where libdeflate would not: reserved flags and
 * the header CRC (FHCRC), which gzip -t checks too.  zlib checks both
 * itself on the streaming path. */
static int gz_check_header(struct text_source *s, const unsigned char *p, size_t n, size_t *len)
{
    if (n < 10)
        return gz_fail(s, "truncated gzip data");
    if (p[2] != 8)
        return gz_fail(s, "unknown gzip compression method");
    unsigned flg = p[3];
    if (flg & 0xe0)
        return gz_fail(s, "reserved flags set in gzip header");
    size_t at = 10;
    if (flg & 4) {                     /* FEXTRA */
        if (n < at + 2)
            return gz_fail(s, "truncated gzip data");
        at += 2 + (size_t)(p[at] | p[at + 1] << 8);
    }
    for (unsigned bit = 8; bit <= 16; bit *= 2)   /* FNAME, FCOMMENT */
        if (flg & bit) {
            const unsigned char *z = at < n ? memchr(p + at, 0, n - at) : NULL;
            if (!z)
                return gz_fail(s, "truncated gzip data");
            at = (size_t)(z - p) + 1;
        }
    if (flg & 2) {                     /* FHCRC */
        if (n < at + 2)
            return gz_fail(s, "truncated gzip data");
        unsigned want = p[at] | (unsigned)p[at + 1] << 8;
        if ((crc32(0L, p, (uInt)at) & 0xffff) != want)
            return gz_fail(s, "bad header CRC in gzip data");
        at += 2;
    }
    *len = at;
    return 0;
}

/* The size an "MS" header gives the member at p, or 0 when the member
 * has another header (then it and what follows are read in sequence). */
static size_t gz_sized_member(const unsigned char *p, size_t left)
{
    static const unsigned char head[4] = { 0x1f, 0x8b, 8, 4 };
    if (left < GZ_HEAD_BYTES + GZ_TAIL_BYTES || memcmp(p, head, 4) != 0 || p[10] != 8 ||
        p[11] != 0 || p[12] != 'M' || p[13] != 'S' || p[14] != 4 || p[15] != 0)
        return 0;
    size_t bytes = p[16] | (size_t)p[17] << 8 | (size_t)p[18] << 16 | (size_t)p[19] << 24;
    return bytes >= GZ_HEAD_BYTES + GZ_TAIL_BYTES && bytes <= left ? bytes : 0;
}

/* Lists the leading members that say their size; nothing on failure. */
static void gz_index(struct text_source *s)
{
    size_t at = 0, n = 0, cap = 0;
    for (size_t bytes; (bytes = gz_sized_member(s->comp + at, s->clen - at)); at += bytes) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct gz_member *m = realloc(s->members, cap * sizeof *m);
            if (!m) {
                n = 0;
                break;
            }
            s->members = m;
        }
        const unsigned char *t = s->comp + at + bytes - 4;
        s->members[n++] = (struct gz_member){ at, bytes,
                                              t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
                                              (uint32_t)t[3] << 24, NULL, 0 };
    }
    s->n_members = n;
}

struct gz_batch {
    const unsigned char *comp;
    struct gz_member *members;
};

static void gz_inflate_members(void *arg, size_t first, size_t last)
{
    const struct gz_batch *b = arg;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    for (size_t i = first; i < last && d; i++) {
        struct gz_member *m = &b->members[i];
        const unsigned char *p = b->comp + m->at;
        size_t in_used, out;
        m->ok = libdeflate_deflate_decompress_ex(d, p + GZ_HEAD_BYTES,
                                                 m->bytes - GZ_HEAD_BYTES - GZ_TAIL_BYTES,
                                                 m->dst, m->text, &in_used, &out) ==
                    LIBDEFLATE_SUCCESS &&
                in_used == m->bytes - GZ_HEAD_BYTES - GZ_TAIL_BYTES && out == m->text;
        const unsigned char *t = p + m->bytes - GZ_TAIL_BYTES;
        uint32_t crc = t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
        m->ok = m->ok && libdeflate_crc32(0, m->dst, m->text) == crc;
    }
    libdeflate_free_decompressor(d);
}

/* Inflates the sized members from cpos on that fit in dst, side by side;
 * 0 when there are none, or when one of them is faulty: then the members
 * are read again in sequence, which says what is wrong where. */
static size_t gz_fill_sized(struct text_source *s, char *dst, size_t cap)
{
    while (s->next_member < s->n_members && s->members[s->next_member].at < s->cpos)
        s->next_member++;
    size_t first = s->next_member, n = 0, text = 0;
    if (first == s->n_members || s->members[first].at != s->cpos)
        return 0;
    while (first + n < s->n_members && s->members[first + n].text <= cap - text) {
        s->members[first + n].dst = dst + text;
        text += s->members[first + n].text;
        n++;
    }
    if (n == 0)
        return 0;
    int threads = s->threads < (int)n ? s->threads : (int)n;
    struct gz_batch batch = { s->comp, s->members + first };
    parallel_for(threads, n, 1, gz_inflate_members, &batch);
    for (size_t i = first; i < first + n; i++)
        if (!s->members[i].ok)
            return 0;
    const struct gz_member *last = &s->members[first + n - 1];
    s->cpos = last->at + last->bytes;
    s->next_member = first + n;
    return text;
}

int text_source_open(struct text_source *s, struct gc_input *in, int gz, int threads)
{
    memset(s, 0, sizeof s[0]);
    s->in = in;
    s->name = in->name;
    s->gz = gz;
    s->threads = threads;
    if (!gz)
        return 0;
    off_t left = input_remaining(in);
    if (left >= 0 && (uint64_t)left <= GZ_WHOLE_MAX) {
        int status = input_slurp(in, &s->comp, &s->clen);
        if (status)
            return status;
        s->ld = libdeflate_alloc_decompressor();
        if (!s->ld)
            return gc_fail(GC_EXIT_INPUT, "%s: out of memory", s->name);
        gz_index(s);
    } else {
        s->zin = malloc(GZ_IN_CHUNK);
        if (!s->zin)
            return gc_fail(GC_EXIT_INPUT, "%s: out of memory", s->name);
    }
    if (inflateInit2(&s->zs, 16 + MAX_WBITS) != Z_OK)
        return gc_fail(GC_EXIT_INPUT, "%s: cannot start zlib", s->name);
    s->z_ready = 1;
    s->zs.next_in = s->zin ? s->zin : s->comp;
    s->zs.avail_in = 0;
    if (s->clen == 0 && !s->zin)
        return gc_fail(GC_EXIT_INPUT, "%s: empty file, not gzip data", s->name);
    return 0;
}

void text_source_close(struct text_source *s)
{
    inflate_par_close(s->par);
    if (s->z_ready)
        inflateEnd(&s->zs);
    libdeflate_free_decompressor(s->ld);
    free(s->members);
    free(s->comp);
    free(s->zin);
    memset(s, 0, sizeof s[0]);
}

/* Streaming input: at least `want` compressed bytes at zs.next_in unless
 * the input ends first. */
static int gz_stream_want(struct text_source *s, size_t want)
{
    if (s->zs.avail_in >= want || s->in_eof)
        return 0;
    size_t have = s->zs.avail_in;
    s->consumed += (uint64_t)(s->zs.next_in - s->zin);
    memmove(s->zin, s->zs.next_in, have);
    size_t got;
    int status = input_read(s->in, s->zin + have, GZ_IN_CHUNK - have, &got);
    if (status)
        return status;
    if (got == 0)
        s->in_eof = 1;
    s->zs.next_in = s->zin;
    s->zs.avail_in = (uInt)(have + got);
    return 0;
}

/* 1 when the n (< 3) bytes at p, the last of the input, start gzip's
 * magic number: a member cut short in its header, not foreign data. */
static int gz_cut_in_magic(const unsigned char *p, size_t n)
{
    return n < 3 && p[0] == 0x1f && (n < 2 || p[1] == 0x8b);
}

/* The start of the next member: 0 with *more = 0 at the end of the data. */
static int gz_next_member(struct text_source *s, int *more)
{
    *more = 0;
    if (s->comp) {
        if (s->cpos == s->clen)
            return 0;
        s->member_at = s->cpos;
        if (gz_cut_in_magic(s->comp + s->cpos, s->clen - s->cpos))
            return gz_fail(s, "truncated gzip data");
        if (s->clen - s->cpos < 3 || s->comp[s->cpos] != 0x1f || s->comp[s->cpos + 1] != 0x8b)
            return s->cpos == 0
                ? gc_fail(GC_EXIT_INPUT, "%s: not gzip data", s->name)
                : gc_fail(GC_EXIT_INPUT, "%s: %zu bytes of trailing garbage after the gzip data",
                          s->name, s->clen - s->cpos);
        *more = 1;
        return gz_check_header(s, s->comp + s->cpos, s->clen - s->cpos, &s->head_len);
    }
    int status = gz_stream_want(s, 3);
    if (status)
        return status;
    if (s->zs.avail_in == 0)
        return s->consumed == 0 ? gc_fail(GC_EXIT_INPUT, "%s: empty input, not gzip data",
                                          s->name) : 0;
    s->member_at = s->consumed + (uint64_t)(s->zs.next_in - s->zin);
    if (gz_cut_in_magic(s->zs.next_in, s->zs.avail_in))
        return gz_fail(s, "truncated gzip data");
    if (s->zs.avail_in < 3 || s->zs.next_in[0] != 0x1f || s->zs.next_in[1] != 0x8b)
        return s->member_at == 0
            ? gc_fail(GC_EXIT_INPUT, "%s: not gzip data", s->name)
            : gc_fail(GC_EXIT_INPUT, "%s: trailing garbage after the gzip data (at byte %ju)",
                      s->name, (uintmax_t)s->member_at);
    *more = 1;
    return 0;
}

/* Inflates one member, or the rest of it, through zlib into dst. */
static int gz_inflate_zlib(struct text_source *s, char *dst, size_t cap, size_t *got)
{
    if (!s->in_member) {
        inflateReset(&s->zs);
        s->in_member = 1;
        if (s->comp) {
            s->zs.next_in = s->comp + s->cpos;
            s->zs.avail_in = 0;
        }
    }
    s->zs.next_out = (unsigned char *)dst;
    s->zs.avail_out = (uInt)(cap < (1u << 30) ? cap : (1u << 30));
    while (s->zs.avail_out > 0) {
        if (s->comp) {
            size_t left = s->clen - (size_t)(s->zs.next_in - s->comp);
            if (s->zs.avail_in == 0)
                s->zs.avail_in = (uInt)(left < (1u << 30) ? left : (1u << 30));
        } else if (s->zs.avail_in == 0) {
            int status = gz_stream_want(s, 1);
            if (status)
                return status;
        }
        uInt before_in = s->zs.avail_in;
        int r = inflate(&s->zs, Z_NO_FLUSH);
        if (r == Z_STREAM_END) {
            s->in_member = 0;
            break;
        }
        if (r == Z_DATA_ERROR || r == Z_NEED_DICT)
            return gz_fail(s, gz_zlib_why(&s->zs));
        if (r == Z_MEM_ERROR)
            return gc_fail(GC_EXIT_INPUT, "%s: out of memory inflating", s->name);
        if (r == Z_BUF_ERROR && before_in == 0)
            return gz_fail(s, "truncated gzip data");
    }
    *got = (size_t)((char *)s->zs.next_out - dst);
    if (s->comp)
        s->cpos = (size_t)(s->zs.next_in - s->comp);
    if (s->skip) {
        size_t drop = s->skip < *got ? (size_t)s->skip : *got;
        memmove(dst, dst + drop, *got - drop);
        *got -= drop;
        s->skip -= drop;
    }
    return 0;
}

/* Starts inflating the member at cpos on several threads, where it is
 * large and read whole; 1 when started.  Nothing says how large a member
 * is: one that ends within its first GZ_PROBE bytes is small, and so,
 * it is assumed, are the members after it (they are inflated in one go). */
static int gz_par_start(struct text_source *s)
{
    if (!s->comp || s->threads < 2 || s->small_members || s->head_len > s->clen - s->cpos ||
        s->clen - s->cpos - s->head_len < GZ_PAR_MIN)
        return 0;
    unsigned char *probe = malloc(GZ_PROBE_OUT);
    size_t in_used, out;
    if (!probe || libdeflate_deflate_decompress_ex(s->ld, s->comp + s->cpos + s->head_len,
                                                   GZ_PROBE, probe, GZ_PROBE_OUT, &in_used,
                                                   &out) == LIBDEFLATE_SUCCESS)
        s->small_members = 1;
    free(probe);
    if (s->small_members)
        return 0;
    struct inflate_par_plan plan = { s->threads, s->threads, 0 };
    s->par = inflate_par_open(s->comp + s->cpos + s->head_len,
                              s->clen - s->cpos - s->head_len, &plan);
    s->par_left = 0;
    s->par_given = 0;
    return s->par != NULL;
}

/* Text from the member being inflated on several threads.  At its end the
 * next member follows; where the parallel inflater cannot go on, zlib
 * inflates the member again from its start, past the text already given,
 * and says what is wrong. */
static int gz_fill_par(struct text_source *s, char *dst, size_t cap, size_t *got)
{
    if (s->par_left == 0) {
        size_t used;
        int r = inflate_par_next(s->par, &s->par_text, &s->par_left, &used);
        if (r <= 0) {
            inflate_par_close(s->par);
            s->par = NULL;
            s->par_left = 0;
            if (r == 0)
                s->cpos += s->head_len + used;
            else
                s->skip = s->par_given;
            return r;
        }
    }
    size_t n = s->par_left < cap ? s->par_left : cap;
    memcpy(dst, s->par_text, n);
    s->par_text += n;
    s->par_left -= n;
    s->par_given += n;
    *got = n;
    return 1;
}

int text_source_fill(struct text_source *s, char *dst, size_t cap, size_t *got)
{
    *got = 0;
    if (!s->gz)
        return input_read(s->in, dst, cap, got);
    while (*got == 0) {
        int status, more;
        if (s->par) {
            if (gz_fill_par(s, dst, cap, got) < 0 &&
                (status = gz_inflate_zlib(s, dst, cap, got)))
                return status;
            continue;
        }
        if (s->in_member) {
            if ((status = gz_inflate_zlib(s, dst, cap, got)))
                return status;
            continue;
        }
        if (s->comp && s->clen > s->cpos && (*got = gz_fill_sized(s, dst, cap)))
            return 0;
        if ((status = gz_next_member(s, &more)) || !more)
            return status;
        if (gz_par_start(s))
            continue;
        if (s->comp) {
            /* A member that inflates into the buffer goes through libdeflate,
             * about twice zlib's speed; a larger one through zlib. */
            size_t used, n;
            enum libdeflate_result r = libdeflate_gzip_decompress_ex(
                s->ld, s->comp + s->cpos, s->clen - s->cpos, dst, cap, &used, &n);
            if (r == LIBDEFLATE_SUCCESS) {
                s->cpos += used;
                *got = n;
                continue;
            }
            if (r != LIBDEFLATE_INSUFFICIENT_SPACE)
                return gz_fail(s, gz_diagnose(s->comp + s->cpos, s->clen - s->cpos));
        }
        if ((status = gz_inflate_zlib(s, dst, cap, got)))
            return status;
    }
    return 0;
}
