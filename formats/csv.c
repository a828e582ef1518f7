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
 * Writing gives the shortest text that reads back to the identical value
 * (float16 is written as the float32 it widens to, which reads back
 * exactly), or --precision significant digits; integers as integers.
 *
 * gzip: input is inflated whole with libdeflate, member after member, so a
 * multi-member file reads as one; a truncated stream, a bad CRC or length,
 * and bytes after the last member are errors (zlib names the fault).
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

#include "../src/error.h"
#include "decimal.h"

#define CSV_GZ_LEVEL 1
#define CSV_GZ_CHUNK ((size_t)8 << 20)
#define CSV_OUT_CHUNK ((size_t)1 << 20)

static int csv_is_text_byte(unsigned char c)
{
    return c >= 0x20 ? c != 0x7f : c == '\t' || c == '\n' || c == '\r' || c == '\f';
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
    return digits ? PROBE_PLAUSIBLE : PROBE_NO;
}

int csv_gz_probe(const unsigned char *head, size_t n)
{
    return n >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8 ? PROBE_MAGIC
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

/* Moves past blank and comment lines; returns 0 at the end of the text. */
static int csv_next_row(struct csv_parser *ps)
{
    for (;;) {
        const char *q = ps->p;
        while (csv_blank(*q, ps->delim) || *q == '\t')
            q++;
        if (*q == '#')
            while (q < ps->end && *q != '\n')
                q++;
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

static size_t csv_count_lines(const char *p, const char *end)
{
    size_t n = 1;
    while ((p = memchr(p, '\n', (size_t)(end - p)))) {
        n++;
        p++;
    }
    return n;
}

/* Parses NUL-terminated text[0..len) into a matrix. */
static int csv_parse_text(const char *name, const char *text, size_t len,
                          const struct gc_read_opts *o, struct gc_matrix *m)
{
    struct csv_parser ps = { name, text, text + len, text, 1, ',', 0, (locale_t)0 };
    int status;
    if (o && o->delimiter)
        ps.delim = o->delimiter;
    if (strchr("0123456789.+-#\"'\r\n", ps.delim) ||
        ((ps.delim | 0x20) >= 'a' && (ps.delim | 0x20) <= 'z'))
        return gc_fail(GC_EXIT_USAGE, "%s: delimiter '%c' cannot separate numbers", name,
                       ps.delim);
    /* float16 goes through double: one rounding there, one to half. */
    ps.is_f64 = o && (o->dtype == GC_F64 || o->dtype == GC_F16);
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        ps.p = ps.line_start = text + 3;
    if (!csv_next_row(&ps))
        return gc_fail(GC_EXIT_INPUT, "%s: no data", name);
    if (o && o->header) {
        csv_skip_line(&ps);
        if (!csv_next_row(&ps))
            return gc_fail(GC_EXIT_INPUT, "%s: no data after the header line", name);
    }
    size_t esize = ps.is_f64 ? 8 : 4;
    const char *nl = memchr(ps.p, '\n', (size_t)(ps.end - ps.p));
    size_t line_len = (size_t)((nl ? nl : ps.end) - ps.p);
    size_t first_max = line_len / 2 + 1, cols, first_line = ps.line;
    void *first = malloc(first_max * esize);
    if (!first)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", name);
    ps.loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!ps.loc) {
        free(first);
        return gc_fail(GC_EXIT_INPUT, "%s: cannot create the C locale", name);
    }
    status = csv_parse_row(&ps, first, first_max, 0, first_line, &cols);
    /* Every further row takes at least 2 bytes a field, so the rows left
     * are bounded both by the lines and by the bytes left. */
    size_t rows_max = 1, left = (size_t)(ps.end - ps.p);
    if (!status) {
        size_t by_lines = csv_count_lines(ps.p, ps.end), by_bytes = left / (2 * cols) + 1;
        rows_max += by_lines < by_bytes ? by_lines : by_bytes;
    }
    struct gc_matrix r = { rows_max, cols, ps.is_f64 ? GC_F64 : GC_F32, 0, NULL, NULL };
    size_t bytes;
    if (!status && !gc_matrix_bytes(rows_max, cols, r.dtype, &bytes))
        status = gc_fail(GC_EXIT_INPUT, "%s: too large", name);
    if (!status && gc_matrix_alloc(&r, o ? o->alloc : NULL) != 0)
        status = gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes", name, bytes);
    if (!status) {
        memcpy(r.data, first, cols * esize);
        size_t rows = 1, n;
        unsigned char *dst = (unsigned char *)r.data + cols * esize;
        while (!status && csv_next_row(&ps)) {
            if (rows == rows_max) {
                status = csv_error(&ps, ps.p, "more rows than the text can hold");
                break;
            }
            status = csv_parse_row(&ps, dst, cols, cols, first_line, &n);
            dst += cols * esize;
            rows++;
        }
        r.rows = rows;
        if (status)
            gc_matrix_free(&r);
    }
    freelocale(ps.loc);
    free(first);
    if (status)
        return status;
    *m = r;
    return 0;
}

int csv_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_matrix *m)
{
    unsigned char *text;
    size_t len;
    int status = input_slurp(in, &text, &len);
    if (status)
        return status;
    status = csv_parse_text(in->name, (const char *)text, len, o, m);
    free(text);
    return status;
}

static void csv_fill_info(const struct gc_matrix *m, enum gc_format_id fmt,
                          const struct gc_input *in, struct gc_info *info)
{
    memset(info, 0, sizeof *info);
    info->format = fmt;
    info->dtype = m->dtype;
    info->rows = m->rows;
    info->cols = m->cols;
    info->file_bytes = in->is_regular ? in->size : -1;
}

/* Text has no header to read the shape from: info parses it all. */
int csv_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    struct gc_matrix m;
    struct gc_read_opts plain = o ? *o : (struct gc_read_opts){ .dtype = -1 };
    plain.alloc = NULL;
    int status = csv_read(in, &plain, &m);
    if (status)
        return status;
    csv_fill_info(&m, GC_FMT_CSV, in, info);
    gc_matrix_free(&m);
    return 0;
}

/* ---- gzip ---- */

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
            why = zs.msg && strstr(zs.msg, "data check") ? "bad CRC in gzip data"
                : zs.msg && strstr(zs.msg, "length check") ? "bad length in gzip trailer"
                : "corrupt gzip data";
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

/* Inflates every member of comp[0..clen) into one NUL-terminated buffer. */
static int gz_inflate(const char *name, const unsigned char *comp, size_t clen,
                      unsigned char **out, size_t *out_len)
{
    if (clen < 2 || comp[0] != 0x1f || comp[1] != 0x8b)
        return gc_fail(GC_EXIT_INPUT, "%s: not gzip data", name);
    /* The last member's trailer holds its size mod 2^32: right for the
     * usual single member; otherwise the buffer grows as it fills. */
    size_t isize = 0;
    if (clen >= 4)
        isize = (size_t)comp[clen - 4] | (size_t)comp[clen - 3] << 8 |
                (size_t)comp[clen - 2] << 16 | (size_t)comp[clen - 1] << 24;
    size_t cap = clen < SIZE_MAX / 4 ? clen * 4 : clen;
    if (isize > cap && clen < SIZE_MAX / 1100 && isize <= clen * 1100)
        cap = isize;
    cap += 1;
    unsigned char *buf = malloc(cap);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t in_pos = 0, n = 0;
    int status = 0;
    if (!buf || !d)
        status = gc_fail(GC_EXIT_INPUT, "%s: out of memory", name);
    while (!status && in_pos < clen) {
        if (clen - in_pos < 2 || comp[in_pos] != 0x1f || comp[in_pos + 1] != 0x8b) {
            status = gc_fail(GC_EXIT_INPUT, "%s: %zu bytes of trailing garbage after the gzip "
                             "data", name, clen - in_pos);
            break;
        }
        size_t used, got;
        enum libdeflate_result r = libdeflate_gzip_decompress_ex(
            d, comp + in_pos, clen - in_pos, buf + n, cap - 1 - n, &used, &got);
        if (r == LIBDEFLATE_SUCCESS) {
            in_pos += used;
            n += got;
        } else if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
            unsigned char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                status = gc_fail(GC_EXIT_INPUT, "%s: cannot allocate %zu bytes to inflate",
                                 name, cap);
                break;
            }
            buf = nb;
            cap *= 2;
        } else {
            status = gc_fail(GC_EXIT_INPUT, "%s: %s (member at byte %zu)", name,
                             gz_diagnose(comp + in_pos, clen - in_pos), in_pos);
        }
    }
    libdeflate_free_decompressor(d);
    if (status) {
        free(buf);
        return status;
    }
    buf[n] = 0;
    *out = buf;
    *out_len = n;
    return 0;
}

static int csv_gz_text(struct gc_input *in, unsigned char **text, size_t *len)
{
    unsigned char *comp;
    size_t clen;
    int status = input_slurp(in, &comp, &clen);
    if (status)
        return status;
    status = gz_inflate(in->name, comp, clen, text, len);
    free(comp);
    return status;
}

int csv_gz_read(struct gc_input *in, const struct gc_read_opts *o, struct gc_matrix *m)
{
    unsigned char *text = NULL;
    size_t len = 0;
    int status = csv_gz_text(in, &text, &len);
    if (status)
        return status;
    status = csv_parse_text(in->name, (const char *)text, len, o, m);
    free(text);
    return status;
}

int csv_gz_info(struct gc_input *in, const struct gc_read_opts *o, struct gc_info *info)
{
    struct gc_matrix m;
    struct gc_read_opts plain = o ? *o : (struct gc_read_opts){ .dtype = -1 };
    plain.alloc = NULL;
    int status = csv_gz_read(in, &plain, &m);
    if (status)
        return status;
    csv_fill_info(&m, GC_FMT_CSV_GZ, in, info);
    gc_matrix_free(&m);
    return 0;
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

static size_t csv_format_int(const struct gc_matrix *m, size_t i, char *o)
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
    default: return 0;
    }
}

static int csv_write_matrix(struct csv_sink *s, const struct gc_matrix *m,
                            const struct gc_write_opts *o)
{
    char delim = o && o->delimiter ? o->delimiter : ',';
    int precision = o && o->precision > 0 ? o->precision : 0;
    int fortran = m->fortran_order && m->rows > 1 && m->cols > 1;
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!loc)
        return gc_fail(GC_EXIT_OUTPUT, "%s: cannot create the C locale", s->name);
    int status = 0;
    for (size_t r = 0; r < m->rows && !status; r++) {
        for (size_t c = 0; c < m->cols; c++) {
            if (s->cap - s->len < DEC_MAX_TEXT + 2 && (status = csv_sink_flush(s)))
                break;
            size_t i = fortran ? c * m->rows + r : r * m->cols + c;
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
            default:
                s->len += csv_format_int(m, i, out);
                break;
            }
            s->buf[s->len++] = c + 1 < m->cols ? delim : '\n';
        }
    }
    if (!status)
        status = csv_sink_flush(s);
    freelocale(loc);
    if (!status && ferror(s->f))
        status = gc_fail(GC_EXIT_OUTPUT, "%s: write error", s->name);
    return status;
}

int csv_write(FILE *f, const char *name, const struct gc_matrix *m,
              const struct gc_write_opts *o)
{
    struct csv_sink s = { f, name, malloc(CSV_OUT_CHUNK), 0, CSV_OUT_CHUNK, NULL, NULL, 0 };
    if (!s.buf)
        return gc_fail(GC_EXIT_OUTPUT, "%s: out of memory", name);
    int status = csv_write_matrix(&s, m, o);
    free(s.buf);
    return status;
}

int csv_gz_write(FILE *f, const char *name, const struct gc_matrix *m,
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
        status = gc_fail(GC_EXIT_OUTPUT, "%s: out of memory", name);
    else
        status = csv_write_matrix(&s, m, o);
    free(s.zbuf);
    libdeflate_free_compressor(s.gz);
    free(s.buf);
    return status;
}
