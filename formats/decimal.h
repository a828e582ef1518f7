/* Decimal text <-> binary floating point, exact and locale-independent.
 *
 * Parsing is correctly rounded (to nearest, ties to even; subnormals,
 * overflow to infinity and underflow to zero included).  A mantissa of at
 * most 53 bits times a power of ten that a double holds exactly rounds once
 * in double (Clinger's fast path); any other mantissa of up to 19 digits is
 * multiplied by a 128-bit power of ten and rounded from the 192-bit product
 * (Eisel and Lemire).  Longer mantissas, and the rare product too close to
 * a rounding midpoint to settle, go to strtod_l/strtof_l under the "C"
 * locale.
 *
 * Formatting gives the shortest digit string that parses back to the same
 * value and, of those, the nearest to the value (on a tie, the even last
 * digit): Python's repr() digits for a double, NumPy's for a float.  They
 * come from the value's rounding interval alone (Giulietti's Schubfach),
 * with the same table of powers of ten (formats/decimal_pow10.h, written
 * and checked by formats/gen_pow10.py).  Or a fixed number of significant
 * digits, correctly rounded.  Speed, one thread: make bench-decimal. */
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
