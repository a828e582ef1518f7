/* The one way gemmcli writes JSON: every JSON object it prints (the --json
 * summary of mul and transpose, info --json, kernels --json and --for,
 * bench's and the sweep's .json files) is written through these, so that
 * every document parses by any JSON parser and reads alike:
 *
 *   - a number is finite or null (NaN and infinities have no JSON form);
 *   - a shape is a list of integers ([] for a scalar), never "4x8x5";
 *   - a value that is absent is null, never "" (an empty string is
 *     written as null, and NULL is);
 *   - a string is UTF-8 as it is; a byte that is not part of valid UTF-8
 *     (a file name may hold any bytes) as \udcXX, Python's surrogateescape,
 *     so that the name stays recoverable.
 *
 * A writer keeps the nesting and the commas; `key` is NULL for a value in
 * a list and for the outermost value. */
#ifndef GC_JSON_H
#define GC_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

struct json {
    FILE *f;
    int depth;
    int items[JSON_MAX_DEPTH];     /* values written so far at each open level */
    char close[JSON_MAX_DEPTH];    /* '}' or ']' */
    int lines[JSON_MAX_DEPTH];     /* a list that puts each item on a line of its own */
};

/* A writer to `f`; nothing is written yet. */
void json_begin(struct json *j, FILE *f);

/* Opens an object, or a list (`lines`: each item on a line of its own,
 * indented; else all on one line); json_end closes the innermost, and
 * after the outermost ends the line. */
void json_object(struct json *j, const char *key);
void json_list(struct json *j, const char *key, int lines);
void json_end(struct json *j);

void json_string(struct json *j, const char *key, const char *s);
/* Six significant digits, as the text summaries give; null when v is not
 * finite. */
void json_number(struct json *j, const char *key, double v);
void json_count(struct json *j, const char *key, uint64_t v);
void json_int(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
void json_shape(struct json *j, const char *key, int ndim, const size_t *dims);

#endif
