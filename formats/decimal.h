/* Decimal text <-> binary floating point, exact and locale-independent.
 *
 * Parsing is correctly rounded: a fast path (Clinger's: a mantissa of at
 * most 53 bits times an exact power of ten up to 1e22 rounds once in
 * double) covers the numbers people write; everything else, and the rare
 * double that lands exactly on a float's rounding midpoint, goes to
 * strtod_l/strtof_l under the "C" locale.
 *
 * Formatting gives the shortest digit string that parses back to the same
 * value (each candidate is checked by the exact parser above), or a fixed
 * number of significant digits, correctly rounded. */
#ifndef GC_DECIMAL_H
#define GC_DECIMAL_H

#include <locale.h>
#include <stddef.h>

/* Longest text the formatters write, sign and exponent included. */
#define DEC_MAX_TEXT 32

/* Parses one number at p: [+-]digits[.digits][e[+-]digits], or nan, inf,
 * infinity in any case.  Returns the end of the number, or NULL if p does
 * not start one.  The text runs to `end`, where a NUL must be readable (the
 * parser looks one byte past a number; it reads up to `end` in blocks of
 * eight); `loc` is a "C" locale for the slow path. */
const char *dec_parse_f32(const char *p, const char *end, locale_t loc, float *out);
const char *dec_parse_f64(const char *p, const char *end, locale_t loc, double *out);

/* Write into buf (DEC_MAX_TEXT bytes) and return the length, no NUL.
 * precision 0: shortest round-trip text; 1..17: that many significant
 * digits. */
size_t dec_format_f32(float v, int precision, locale_t loc, char *buf);
size_t dec_format_f64(double v, int precision, locale_t loc, char *buf);

#endif
