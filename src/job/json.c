#include "src/job/json.h"

#include <inttypes.h>
#include <math.h>

void json_begin(struct json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->items[0] = 0;
}

/* Length of the well-formed UTF-8 sequence at s (1-4), or 0 if the byte
 * there does not start one (overlong forms and surrogates are not). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
        (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

static void write_text(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        int n = utf8_len(s);
        if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s);
        } else if (*s < 0x20 || *s == 0x7f) {
            fprintf(f, "\\u%04x", *s);
        } else if (n == 0) {
            fprintf(f, "\\udc%02x", *s);
            n = 1;
        } else {
            fwrite(s, 1, (size_t)n, f);
        }
        s += n ? n : 1;
    }
    fputc('"', f);
}

/* The separator, and the key, before a value at the current level. */
static void json_key(struct json *j, const char *key)
{
    int d = j->depth;
    if (d > 0) {
        if (j->items[d]++)
            fputc(',', j->f);
        if (j->lines[d])
            fputs("\n  ", j->f);
        else if (j->items[d] > 1)
            fputc(' ', j->f);
    }
    if (key) {
        write_text(j->f, key);
        fputs(": ", j->f);
    }
}

static void json_open(struct json *j, const char *key, char open, char close, int lines)
{
    json_key(j, key);
    fputc(open, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH) {
        j->depth++;
        j->items[j->depth] = 0;
        j->close[j->depth] = close;
        j->lines[j->depth] = lines;
    }
}

void json_object(struct json *j, const char *key)
{
    json_open(j, key, '{', '}', 0);
}

void json_list(struct json *j, const char *key, int lines)
{
    json_open(j, key, '[', ']', lines);
}

void json_end(struct json *j)
{
    if (j->depth == 0)
        return;
    if (j->lines[j->depth] && j->items[j->depth])
        fputc('\n', j->f);
    fputc(j->close[j->depth], j->f);
    if (--j->depth == 0)
        fputc('\n', j->f);
}

void json_string(struct json *j, const char *key, const char *s)
{
    json_key(j, key);
    if (s && *s)
        write_text(j->f, s);
    else
        fputs("null", j->f);
}

void json_number(struct json *j, const char *key, double v)
{
    json_key(j, key);
    if (!isfinite(v)) {
        fputs("null", j->f);
        return;
    }
    fprintf(j->f, "%.6g", v);
}

void json_count(struct json *j, const char *key, uint64_t v)
{
    json_key(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void json_int(struct json *j, const char *key, int64_t v)
{
    json_key(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void json_bool(struct json *j, const char *key, int v)
{
    json_key(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
    json_key(j, key);
    fputs("null", j->f);
}

void json_shape(struct json *j, const char *key, int ndim, const size_t *dims)
{
    json_list(j, key, 0);
    for (int d = 0; d < ndim; d++)
        json_count(j, NULL, dims[d]);
    json_end(j);
}
