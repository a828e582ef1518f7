/* CSV and gzip CSV: numbers in text, one matrix row per line.
 *
 * Reading is as strict as numpy.loadtxt:
 *   - fields are separated by the delimiter (',' by default); with ' ' any
 *     run of spaces and tabs separates them; spaces and tabs around a field
 *     are ignored, and so is a CR before the LF;
 *   - blank lines and '#' comments (whole lines or after the data) are
 *     skipped; --header skips the first line that is neither;
 *   - a field is a decimal number ([+-]digits[.digits][e[+-]digits]) or
 *     nan, inf, -inf, infinity in any case; a leading UTF-8 BOM is skipped;
 *   - an empty or quoted field, a trailing delimiter, anything that is not
 *     a number and a row with another number of fields than the first are
 *     errors reported as FILE:LINE:COLUMN (columns count bytes, from 1).
 * Numbers are parsed correctly rounded into float32, or float64 when the
 * read options ask for GC_F64 or GC_F16, whatever the process's locale.
 *
 * Text is parsed as it is read, a chunk of whole lines at a time, so that
 * the text is never held whole: memory is the chunk and the rows, which
 * grow only while the memory available allows (info keeps no rows).
 *
 * Writing gives the shortest text that reads back to the identical value
 * (float16 is written as the float32 it widens to, which reads back
 * exactly), or --precision significant digits; integers as integers.  An
 * empty matrix is written as the one comment line
 * "# empty matrix: shape (R, C)", which this reader turns back into an
 * R x C matrix and NumPy's loadtxt reads as an empty array.
 *
 * gzip: members are read one after another, so a multi-member file reads
 * as one.  From a regular file (up to GZ_WHOLE_MAX) each member that
 * inflates into the text buffer goes through libdeflate in one call, at
 * about twice zlib's speed; larger members and pipes stream through zlib.
 * A truncated stream, a bad CRC, length or header CRC, reserved flags and
 * bytes after the last member are errors.
 * Output is a series of gzip members of CSV_GZ_CHUNK bytes of text each, at
 * CSV_GZ_LEVEL unless --level (0-12, libdeflate's scale) says otherwise:
 * level 1 is the fastest that compresses, and on matrix text its files are
 * only a little larger than level 6's, which is much slower. */
#include "format_impl.h"

#include <inttypes.h>
#include <libdeflate.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../core/error.h"
#include "decimal.h"

#define CSV_GZ_LEVEL 1
#define CSV_GZ_CHUNK ((size_t)8 << 20)
#define CSV_OUT_CHUNK ((size_t)1 << 20)

static int csv_is_text_byte(unsigned char c)
{
    return c >= 0x20 ? c != 0x7f : c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

int csv_delimiter_ok(char c)
{
    unsigned char u = (unsigned char)c;
    if (u == ' ' || u == '\t')
        return 1;
    /* Letters make up e, inf, infinity and nan in any case; digits, the
     * point and signs make up numbers; '#' starts a comment; quotes are
     * refused as fields; control bytes and non-ASCII bytes are not
     * characters one can see. */
    if (u < 0x20 || u >= 0x7f || (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z'))
        return 0;
    return strchr(".+-#\"'", u) == NULL;
}

int csv_probe(const unsigned char *head, size_t n)
{
    size_t i = 0, digits = 0;
    if (n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    for (; i < n; i++) {
        if (!csv_is_text_byte(head[i]))
            return PROBE_NO;
        digits += head[i] >= '0' && head[i] <= '9';
    }
    return digits ? PROBE_LOOKS : PROBE_NO;
}

int csv_gz_probe(const unsigned char *head, size_t n)
{
    return n >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8 ? PROBE_LOOKS
                                                                          : PROBE_NO;
}

/* ---- parsing ---- */

struct csv_parser {
    const char *name;
    const char *p, *end;        /* *end == 0 */
    const char *line_start;
    size_t line;
    char delim;                 /* ' ': any run of blanks */
    int is_f64;
    locale_t loc;
};

static int csv_blank(char c, char delim)
{
    return c == ' ' || c == '\r' || (c == '\t' && delim != '\t');
}

static int csv_at_row_end(const struct csv_parser *ps, const char *q)
{
    return *q == '\n' || *q == '#' || q == ps->end;
}

static int csv_error(const struct csv_parser *ps, const char *at, const char *what)
{
    return gc_fail(GC_EXIT_INPUT, "%s:%zu:%zu: %s", ps->name, ps->line,
                   (size_t)(at - ps->line_start) + 1, what);
}

/* Shows the offending field, printable bytes only, cut at 40. */
static int csv_bad_field(const struct csv_parser *ps, const char *at, const char *what)
{
    char shown[48];
    size_t n = 0;
    const char *q = at;
    while (n < 40 && q < ps->end && *q != '\n' && *q != ps->delim &&
           !(ps->delim == ' ' && *q == '\t')) {
        shown[n++] = (*q >= 0x20 && *q < 0x7f) ? *q : '?';
        q++;
    }
    while (n > 0 && (shown[n - 1] == ' ' || shown[n - 1] == '?'))
        n--;
    shown[n] = 0;
    return gc_fail(GC_EXIT_INPUT, "%s:%zu:%zu: %s: '%s'%s", ps->name, ps->line,
                   (size_t)(at - ps->line_start) + 1, what, shown,
                   q < ps->end && n == 40 ? "..." : "");
}

struct csv_reader;
static void csv_note_mark(struct csv_reader *r, const char *q);

/* Moves past blank and comment lines; returns 0 at the end of the text.
 * Comments are shown to `mark` (when not NULL), which looks for the line
 * that describes an empty matrix. */
static int csv_next_row(struct csv_parser *ps, struct csv_reader *mark)
{
    for (;;) {
        const char *q = ps->p;
        while (csv_blank(*q, ps->delim) || *q == '\t')
            q++;
        if (*q == '#') {
            if (mark && q == ps->line_start)
                csv_note_mark(mark, q);
            while (q < ps->end && *q != '\n')
                q++;
        }
        if (q == ps->end) {
            ps->p = q;
            return 0;
        }
        if (*q != '\n')
            return 1;
        ps->p = q + 1;
        ps->line++;
        ps->line_start = ps->p;
    }
}

static void csv_skip_line(struct csv_parser *ps)
{
    const char *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
    ps->p = nl ? nl + 1 : ps->end;
    if (nl) {
        ps->line++;
        ps->line_start = ps->p;
    }
}

/* Parses one row into out[0..max) and returns the field count in *count;
 * stops with an error past `max` fields.  Leaves p after the row's LF. */
static int csv_parse_row(struct csv_parser *ps, void *out, size_t max, size_t expect,
                         size_t first_line, size_t *count)
{
    const char *q = ps->p;
    const char delim = ps->delim;
    size_t n = 0;
    for (;;) {
        while (csv_blank(*q, delim) || (delim == ' ' && *q == '\t'))
            q++;
        if (*q == delim && delim != ' ')
            return csv_error(ps, q, "empty field");
        if (csv_at_row_end(ps, q)) {
            if (n == 0 || delim == ' ')
                break;
            return csv_error(ps, q, "trailing delimiter");
        }
        if (*q == '"' || *q == '\'')
            return csv_bad_field(ps, q, "quoted fields are not supported");
        if (n == max) {
            char what[96];
            snprintf(what, sizeof what, "more than %zu fields, unlike line %zu", expect,
                     first_line);
            return csv_error(ps, q, what);
        }
        const char *after = ps->is_f64 ? dec_parse_f64(q, ps->end, ps->loc, (double *)out + n)
                                       : dec_parse_f32(q, ps->end, ps->loc, (float *)out + n);
        if (!after)
            return csv_bad_field(ps, q, "not a number");
        const char *field = q;
        q = after;
        while (csv_blank(*q, delim) || (delim == ' ' && *q == '\t'))
            q++;
        n++;
        if (*q == delim && delim != ' ') {
            q++;
            continue;
        }
        if (csv_at_row_end(ps, q))
            break;
        if (delim == ' ' && q != after)
            continue;
        return csv_bad_field(ps, field, "not a number");
    }
    if (n != expect && expect) {
        char what[96];
        snprintf(what, sizeof what, "%zu fields where line %zu has %zu", n, first_line, expect);
        return csv_error(ps, q, what);
    }
    ps->p = q;
    if (q < ps->end)
        csv_skip_line(ps);
    *count = n;
    return 0;
}

/* ---- text sources: plain or gzip, chunk by chunk ---- */

/* Above this, a regular .csv.gz file is inflated from a stream instead of
 * being read whole first. */
#define GZ_WHOLE_MAX ((size_t)1 << 30)
#define GZ_IN_CHUNK ((size_t)256 << 10)

struct text_source {
    struct gc_input *in;
    const char *name;
    int gz;
    /* gzip, regular files up to GZ_WHOLE_MAX: the whole compressed input */
    unsigned char *comp;
    size_t clen, cpos;
    struct libdeflate_decompressor *ld;
    /* gzip through zlib: a member too large for the text buffer, or input
     * from a pipe read GZ_IN_CHUNK at a time */
    z_stream zs;
    int z_ready, in_member;
    unsigned char *zin;
    uint64_t member_at;       /* offset of the current member, for messages */
    uint64_t consumed;        /* compressed bytes consumed before zin's data */
    int in_eof;
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
static int gz_check_header(struct text_source *s, const unsigned char *p, size_t n)
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
    }
    return 0;
}

static int source_open(struct text_source *s, struct gc_input *in, int gz)
{
    memset(s, 0, sizeof s[0]);
    s->in = in;
    s->name = in->name;
    s->gz = gz;
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

static void source_close(struct text_source *s)
{
    if (s->z_ready)
        inflateEnd(&s->zs);
    libdeflate_free_decompressor(s->ld);
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

/* The start of the next member: 0 with *more = 0 at the end of the data. */
static int gz_next_member(struct text_source *s, int *more)
{
    *more = 0;
    if (s->comp) {
        if (s->cpos == s->clen)
            return 0;
        s->member_at = s->cpos;
        if (s->clen - s->cpos < 3 || s->comp[s->cpos] != 0x1f || s->comp[s->cpos + 1] != 0x8b)
            return s->cpos == 0
                ? gc_fail(GC_EXIT_INPUT, "%s: not gzip data", s->name)
                : gc_fail(GC_EXIT_INPUT, "%s: %zu bytes of trailing garbage after the gzip data",
                          s->name, s->clen - s->cpos);
        *more = 1;
        return gz_check_header(s, s->comp + s->cpos, s->clen - s->cpos);
    }
    int status = gz_stream_want(s, 3);
    if (status)
        return status;
    if (s->zs.avail_in == 0)
        return s->consumed == 0 ? gc_fail(GC_EXIT_INPUT, "%s: empty input, not gzip data",
                                          s->name) : 0;
    s->member_at = s->consumed + (uint64_t)(s->zs.next_in - s->zin);
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
    return 0;
}

/* Fills dst with up to `cap` bytes of text; *got == 0 only at the end. */
static int source_fill(struct text_source *s, char *dst, size_t cap, size_t *got)
{
    *got = 0;
    if (!s->gz)
        return input_read(s->in, dst, cap, got);
    while (*got == 0) {
        int status, more;
        if (s->in_member) {
            if ((status = gz_inflate_zlib(s, dst, cap, got)))
                return status;
            continue;
        }
        if ((status = gz_next_member(s, &more)) || !more)
            return status;
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

/* ---- reading: text parsed as it arrives ---- */

/* Text is read in pieces of this size (more for longer lines); a gzip
 * member up to this size is inflated in one call. */
#define CSV_TEXT_CHUNK ((size_t)16 << 20)
#define CSV_GZ_WINDOW ((size_t)64 << 20)

/* What an empty matrix is written as, since CSV has no other way to tell
 * (5,0) from (0,5) or from no data at all. */
#define CSV_EMPTY_MARK "# empty matrix: shape ("

struct csv_reader {
    struct csv_parser ps;
    struct text_source src;
    const struct gc_read_opts *o;
    char *buf;
    size_t cap, len;
    int eof, header_pending, started;
    size_t esize, cols, first_line;
    int count_only;            /* info: count rows, keep none */
    unsigned char *data;       /* rows_cap x cols elements */
    size_t rows, rows_cap;
    int have_mark;             /* an empty-matrix mark was seen */
    size_t mark_rows, mark_cols;
};

/* "# empty matrix: shape (R, C)" at q: records R and C. */
static void csv_note_mark(struct csv_reader *r, const char *q)
{
    size_t len = sizeof CSV_EMPTY_MARK - 1;
    if (strncmp(q, CSV_EMPTY_MARK, len) != 0)
        return;
    unsigned long long rows, cols;
    char close;
    if (sscanf(q + len, "%llu, %llu%c", &rows, &cols, &close) == 3 && close == ')' &&
        rows <= GC_DIM_MAX && cols <= GC_DIM_MAX && (rows == 0 || cols == 0)) {
        r->have_mark = 1;
        r->mark_rows = (size_t)rows;
        r->mark_cols = (size_t)cols;
    }
}

/* Room for one more row; grows the rows geometrically, but never past the
 * memory available. */
static int csv_reserve_row(struct csv_reader *r)
{
    if (r->rows < r->rows_cap)
        return 0;
    size_t row_bytes = r->cols * r->esize, want = r->rows_cap ? r->rows_cap * 2 : 64, bytes;
    if (__builtin_mul_overflow(want, row_bytes, &bytes) || bytes > GC_DIM_MAX)
        return gc_fail(GC_EXIT_INPUT, "%s: too many rows", r->ps.name);
    size_t have = r->rows_cap * row_bytes;
    if (bytes >= GC_MEM_CHECK_MIN) {
        size_t avail = gc_host_memory_available();
        if (bytes - have > avail) {
            want = r->rows_cap + avail / row_bytes;
            if (want <= r->rows)
                return gc_fail(GC_EXIT_INPUT, "%s: more than %zu rows of %zu %s values: %.2f "
                               "GiB so far, and only %.2f GiB of memory is available",
                               r->ps.name, r->rows, r->cols, gc_dtypes[r->esize == 8 ? GC_F64 : GC_F32].name,
                               have / 1073741824.0, avail / 1073741824.0);
            bytes = want * row_bytes;
        }
    }
    unsigned char *nd = realloc(r->data, bytes);
    if (!nd)
        return gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes for %zu rows", r->ps.name,
                       bytes, want);
    r->data = nd;
    r->rows_cap = want;
    return 0;
}

/* The first data row fixes the column count. */
static int csv_first_row(struct csv_reader *r)
{
    struct csv_parser *ps = &r->ps;
    const char *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
    size_t line_len = (size_t)((nl ? nl : ps->end) - ps->p);
    size_t max = line_len / 2 + 1;
    r->first_line = ps->line;
    unsigned char *first = malloc(max * r->esize);
    if (!first)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", ps->name);
    size_t cols;
    int status = csv_parse_row(ps, first, max, 0, r->first_line, &cols);
    if (!status) {
        r->cols = cols;
        /* Only the row just read is kept; the next ones grow the buffer. */
        unsigned char *shrunk = realloc(first, cols * r->esize);
        r->data = shrunk ? shrunk : first;
        first = NULL;
        r->rows = 1;
        r->rows_cap = 1;
    }
    free(first);
    return status;
}

/* Parses the complete lines in buf[0, end) (buf[end] is a NUL). */
static int csv_parse_region(struct csv_reader *r, size_t end)
{
    struct csv_parser *ps = &r->ps;
    ps->p = ps->line_start = r->buf;
    ps->end = r->buf + end;
    if (!r->started) {
        r->started = 1;
        if (end >= 3 && memcmp(r->buf, "\xef\xbb\xbf", 3) == 0)
            ps->p = ps->line_start = r->buf + 3;
    }
    int status = 0;
    while (!status && csv_next_row(ps, r->rows == 0 ? r : NULL)) {
        if (r->header_pending) {
            r->header_pending = 0;
            csv_skip_line(ps);
            continue;
        }
        if (r->cols == 0) {
            status = csv_first_row(r);
            continue;
        }
        size_t n;
        if (r->count_only) {
            status = csv_parse_row(ps, r->data, r->cols, r->cols, r->first_line, &n);
            r->rows += !status;
            continue;
        }
        if ((status = csv_reserve_row(r)))
            break;
        status = csv_parse_row(ps, r->data + r->rows * r->cols * r->esize, r->cols, r->cols,
                               r->first_line, &n);
        r->rows += !status;
    }
    return status;
}

/* Reads text chunk by chunk, parsing each chunk's complete lines; the
 * partial line at a chunk's end moves to the front for the next.  Memory
 * is the chunk buffer (longer only for longer lines) and the rows. */
static int csv_run(struct csv_reader *r)
{
    int status = 0;
    while (!status) {
        if (!r->eof) {
            if (r->len == r->cap) {
                /* A line longer than the buffer: double it. */
                size_t ncap = r->cap * 2;
                if (ncap >= GC_MEM_CHECK_MIN && ncap > gc_host_memory_available())
                    return gc_fail(GC_EXIT_INPUT, "%s:%zu: a line longer than %.2f GiB",
                                   r->ps.name, r->ps.line, r->cap / 1073741824.0);
                char *nb = realloc(r->buf, ncap + 1);
                if (!nb)
                    return gc_fail(GC_EXIT_INPUT, "%s: out of memory", r->ps.name);
                r->buf = nb;
                r->cap = ncap;
            }
            size_t got;
            if ((status = source_fill(&r->src, r->buf + r->len, r->cap - r->len, &got)))
                break;
            if (got == 0)
                r->eof = 1;
            r->len += got;
        }
        size_t end = r->len;
        if (!r->eof) {
            const char *nl = memrchr(r->buf, '\n', r->len);
            if (!nl)
                continue;
            end = (size_t)(nl - r->buf) + 1;
        }
        char saved = r->buf[end];
        r->buf[end] = '\0';
        status = csv_parse_region(r, end);
        r->buf[end] = saved;
        if (r->eof)
            break;
        memmove(r->buf, r->buf + end, r->len - end);
        r->len -= end;
    }
    return status;
}

/* Reads the CSV text of `in` (gzip-compressed when `gz`) into m, or only
 * counts its rows and columns (`count_only`: m gets the shape, no data). */
static int csv_read_text(struct gc_input *in, int gz, const struct gc_read_opts *o,
                         int count_only, struct gc_tensor *t)
{
    struct csv_reader r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.count_only = count_only;
    r.header_pending = o && o->header;
    r.ps = (struct csv_parser){ in->name, NULL, NULL, NULL, 1, ',', 0, (locale_t)0 };
    if (o && o->delimiter)
        r.ps.delim = o->delimiter;
    if (!csv_delimiter_ok(r.ps.delim))
        return gc_fail(GC_EXIT_USAGE, "%s: delimiter '%c' cannot separate numbers", in->name,
                       r.ps.delim);
    /* float16 goes through double: one rounding there, one to half. */
    r.ps.is_f64 = o && (o->dtype == GC_F64 || o->dtype == GC_F16);
    r.esize = r.ps.is_f64 ? 8 : 4;
    r.cap = gz ? CSV_GZ_WINDOW : CSV_TEXT_CHUNK;
    r.ps.loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    r.buf = malloc(r.cap + 1);
    int status = !r.ps.loc ? gc_fail(GC_EXIT_INPUT, "%s: cannot create the C locale", in->name)
               : !r.buf ? gc_fail(GC_EXIT_INPUT, "%s: out of memory", in->name)
               : source_open(&r.src, in, gz);
    if (!status)
        status = csv_run(&r);
    if (!status && r.cols == 0) {
        if (r.have_mark)
            r.rows = r.mark_rows, r.cols = r.mark_cols;
        else
            status = gc_fail(GC_EXIT_INPUT, r.header_pending || !(o && o->header)
                             ? "%s: no data" : "%s: no data after the header line", in->name);
        free(r.data);
        r.data = NULL;
    }
    struct gc_tensor res;
    memset(&res, 0, sizeof res);
    gc_tensor_set_2d(&res, r.rows, r.cols);
    res.dtype = r.ps.is_f64 ? GC_F64 : GC_F32;
    if (!status && !count_only && r.data) {
        const struct gc_alloc *alloc = o ? o->alloc : NULL;
        size_t bytes = r.rows * r.cols * r.esize;
        if (!alloc || alloc == &gc_alloc_malloc) {
            unsigned char *shrunk = realloc(r.data, bytes ? bytes : 1);
            res.data = shrunk ? shrunk : r.data;
            res.alloc = &gc_alloc_malloc;
        } else if (gc_tensor_alloc(&res, alloc) == 0) {
            memcpy(res.data, r.data, bytes);
            free(r.data);
        } else {
            status = gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes", in->name, bytes);
        }
        r.data = NULL;
    }
    free(r.data);
    source_close(&r.src);
    free(r.buf);
    if (r.ps.loc)
        freelocale(r.ps.loc);
    if (!status)
        *t = res;
    return status;
}

int csv_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t)
{
    return csv_read_text(in, 0, o, 0, t);
}

int csv_gz_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_tensor *t)
{
    return csv_read_text(in, 1, o, 0, t);
}

/* Text has no header to read the shape from: info parses it all, keeping
 * one row at a time. */
static int csv_info_text(struct gc_input *in, int gz, const struct gc_read_opts *o,
                         struct gc_info *info)
{
    struct gc_tensor m;
    int status = csv_read_text(in, gz, o, 1, &m);
    if (status)
        return status;
    memset(info, 0, sizeof *info);
    info->format = gz ? GC_FMT_CSV_GZ : GC_FMT_CSV;
    info->dtype = m.dtype;
    info->ndim = 2;
    info->shape[0] = m.shape[0];
    info->shape[1] = m.shape[1];
    info->file_bytes = in->is_regular ? in->size : -1;
    return 0;
}

int csv_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    return csv_info_text(in, 0, o, info);
}

int csv_gz_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    return csv_info_text(in, 1, o, info);
}

/* ---- writing ---- */

struct csv_sink {
    FILE *f;
    const char *name;
    char *buf;
    size_t len, cap;
    struct libdeflate_compressor *gz;   /* NULL: plain text */
    unsigned char *zbuf;
    size_t zcap;
};

static int csv_sink_flush(struct csv_sink *s)
{
    int status = 0;
    if (s->len == 0)
        return 0;
    if (s->gz) {
        size_t z = libdeflate_gzip_compress(s->gz, s->buf, s->len, s->zbuf, s->zcap);
        status = z ? write_all(s->f, s->name, s->zbuf, z)
                   : gc_fail(GC_EXIT_OUTPUT, "%s: gzip compression failed", s->name);
    } else {
        status = write_all(s->f, s->name, s->buf, s->len);
    }
    s->len = 0;
    return status;
}

static size_t csv_format_int(const struct gc_tensor *m, size_t i, char *o)
{
    const void *d = m->data;
    switch (m->dtype) {
    case GC_I8:  return (size_t)sprintf(o, "%d", ((const int8_t *)d)[i]);
    case GC_I16: return (size_t)sprintf(o, "%d", ((const int16_t *)d)[i]);
    case GC_I32: return (size_t)sprintf(o, "%" PRId32, ((const int32_t *)d)[i]);
    case GC_I64: return (size_t)sprintf(o, "%" PRId64, ((const int64_t *)d)[i]);
    case GC_U8:  return (size_t)sprintf(o, "%u", ((const uint8_t *)d)[i]);
    case GC_U16: return (size_t)sprintf(o, "%u", ((const uint16_t *)d)[i]);
    case GC_U32: return (size_t)sprintf(o, "%" PRIu32, ((const uint32_t *)d)[i]);
    case GC_U64: return (size_t)sprintf(o, "%" PRIu64, ((const uint64_t *)d)[i]);
    case GC_BOOL: return (size_t)sprintf(o, "%d", ((const uint8_t *)d)[i] != 0);
    default: return 0;
    }
}

/* A matrix one row a line; a vector one value a line, as numpy.savetxt
 * writes it (it reads back as a column). */
static int csv_write_matrix(struct csv_sink *s, const struct gc_tensor *m,
                            const struct gc_write_opts *o)
{
    char delim = o && o->delimiter ? o->delimiter : ',';
    int precision = o && o->precision > 0 ? o->precision : 0;
    if (m->ndim < 1 || m->ndim > 2) {
        char shape[64];
        gc_shape_text(m->ndim, m->shape, shape, sizeof shape);
        return gc_fail(GC_EXIT_USAGE, "%s: CSV holds a matrix or a vector; this is %s (write "
                       ".npy or raw for more dimensions)", s->name, shape);
    }
    size_t rows = m->shape[0], cols = m->ndim == 2 ? m->shape[1] : 1;
    int fortran = gc_tensor_column_major(m);
    if (rows == 0 || cols == 0) {
        s->len = (size_t)snprintf(s->buf, s->cap, CSV_EMPTY_MARK "%zu, %zu)\n", rows, cols);
        int status = csv_sink_flush(s);
        if (!status && ferror(s->f))
            status = gc_fail(GC_EXIT_OUTPUT, "%s: write error", s->name);
        return status;
    }
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!loc)
        return gc_fail(GC_EXIT_OUTPUT, "%s: cannot create the C locale", s->name);
    int status = 0;
    for (size_t r = 0; r < rows && !status; r++) {
        for (size_t c = 0; c < cols; c++) {
            if (s->cap - s->len < DEC_MAX_TEXT + 2 && (status = csv_sink_flush(s)))
                break;
            size_t i = fortran ? c * rows + r : r * cols + c;
            char *out = s->buf + s->len;
            switch (m->dtype) {
            case GC_F32:
                s->len += dec_format_f32(((const float *)m->data)[i], precision, loc, out);
                break;
            case GC_F64:
                s->len += dec_format_f64(((const double *)m->data)[i], precision, loc, out);
                break;
            case GC_F16:
                s->len += dec_format_f32(gc_half_to_float(((const uint16_t *)m->data)[i]),
                                         precision, loc, out);
                break;
            case GC_BF16:
                s->len += dec_format_f32(gc_bf16_to_float(((const uint16_t *)m->data)[i]),
                                         precision, loc, out);
                break;
            default:
                s->len += csv_format_int(m, i, out);
                break;
            }
            s->buf[s->len++] = c + 1 < cols ? delim : '\n';
        }
    }
    if (!status)
        status = csv_sink_flush(s);
    freelocale(loc);
    if (!status && ferror(s->f))
        status = gc_fail(GC_EXIT_OUTPUT, "%s: write error", s->name);
    return status;
}

int csv_write(FILE *f, const char *name, const struct gc_tensor *m,
              const struct gc_write_opts *o)
{
    struct csv_sink s = { f, name, malloc(CSV_OUT_CHUNK), 0, CSV_OUT_CHUNK, NULL, NULL, 0 };
    if (!s.buf)
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", name);
    int status = csv_write_matrix(&s, m, o);
    free(s.buf);
    return status;
}

int csv_gz_write(FILE *f, const char *name, const struct gc_tensor *m,
                 const struct gc_write_opts *o)
{
    int level = o && o->level >= 0 ? o->level : CSV_GZ_LEVEL;
    if (level > 12)
        level = 12;
    struct csv_sink s = { f, name, malloc(CSV_GZ_CHUNK), 0, CSV_GZ_CHUNK,
                          libdeflate_alloc_compressor(level), NULL, 0 };
    int status = 0;
    if (s.buf && s.gz) {
        s.zcap = libdeflate_gzip_compress_bound(s.gz, CSV_GZ_CHUNK);
        s.zbuf = malloc(s.zcap);
    }
    if (!s.buf || !s.gz || !s.zbuf)
        status = gc_fail(GC_EXIT_INPUT, "%s: out of host memory", name);
    else
        status = csv_write_matrix(&s, m, o);
    free(s.zbuf);
    libdeflate_free_compressor(s.gz);
    free(s.buf);
    return status;
}
