/* CSV and gzip CSV: numbers in text, one matrix row per line.
 *
 * Reading is as strict as numpy.loadtxt:
 *   - fields are separated by the delimiter; with ' ' any run of spaces and
 *     tabs separates them.  With none given: a comma, or blanks where the
 *     first row has no comma (numpy.savetxt's default).  Spaces and tabs
 *     around a field are ignored, and so is a CR before the LF;
 *   - blank lines and '#' comments (whole lines or after the data) are
 *     skipped; --header skips the first line that is neither;
 *   - a field is a decimal number ([+-]digits[.digits][e[+-]digits]) or
 *     nan, inf, -inf, infinity in any case; a leading UTF-8 BOM is skipped;
 *   - an empty or quoted field, a trailing delimiter, anything that is not
 *     a number and a row with another number of fields than the first are
 *     errors reported as FILE:LINE:COLUMN (columns count bytes, from 1).
 * The read options' dtype says what the numbers become, as numpy.loadtxt's
 * dtype does (float64 when none is given): floats are parsed correctly
 * rounded, whatever the process's locale (float16 and bfloat16 through
 * double, then rounded once); an integer dtype takes integer literals
 * ([+-]digits) only, exactly, and refuses one that does not fit (bool: any
 * int64, nonzero is true).
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
 * gzip: text is read through formats/text_source.c.  Output is a series
 * of gzip members of CSV_GZ_CHUNK bytes of text each, at
 * CSV_GZ_LEVEL unless --level (0-12, libdeflate's scale) says otherwise:
 * level 1 is the fastest that compresses, and on matrix text its files are
 * only a little larger than level 6's, which is much slower. */
#include "formats/format_impl.h"
#include "formats/payload.h"

#include <inttypes.h>
#include <libdeflate.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "formats/decimal.h"
#include "formats/text_source.h"

#define CSV_GZ_LEVEL 1

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
    return n >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8 ? PROBE_SHORT_MAGIC
                                                                          : PROBE_NO;
}

/* ---- parsing ---- */

/* A fault found while parsing, kept until the text before it is known to
 * be good, so that chunks parsed side by side report the first fault in
 * the file, at its absolute line. */
struct csv_fault {
    size_t line, column;        /* line counts from the parser's start */
    char what[160];
};

struct csv_parser {
    const char *name;
    const char *p, *end;        /* text ends at a '\n' or at a readable NUL */
    const char *line_start;
    size_t line;
    char delim;                 /* ' ': any run of blanks */
    enum gc_dtype dtype;        /* what each field is parsed into */
    uint64_t pos_max, neg_max;  /* integer dtypes: the largest magnitudes */
    locale_t loc;
    struct csv_fault *fault;
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
    ps->fault->line = ps->line;
    ps->fault->column = (size_t)(at - ps->line_start) + 1;
    snprintf(ps->fault->what, sizeof ps->fault->what, "%s", what);
    return GC_EXIT_INPUT;
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
    char text[sizeof ps->fault->what];
    snprintf(text, sizeof text, "%s: '%s'%s", what, shown, q < ps->end && n == 40 ? "..." : "");
    return csv_error(ps, at, text);
}

/* Reports a fault of a parser whose line 1 is the text's line `first`. */
static int csv_report(const char *name, const struct csv_fault *f, size_t first)
{
    return gc_fail(GC_EXIT_INPUT, "%s:%zu:%zu: %s", name, first + f->line - 1, f->column,
                   f->what);
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
        if (q == ps->end)
            return 0;
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

/* Why a field is refused. */
enum csv_refusal { CSV_NOT_A_NUMBER, CSV_NOT_AN_INTEGER, CSV_MINUS_SIGN, CSV_OUT_OF_RANGE };

/* An integer literal, [+-]digits, ends where a field does. */
static int csv_field_ends(const struct csv_parser *ps, const char *q)
{
    return q == ps->end || *q == '\n' || *q == '#' || *q == ps->delim || *q == ' ' ||
           *q == '\t' || *q == '\r';
}

/* Parses an integer field into element i of out, exactly, as NumPy's
 * loadtxt does for an integer dtype: the text must be an integer literal
 * that fits (bool: one that fits int64; nonzero is true).  Returns the
 * end of the field, or NULL with *why saying what is wrong. */
static const char *csv_parse_int(const struct csv_parser *ps, const char *q, void *out,
                                 size_t i, enum csv_refusal *why)
{
    const char *p = q;
    int neg = *p == '-';
    p += neg || *p == '+';
    const char *digits = p;
    while (*p == '0')
        p++;
    const char *lead = p;
    uint64_t v = 0;
    /* Nineteen digits cannot overflow 64 bits; a twentieth may. */
    while ((unsigned)(*p - '0') < 10 && p - lead < 19)
        v = v * 10 + (unsigned)(*p++ - '0');
    int over = 0;
    if ((unsigned)(*p - '0') < 10) {
        over = __builtin_mul_overflow(v, 10, &v) ||
               __builtin_add_overflow(v, (unsigned)(*p++ - '0'), &v);
        while ((unsigned)(*p - '0') < 10) {
            p++;
            over = 1;
        }
    }
    if (p == digits || !csv_field_ends(ps, p)) {
        *why = CSV_NOT_AN_INTEGER;
        return NULL;
    }
    if (neg && ps->neg_max == 0) {
        *why = CSV_MINUS_SIGN;
        return NULL;
    }
    if (over || v > (neg ? ps->neg_max : ps->pos_max)) {
        *why = CSV_OUT_OF_RANGE;
        return NULL;
    }
    uint64_t bits = neg ? 0 - v : v;
    switch (ps->dtype) {
    case GC_I8: case GC_U8: ((uint8_t *)out)[i] = (uint8_t)bits; break;
    case GC_I16: case GC_U16: ((uint16_t *)out)[i] = (uint16_t)bits; break;
    case GC_I32: case GC_U32: ((uint32_t *)out)[i] = (uint32_t)bits; break;
    case GC_BOOL: ((uint8_t *)out)[i] = v != 0; break;
    default: ((uint64_t *)out)[i] = bits; break;
    }
    return p;
}

/* Parses the field at q into element i of out: floats correctly rounded
 * (half types through double, rounded once more), integers exactly.
 * Returns the end of the number, or NULL with *why. */
static const char *csv_parse_field(const struct csv_parser *ps, const char *q, void *out,
                                   size_t i, enum csv_refusal *why)
{
    const char *after;
    double v;
    *why = CSV_NOT_A_NUMBER;
    switch (ps->dtype) {
    case GC_F64: return dec_parse_f64(q, ps->end, ps->loc, (double *)out + i);
    case GC_F32: return dec_parse_f32(q, ps->end, ps->loc, (float *)out + i);
    case GC_F16:
    case GC_BF16:
        if ((after = dec_parse_f64(q, ps->end, ps->loc, &v)))
            ((uint16_t *)out)[i] = ps->dtype == GC_F16 ? gc_double_to_half(v)
                                                       : gc_double_to_bf16(v);
        return after;
    default: return csv_parse_int(ps, q, out, i, why);
    }
}

/* The integer range of the parser's dtype, for csv_parse_int. */
static void csv_set_dtype(struct csv_parser *ps, enum gc_dtype dtype)
{
    ps->dtype = dtype;
    size_t bits = 8 * gc_dtypes[dtype].size;
    if (dtype == GC_BOOL)
        bits = 64;
    int is_signed = gc_dtypes[dtype].kind != GC_KIND_UINT;
    ps->pos_max = is_signed ? (UINT64_MAX >> (65 - bits)) : (UINT64_MAX >> (64 - bits));
    ps->neg_max = is_signed ? ps->pos_max + 1 : 0;
}

/* Reports a field that csv_parse_field refused, in words for the dtype. */
static int csv_bad_number(const struct csv_parser *ps, const char *field, enum csv_refusal why)
{
    if (gc_dtypes[ps->dtype].kind == GC_KIND_FLOAT)
        return csv_bad_field(ps, field, "not a number");
    char what[96], range[48];
    const char *name = gc_dtypes[ps->dtype].name;
    snprintf(range, sizeof range, "%" PRId64 " to %" PRIu64,
             ps->neg_max ? (int64_t)(0 - ps->neg_max) : 0, ps->pos_max);
    if (why == CSV_OUT_OF_RANGE)
        snprintf(what, sizeof what, "out of range for %s (%s)", name, range);
    else if (why == CSV_MINUS_SIGN)
        snprintf(what, sizeof what, "a minus sign, which %s (%s) does not take", name, range);
    else
        snprintf(what, sizeof what, "not an integer, which %s text must be", name);
    return csv_bad_field(ps, field, what);
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
        enum csv_refusal why;
        const char *after = csv_parse_field(ps, q, out, n, &why);
        if (!after)
            return csv_bad_number(ps, q, why);
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
        return csv_bad_number(ps, field, CSV_NOT_A_NUMBER);
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

/* ---- reading: text parsed as it arrives, on every core ---- */

/* Text is read in windows of this size (more for longer lines); a gzip
 * member up to the window's size is inflated in one call. */
#define CSV_TEXT_CHUNK ((size_t)16 << 20)
#define CSV_GZ_WINDOW ((size_t)64 << 20)
/* The least text a thread is given to parse. */
#define CSV_PARSE_GRAIN ((size_t)256 << 10)
#define CSV_MAX_CHUNKS 256

/* What an empty matrix is written as, since CSV has no other way to tell
 * (5,0) from (0,5) or from no data at all. */
#define CSV_EMPTY_MARK "# empty matrix: shape ("

/* One window of text: [0, len) read, cap + 1 bytes allocated. */
struct csv_window {
    char *buf;
    size_t cap, len;
    int eof;                   /* the source ended in this window */
    int status;                /* of filling it */
    struct gc_capture msg;     /* what filling it said */
};

struct csv_reader {
    struct csv_parser ps;
    struct csv_fault fault;
    struct text_source src;
    const struct gc_read_opts *o;
    int threads;
    struct csv_window win[2];  /* parsed, and filled meanwhile */
    int header_pending, started;
    int detect;                /* no delimiter given: ',' or blanks, by the first row */
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

/* The shape an empty-matrix mark gives, if NumPy could make an array of
 * it in the dtype read: the product of its nonzero dimensions times the
 * element size within 2^63 - 1 bytes, as for a .npy header. */
static int csv_take_mark(struct csv_reader *r)
{
    struct gc_tensor shape = { .dtype = r->ps.dtype };
    size_t bytes;
    gc_tensor_set_2d(&shape, r->mark_rows, r->mark_cols);
    if (!gc_tensor_bytes(&shape, &bytes))
        return gc_fail(GC_EXIT_INPUT, "%s: the empty matrix's shape (%zu, %zu) is too large "
                       "for %s elements (NumPy allows up to 2^63 - 1 bytes, counting the "
                       "dimensions that are not zero)", r->ps.name, r->mark_rows,
                       r->mark_cols, gc_dtypes[r->ps.dtype].name);
    r->rows = r->mark_rows;
    r->cols = r->mark_cols;
    return 0;
}

/* Room for `need` rows in all; grows geometrically, but never past the
 * memory available. */
static int csv_reserve_rows(struct csv_reader *r, size_t need)
{
    if (need <= r->rows_cap)
        return 0;
    size_t row_bytes = r->cols * r->esize, want = r->rows_cap * 2, bytes;
    if (want < need)
        want = need;
    if (__builtin_mul_overflow(want, row_bytes, &bytes) || bytes > GC_DIM_MAX)
        return gc_fail(GC_EXIT_INPUT, "%s: too many rows", r->ps.name);
    size_t have = r->rows_cap * row_bytes;
    if (bytes >= GC_MEM_CHECK_MIN) {
        size_t avail = gc_host_memory_available();
        if (bytes - have > avail) {
            want = r->rows_cap + avail / row_bytes;
            if (want < need)
                return gc_fail(GC_EXIT_INPUT, "%s: more than %zu rows of %zu %s values: %.2f "
                               "GiB so far, and only %.2f GiB of memory is available",
                               r->ps.name, r->rows, r->cols, gc_dtypes[r->ps.dtype].name,
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
    if (r->detect) {
        /* numpy.savetxt and loadtxt separate by blanks unless told: a first
         * row without a comma (before any comment) is read that way. */
        const char *hash = memchr(ps->p, '#', line_len);
        size_t data_len = (size_t)((hash ? hash : ps->p + line_len) - ps->p);
        if (!memchr(ps->p, ',', data_len))
            ps->delim = ' ';
    }
    unsigned char *first = malloc(max * r->esize);
    if (!first)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", ps->name);
    size_t cols;
    int status = csv_parse_row(ps, first, max, 0, r->first_line, &cols);
    if (status) {
        status = csv_report(ps->name, &r->fault, 1);
    } else {
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

/* A run of whole lines parsed by one thread.  Its rows go to `out`, room
 * for lines + 1 rows; line numbers count from the chunk's first line. */
struct csv_chunk {
    const char *begin, *end;
    size_t lines, rows;
    unsigned char *out;
    int status;
    struct csv_fault fault;
};

struct csv_pass {
    struct csv_reader *r;
    struct csv_chunk *chunks;
};

static void csv_count_lines(void *arg, size_t first, size_t last)
{
    struct csv_pass *pass = arg;
    for (size_t i = first; i < last; i++) {
        struct csv_chunk *c = &pass->chunks[i];
        size_t n = 0;
        for (const char *q = c->begin; (q = memchr(q, '\n', (size_t)(c->end - q))); q++)
            n++;
        c->lines = n;
    }
}

static void csv_parse_chunks(void *arg, size_t first, size_t last)
{
    struct csv_pass *pass = arg;
    const struct csv_reader *r = pass->r;
    size_t row_bytes = r->cols * r->esize;
    for (size_t i = first; i < last; i++) {
        struct csv_chunk *c = &pass->chunks[i];
        struct csv_parser ps = r->ps;
        ps.p = ps.line_start = c->begin;
        ps.end = c->end;
        ps.line = 1;
        ps.fault = &c->fault;
        size_t n;
        while (!c->status && csv_next_row(&ps, NULL)) {
            c->status = csv_parse_row(&ps, c->out + (r->count_only ? 0 : c->rows * row_bytes),
                                      r->cols, r->cols, r->first_line, &n);
            c->rows += !c->status;
        }
    }
}

/* Cuts [begin, end) into up to `most` runs of whole lines. */
static size_t csv_cut(const char *begin, const char *end, size_t most, struct csv_chunk *chunks)
{
    size_t bytes = (size_t)(end - begin), n = bytes / CSV_PARSE_GRAIN + 1, made = 0;
    if (n > most)
        n = most;
    const char *at = begin;
    for (size_t i = 1; i <= n && at < end; i++) {
        const char *cut = i == n ? end : begin + bytes / n * i;
        if (cut < at)
            cut = at;
        const char *nl = cut < end ? memchr(cut, '\n', (size_t)(end - cut)) : NULL;
        cut = i == n || !nl ? end : nl + 1;
        chunks[made++] = (struct csv_chunk){ .begin = at, .end = cut };
        at = cut;
    }
    return made;
}

/* Parses the whole lines [begin, end) on the reader's threads: the lines
 * are counted per chunk, each chunk's rows go to room for its lines, and
 * the rows are then closed up in order.  The first fault in the text is
 * the one reported, numbered from `line`, the line at `begin`. */
static int csv_parse_lines(struct csv_reader *r, const char *begin, const char *end)
{
    struct csv_chunk chunks[CSV_MAX_CHUNKS];
    struct csv_pass pass = { r, chunks };
    size_t n = csv_cut(begin, end, (size_t)r->threads, chunks);
    if (n == 0)
        return 0;
    parallel_for(r->threads, n, 1, csv_count_lines, &pass);
    size_t row_bytes = r->cols * r->esize, room = 0;
    for (size_t i = 0; i < n; i++)
        room += chunks[i].lines + 1;
    unsigned char *scratch = NULL;
    int status = 0;
    if (r->count_only)
        status = (scratch = malloc(n * row_bytes)) ? 0
               : gc_fail(GC_EXIT_INPUT, "%s: out of memory", r->ps.name);
    else
        status = csv_reserve_rows(r, r->rows + room);
    if (status)
        return status;
    for (size_t i = 0, at = r->rows; i < n; at += chunks[i].lines + 1, i++)
        chunks[i].out = r->count_only ? scratch + i * row_bytes : r->data + at * row_bytes;
    parallel_for(r->threads, n, 1, csv_parse_chunks, &pass);
    free(scratch);
    size_t line = r->ps.line;
    for (size_t i = 0; i < n; line += chunks[i].lines, i++) {
        if (chunks[i].status)
            return csv_report(r->ps.name, &chunks[i].fault, line);
        if (!r->count_only)
            memmove(r->data + r->rows * row_bytes, chunks[i].out, chunks[i].rows * row_bytes);
        r->rows += chunks[i].rows;
    }
    r->ps.line = line;
    return 0;
}

/* Parses the complete lines in buf[0, end) (buf[end] is a NUL): one line at
 * a time until the first row has fixed the column count, then in chunks. */
static int csv_parse_region(struct csv_reader *r, char *buf, size_t end)
{
    struct csv_parser *ps = &r->ps;
    ps->p = ps->line_start = buf;
    ps->end = buf + end;
    if (!r->started) {
        r->started = 1;
        if (end >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
            ps->p = ps->line_start = buf + 3;
    }
    int status = 0;
    while (!status && r->cols == 0 && csv_next_row(ps, r->rows == 0 ? r : NULL)) {
        if (r->header_pending) {
            r->header_pending = 0;
            csv_skip_line(ps);
            continue;
        }
        status = csv_first_row(r);
    }
    if (status || r->cols == 0)
        return status;
    return csv_parse_lines(r, ps->p, ps->end);
}

/* Reads into w after what it holds, until it is full or the text ends
 * (gzip text comes a member at a time, however small the member: a window
 * filled by parts would be searched and handed to a thread once a part);
 * what goes wrong is held in w->msg.  Runs on a thread of its own while
 * the previous window is parsed. */
static void *csv_fill(void *arg)
{
    struct csv_window *w = ((void **)arg)[1];
    struct csv_reader *r = ((void **)arg)[0];
    gc_capture_set(&w->msg);
    size_t got = 1;
    w->status = 0;
    while (!w->status && w->len < w->cap && got) {
        w->status = text_source_fill(&r->src, w->buf + w->len, w->cap - w->len, &got);
        if (!w->status) {
            w->eof = got == 0;
            w->len += got;
        }
    }
    gc_capture_set(NULL);
    return NULL;
}

/* Makes room for at least `cap` bytes (and a NUL) in w. */
static int csv_window_grow(struct csv_reader *r, struct csv_window *w, size_t cap)
{
    if (w->buf && w->cap >= cap)
        return 0;
    if (cap >= GC_MEM_CHECK_MIN && cap - w->cap > gc_host_memory_available())
        return gc_fail(GC_EXIT_INPUT, "%s:%zu: a line longer than %.2f GiB", r->ps.name,
                       r->ps.line, w->cap / 1073741824.0);
    char *nb = realloc(w->buf, cap + 1);
    if (!nb)
        return gc_fail(GC_EXIT_INPUT, "%s: out of memory", r->ps.name);
    w->buf = nb;
    w->cap = cap;
    return 0;
}

/* Fills w (the whole window, or more for a long line) on this thread. */
static int csv_fill_now(struct csv_reader *r, struct csv_window *w)
{
    void *args[2] = { r, w };
    csv_fill(args);
    if (w->status)
        gc_capture_emit(&w->msg);
    return w->status;
}

/* Reads text window by window.  With more than one thread, the next window
 * is filled (read, inflated) while the current one's complete lines are
 * parsed, and the partial line at a window's end starts the next window. */
static int csv_run(struct csv_reader *r, size_t window)
{
    struct csv_window *cur = &r->win[0], *next = &r->win[1];
    int status = csv_window_grow(r, cur, window);
    if (!status)
        status = csv_fill_now(r, cur);
    /* cur->buf[0, scanned) holds no newline: text is searched once. */
    size_t scanned = 0, tail = 0;
    while (!status) {
        size_t end = cur->len;
        if (!cur->eof) {
            const char *nl = memrchr(cur->buf + scanned, '\n', cur->len - scanned);
            if (!nl) {
                /* No whole line yet: read on, into a window twice as
                 * large for a line longer than it. */
                scanned = cur->len;
                if (cur->len == cur->cap)
                    status = csv_window_grow(r, cur, cur->cap * 2);
                if (!status)
                    status = csv_fill_now(r, cur);
                continue;
            }
            end = (size_t)(nl - cur->buf) + 1;
            if ((status = csv_window_grow(r, next, cur->cap)))
                break;
            tail = cur->len - end;
            memcpy(next->buf, cur->buf + end, tail);
            next->len = tail;
        }
        pthread_t filler;
        void *args[2] = { r, next };
        int ahead = !cur->eof && r->threads > 1 &&
                    pthread_create(&filler, NULL, csv_fill, args) == 0;
        cur->buf[end] = '\0';
        status = csv_parse_region(r, cur->buf, end);
        if (ahead)
            pthread_join(filler, NULL);
        else if (!status && !cur->eof)
            csv_fill(args);
        if (status || cur->eof)
            break;
        if ((status = next->status))
            gc_capture_emit(&next->msg);
        struct csv_window *t = cur;
        cur = next;
        next = t;
        scanned = tail;
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
    r.ps = (struct csv_parser){ .name = in->name, .line = 1, .delim = ',', .fault = &r.fault };
    r.threads = o && o->threads > 0 ? o->threads : parallel_default_threads();
    if (r.threads > CSV_MAX_CHUNKS)
        r.threads = CSV_MAX_CHUNKS;
    if (o && o->delimiter)
        r.ps.delim = o->delimiter;
    else
        r.detect = 1;
    if (!csv_delimiter_ok(r.ps.delim))
        return gc_fail(GC_EXIT_USAGE, "%s: delimiter '%c' cannot separate numbers", in->name,
                       r.ps.delim);
    /* numpy.loadtxt's default dtype. */
    csv_set_dtype(&r.ps, o && o->dtype >= 0 && o->dtype < GC_DTYPE_COUNT
                         ? (enum gc_dtype)o->dtype : GC_F64);
    r.esize = gc_dtypes[r.ps.dtype].size;
    r.ps.loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    int status = !r.ps.loc ? gc_fail(GC_EXIT_INPUT, "%s: cannot create the C locale", in->name)
               : text_source_open(&r.src, in, gz, r.threads);
    if (!status)
        status = csv_run(&r, gz ? CSV_GZ_WINDOW : CSV_TEXT_CHUNK);
    if (!status && r.cols == 0) {
        if (r.have_mark)
            status = csv_take_mark(&r);
        else
            status = gc_fail(GC_EXIT_INPUT, r.header_pending || !(o && o->header)
                             ? "%s: no data" : "%s: no data after the header line", in->name);
        free(r.data);
        r.data = NULL;
    }
    struct gc_tensor res;
    memset(&res, 0, sizeof res);
    gc_tensor_set_2d(&res, r.rows, r.cols);
    res.dtype = r.ps.dtype;
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
    text_source_close(&r.src);
    free(r.win[0].buf);
    free(r.win[1].buf);
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

/* ---- writing: blocks of rows formatted and compressed on every core ---- */

/* A block of rows is formatted (and compressed) by one thread; its size
 * follows from the shape alone, so that the output is the same bytes
 * whatever the number of threads. */
#define CSV_BLOCK_TEXT ((size_t)1 << 20)
#define CSV_BLOCK_GUESS 12              /* bytes a value takes, as a guess */
#define CSV_MAX_SLOTS 256


struct csv_block {
    size_t row0, rows;
    char *text;                         /* rows * cols * (DEC_MAX_TEXT + 1) */
    size_t len;
    unsigned char *z;                   /* gzip member */
    size_t zlen;
    int failed;
};

struct csv_writer {
    const char *name;
    const struct gc_tensor *m;
    size_t rows, cols, block_rows;
    int fortran, precision;
    char delim;
    locale_t loc;
    size_t text_cap, zcap;
    struct csv_block slot[CSV_MAX_SLOTS];
    struct libdeflate_compressor *comp[CSV_MAX_SLOTS];   /* NULL: plain text */
};

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

static size_t csv_format_value(const struct csv_writer *w, size_t i, char *out)
{
    const void *d = w->m->data;
    switch (w->m->dtype) {
    case GC_F32: return dec_format_f32(((const float *)d)[i], w->precision, w->loc, out);
    case GC_F64: return dec_format_f64(((const double *)d)[i], w->precision, w->loc, out);
    case GC_F16:
        return dec_format_f32(gc_half_to_float(((const uint16_t *)d)[i]), w->precision, w->loc,
                              out);
    case GC_BF16:
        return dec_format_f32(gc_bf16_to_float(((const uint16_t *)d)[i]), w->precision, w->loc,
                              out);
    default: return csv_format_int(w->m, i, out);
    }
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* One gzip member holding b->text, with its size in the header. */
static int csv_deflate_block(struct libdeflate_compressor *c, struct csv_block *b, size_t zcap)
{
    static const unsigned char head[12] = { 0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255, 8, 0 };
    unsigned char *z = b->z;
    memcpy(z, head, sizeof head);
    z[12] = 'M';
    z[13] = 'S';
    z[14] = 4;
    z[15] = 0;
    size_t n = libdeflate_deflate_compress(c, b->text, b->len, z + GZ_HEAD_BYTES,
                                           zcap - GZ_HEAD_BYTES - GZ_TAIL_BYTES);
    if (n == 0)
        return 1;
    b->zlen = GZ_HEAD_BYTES + n + GZ_TAIL_BYTES;
    put_le32(z + 16, (uint32_t)b->zlen);
    put_le32(z + GZ_HEAD_BYTES + n, libdeflate_crc32(0, b->text, b->len));
    put_le32(z + GZ_HEAD_BYTES + n + 4, (uint32_t)b->len);
    return 0;
}

/* Formats (and compresses) the blocks of slots [first, last). */
static void csv_write_blocks(void *arg, size_t first, size_t last)
{
    struct csv_writer *w = arg;
    for (size_t s = first; s < last; s++) {
        struct csv_block *b = &w->slot[s];
        char *out = b->text;
        for (size_t r = b->row0; r < b->row0 + b->rows; r++)
            for (size_t c = 0; c < w->cols; c++) {
                size_t i = w->fortran ? c * w->rows + r : r * w->cols + c;
                out += csv_format_value(w, i, out);
                *out++ = c + 1 < w->cols ? w->delim : '\n';
            }
        b->len = (size_t)(out - b->text);
        b->failed = w->comp[s] && csv_deflate_block(w->comp[s], b, w->zcap);
    }
}

/* Writes slot s's bytes, or its text when the output is plain. */
static int csv_put_block(FILE *f, const struct csv_writer *w, size_t s)
{
    const struct csv_block *b = &w->slot[s];
    if (b->failed)
        return gc_fail(GC_EXIT_OUTPUT, "%s: gzip compression failed", w->name);
    return w->comp[s] ? write_all(f, w->name, b->z, b->zlen) : write_all(f, w->name, b->text, b->len);
}

/* Room for `slots` blocks, and a compressor each when `level` >= 0. */
static int csv_writer_open(struct csv_writer *w, size_t slots, int level)
{
    /* An empty matrix is one comment line, however many columns it has. */
    size_t row_bound = w->rows ? w->cols * (DEC_MAX_TEXT + 1) : 0;
    w->text_cap = w->block_rows * row_bound;
    if (w->text_cap < 128)
        w->text_cap = 128;
    for (size_t s = 0; s < slots; s++) {
        if (level >= 0 && !(w->comp[s] = libdeflate_alloc_compressor(level)))
            return gc_fail(GC_EXIT_INPUT, "%s: out of host memory for a gzip compressor",
                           w->name);
        if (w->comp[s] && !w->zcap)
            w->zcap = libdeflate_deflate_compress_bound(w->comp[s], w->text_cap) +
                      GZ_HEAD_BYTES + GZ_TAIL_BYTES;
        if (!(w->slot[s].text = malloc(w->text_cap)) ||
            (w->comp[s] && !(w->slot[s].z = malloc(w->zcap))))
            return gc_fail(GC_EXIT_INPUT, "%s: out of host memory for %zu bytes of text",
                           w->name, w->text_cap);
    }
    return 0;
}

static void csv_writer_close(struct csv_writer *w)
{
    for (size_t s = 0; s < CSV_MAX_SLOTS; s++) {
        free(w->slot[s].text);
        free(w->slot[s].z);
        libdeflate_free_compressor(w->comp[s]);
    }
}

/* A matrix one row a line; a vector one value a line, as numpy.savetxt
 * writes it (it reads back as a column).  `level` < 0: plain text. */
static int csv_write_any(FILE *f, const char *name, const struct gc_tensor *m,
                         const struct gc_write_opts *o, int level)
{
    if (m->ndim < 1 || m->ndim > 2) {
        char shape[64];
        gc_shape_text(m->ndim, m->shape, shape, sizeof shape);
        return gc_fail(GC_EXIT_USAGE, "%s: CSV holds a matrix or a vector; this is %s (write "
                       ".npy or raw for more dimensions)", name, shape);
    }
    struct csv_writer *w = calloc(1, sizeof *w);
    if (!w)
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", name);
    w->name = name;
    w->m = m;
    w->rows = m->shape[0];
    w->cols = m->ndim == 2 ? m->shape[1] : 1;
    w->fortran = gc_tensor_column_major(m);
    w->precision = o && o->precision > 0 ? o->precision : 0;
    w->delim = o && o->delimiter ? o->delimiter : ',';
    size_t per_row = (w->cols ? w->cols : 1) * CSV_BLOCK_GUESS;
    w->block_rows = CSV_BLOCK_TEXT / per_row ? CSV_BLOCK_TEXT / per_row : 1;
    size_t blocks = w->rows && w->cols ? (w->rows + w->block_rows - 1) / w->block_rows : 0;
    int threads = o && o->threads > 0 ? o->threads : parallel_default_threads();
    size_t slots = blocks < (size_t)threads ? blocks : (size_t)threads;
    if (slots > CSV_MAX_SLOTS)
        slots = CSV_MAX_SLOTS;
    if (slots == 0)
        slots = 1;
    w->loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    int status = !w->loc ? gc_fail(GC_EXIT_INPUT, "%s: cannot create the C locale", name)
               : csv_writer_open(w, slots, level);
    if (!status && blocks == 0) {
        /* CSV has no other way to tell (5,0) from (0,5) or from no data. */
        struct csv_block *b = &w->slot[0];
        b->len = (size_t)snprintf(b->text, w->text_cap, CSV_EMPTY_MARK "%zu, %zu)\n", w->rows,
                                  w->cols);
        b->failed = w->comp[0] && csv_deflate_block(w->comp[0], b, w->zcap);
        status = csv_put_block(f, w, 0);
    }
    for (size_t first = 0; !status && first < blocks; first += slots) {
        size_t n = blocks - first < slots ? blocks - first : slots;
        for (size_t s = 0; s < n; s++) {
            w->slot[s].row0 = (first + s) * w->block_rows;
            w->slot[s].rows = w->rows - w->slot[s].row0 < w->block_rows
                            ? w->rows - w->slot[s].row0 : w->block_rows;
        }
        parallel_for((int)n, n, 1, csv_write_blocks, w);
        for (size_t s = 0; s < n && !status; s++)
            status = csv_put_block(f, w, s);
    }
    if (!status && ferror(f))
        status = gc_fail(GC_EXIT_OUTPUT, "%s: write error", name);
    csv_writer_close(w);
    if (w->loc)
        freelocale(w->loc);
    free(w);
    return status;
}

int csv_write(FILE *f, const char *name, const struct gc_tensor *m,
              const struct gc_write_opts *o)
{
    return csv_write_any(f, name, m, o, -1);
}

int csv_gz_write(FILE *f, const char *name, const struct gc_tensor *m,
                 const struct gc_write_opts *o)
{
    int level = o && o->level >= 0 ? o->level : CSV_GZ_LEVEL;
    return csv_write_any(f, name, m, o, level > 12 ? 12 : level);
}
