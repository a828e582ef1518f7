/* Number text both ways (formats/decimal.h says what each function
 * promises).  In order: scanning the text into a mantissa and a power of
 * ten; rounding that to a float or a double (Clinger's fast path, then
 * Eisel and Lemire's 128-bit product, then the C library); the shortest
 * digits of a value (Schubfach) and the fixed-precision ones; laying the
 * digits out as text. */
#include "formats/decimal.h"
#include "formats/decimal_pow10.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every power of ten a double holds exactly. */
static const double exact_p10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The nearest doubles to 10^0..10^38 and 10^-0..10^-64, for the float
 * product path. */
static const double scale_p10[39] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
    1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28,
    1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38,
};

static const double scale_p10_neg[65] = {
    1e-0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12,
    1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22, 1e-23, 1e-24,
    1e-25, 1e-26, 1e-27, 1e-28, 1e-29, 1e-30, 1e-31, 1e-32, 1e-33, 1e-34, 1e-35, 1e-36,
    1e-37, 1e-38, 1e-39, 1e-40, 1e-41, 1e-42, 1e-43, 1e-44, 1e-45, 1e-46, 1e-47, 1e-48,
    1e-49, 1e-50, 1e-51, 1e-52, 1e-53, 1e-54, 1e-55, 1e-56, 1e-57, 1e-58, 1e-59, 1e-60,
    1e-61, 1e-62, 1e-63, 1e-64
};

/* 10^0..10^19, for counting digits. */
static const uint64_t pow10_u64[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

#define MANT_EXACT (UINT64_C(1) << 53)

struct dec_scan {
    uint64_t mant;          /* first 19 significant digits */
    long exp10;             /* value = mant * 10^exp10 when !truncated */
    int negative;
    int truncated;          /* nonzero digits beyond the 19th */
    enum { DEC_FINITE, DEC_NAN, DEC_INF } kind;
};

static int is_digit(char c)
{
    return (unsigned char)(c - '0') < 10;
}

static const char *match_word(const char *p, const char *lower)
{
    for (; *lower; p++, lower++)
        if ((*p | 0x20) != *lower)
            return NULL;
    return p;
}

/* The grammar of Python's float() minus underscores and hex, which is what
 * numpy.loadtxt accepts. */
static const char *dec_scan(const char *p, struct dec_scan *s)
{
    uint64_t m = 0;
    long e = 0;
    int nd = 0, any = 0, trunc = 0;
    s->negative = 0;
    if (*p == '+' || *p == '-')
        s->negative = *p++ == '-';
    const char *body = p;
    while (*p == '0') {
        p++;
        any = 1;
    }
    for (; is_digit(*p); p++) {
        any = 1;
        if (nd < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            nd++;
        } else {
            e++;
            trunc |= *p != '0';
        }
    }
    if (*p == '.') {
        p++;
        if (nd == 0)
            for (; *p == '0'; p++) {
                e--;
                any = 1;
            }
        for (; is_digit(*p); p++) {
            any = 1;
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd++;
                e--;
            } else {
                trunc |= *p != '0';
            }
        }
    }
    if (!any) {
        const char *q;
        s->mant = 0;
        s->exp10 = 0;
        s->truncated = 0;
        if ((q = match_word(body, "nan"))) {
            s->kind = DEC_NAN;
            return q;
        }
        if ((q = match_word(body, "infinity")) || (q = match_word(body, "inf"))) {
            s->kind = DEC_INF;
            return q;
        }
        return NULL;
    }
    if ((*p | 0x20) == 'e') {
        const char *q = p + 1;
        int eneg = 0;
        long x = 0;
        if (*q == '+' || *q == '-')
            eneg = *q++ == '-';
        if (!is_digit(*q))
            return NULL;
        for (; is_digit(*q); q++)
            if (x < 100000)
                x = x * 10 + (*q - '0');
        e += eneg ? -x : x;
        p = q;
    }
    s->mant = m;
    s->exp10 = e;
    s->truncated = trunc;
    s->kind = DEC_FINITE;
    return p;
}

/* Clinger's fast path: exact operands, one rounding. */
static inline int dec_fast(uint64_t m, long e, double *out)
{
    if (m > MANT_EXACT)
        return 0;
    if (e >= 0 && e <= 22) {
        *out = (double)m * exact_p10[e];
        return 1;
    }
    if (e < 0 && e >= -22) {
        *out = (double)m / exact_p10[-e];
        return 1;
    }
    if (e > 22 && e <= 22 + 15) {
        for (long i = 22; i < e; i++) {
            if (m > MANT_EXACT / 10)
                return 0;
            m *= 10;
        }
        *out = (double)m * 1e22;
        return 1;
    }
    return 0;
}

/* ---- 128-bit arithmetic on the power table (GCC and Clang's 128-bit
 * integers: one multiply instruction on x86-64 and AArch64) ---- */

typedef unsigned __int128 u128;

/* floor(x / 2^s) whatever x's sign (>> of a negative int is the compiler's
 * choice). */
static inline int floor_shift(int x, int s)
{
    return x >= 0 ? x >> s : -(int)(((unsigned)-x + (1u << s) - 1) >> s);
}

/* floor(e log2 10), floor(q log10 2) and floor(q log10 2 - log10(4/3)):
 * formats/gen_pow10.py checks them exact for |e| <= 400 and -1100 <= q < 1000. */
static inline int floor_log2_pow10(int e) { return floor_shift(e * 217706, 16); }
static inline int floor_log10_pow2(int q) { return floor_shift(q * 315653, 20); }
static inline int floor_log10_pow2_3_4(int q) { return floor_shift(q * 315653 - 130967, 20); }

/* A binary format to round into: stored mantissa bits, least normal
 * exponent, and the bits of infinity. */
struct dec_binary {
    int mant_bits, emin;
    uint64_t inf_bits;
};

static const struct dec_binary dec_binary64 = { 52, -1022, 0x7ff0000000000000ULL };
static const struct dec_binary dec_binary32 = { 23, -126, 0x7f800000ULL };

/* Eisel and Lemire's rounding of w * 10^q (0 < w < 10^19) to nearest even,
 * into *bits.  w, shifted to fill 64 bits, times the rounded-up 128-bit
 * entry for 10^q is a 192-bit P that exceeds the exact product X (in the
 * same units) by less than 2^64, and by nothing for 0 <= q <= 55, where the
 * entry is exact.  The top 64 bits hold the result's significand, its
 * rounding bit and at least 10 more; X rounds the way P does unless P lies
 * less than 2^64 above a midpoint between two results.  There, when the
 * entry is inexact, X may be below, on or above the midpoint: returns 0
 * (and on the edge of the subnormal range), for the library parser. */
static int dec_round_binary(uint64_t w, long q, const struct dec_binary *f, uint64_t *bits)
{
    if (q < DEC_POW10_MIN) {
        *bits = 0;              /* below 10^-323: under half the least subnormal */
        return 1;
    }
    if (q > 308) {
        *bits = f->inf_bits;
        return 1;
    }
    const uint64_t *g = dec_pow10[q - DEC_POW10_MIN];
    int lz = __builtin_clzll(w);
    uint64_t wn = w << lz;
    u128 lo = (u128)wn * g[1];
    u128 hi = (u128)wn * g[0] + (uint64_t)(lo >> 64);
    uint64_t top = (uint64_t)(hi >> 64), mid = (uint64_t)hi;
    int upper = (int)(top >> 63);               /* P >= 2^191 */
    /* X's leading bit is worth 2^e2, and the result keeps `kept` bits. */
    int e2 = floor_log2_pow10((int)q) + 63 + upper - lz;
    int kept = f->mant_bits + 1 - (e2 < f->emin ? f->emin - e2 : 0);
    if (kept < 0) {
        *bits = 0;              /* X <= P, under half the least subnormal */
        return 1;
    }
    if (kept == 0)
        return 0;
    int shift = 63 + upper - kept;              /* 10 or more */
    uint64_t m = top >> shift, frac = top & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    int up = frac >= half;
    if (frac == half && mid == 0) {
        if (q < 0 || q > 55)
            return 0;
        up = (uint64_t)lo != 0 || (m & 1);      /* exact: past the midpoint, or a tie */
    }
    m += (uint64_t)up;
    /* A carry out of the significand moves into the exponent field, and a
     * subnormal's into the least normal exponent. */
    uint64_t b = kept == f->mant_bits + 1 ? ((uint64_t)(e2 - f->emin) << f->mant_bits) + m : m;
    *bits = b >= f->inf_bits ? f->inf_bits : b;
    return 1;
}

static int dec_slow(const char *start, const char *end, int as_float, locale_t loc,
                    double *out_d, float *out_f)
{
    char local[64], *buf = local;
    size_t n = (size_t)(end - start);
    if (n >= sizeof local && !(buf = malloc(n + 1)))
        return 0;
    memcpy(buf, start, n);
    buf[n] = 0;
    char *ep;
    if (as_float)
        *out_f = strtof_l(buf, &ep, loc);
    else
        *out_d = strtod_l(buf, &ep, loc);
    int ok = ep == buf + n;
    if (buf != local)
        free(buf);
    return ok;
}

/* Eight ASCII digits at once (little-endian loads): all of them digits? */
static int all_digits8(uint64_t w)
{
    return ((w & 0xf0f0f0f0f0f0f0f0ULL) |
            (((w + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) >> 4)) ==
           0x3333333333333333ULL;
}

/* Their value: pairs, then quads, then the eight, by multiply-and-shift. */
static uint64_t parse_digits8(uint64_t w)
{
    w -= 0x3030303030303030ULL;
    w = w * 10 + (w >> 8);
    w = ((w & 0x000000ff000000ffULL) * (100 + (1000000ULL << 32)) +
         ((w >> 16) & 0x000000ff000000ffULL) * (1 + (10000ULL << 32))) >> 32;
    return w;
}

/* Appends the digits at p to *m, eight at a time while they last, and
 * counts them into *nd.  *m wraps when more than 19 are taken; callers then
 * give up on the result. */
static inline const char *scan_digits(const char *p, const char *end, uint64_t *m, int *nd)
{
    const char *start = p;
    uint64_t v = *m;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (!all_digits8(w))
            break;
        v = v * 100000000 + parse_digits8(w);
        p += 8;
    }
    for (; is_digit(*p); p++)
        v = v * 10 + (uint64_t)(*p - '0');
    *m = v;
    *nd += (int)(p - start);
    return p;
}

/* The common case quickly: at most 19 digits in all and a short exponent.
 * NULL sends everything else (nan, inf, long numbers, errors) to dec_scan. */
static inline const char *dec_scan_short(const char *p, const char *end, struct dec_scan *s)
{
    uint64_t m = 0;
    int nd = 0, frac = 0;
    s->negative = 0;
    if (*p == '+' || *p == '-')
        s->negative = *p++ == '-';
    p = scan_digits(p, end, &m, &nd);
    if (*p == '.') {
        const char *f = ++p;
        p = scan_digits(p, end, &m, &nd);
        frac = (int)(p - f);
    }
    if (nd == 0 || nd > 19)
        return NULL;
    long e = -frac;
    if ((*p | 0x20) == 'e') {
        const char *q = p + 1;
        int eneg = 0;
        long x = 0;
        if (*q == '+' || *q == '-')
            eneg = *q++ == '-';
        const char *digits = q;
        for (; is_digit(*q) && q - digits < 5; q++)
            x = x * 10 + (*q - '0');
        if (q == digits || is_digit(*q))
            return NULL;
        e += eneg ? -x : x;
        p = q;
    }
    s->mant = m;
    s->exp10 = e;
    s->truncated = 0;
    s->kind = DEC_FINITE;
    return p;
}

const char *dec_parse_f64(const char *p, const char *text_end, locale_t loc, double *out)
{
    struct dec_scan s;
    const char *end = dec_scan_short(p, text_end, &s);
    if (!end)
        end = dec_scan(p, &s);
    double d;
    uint64_t bits;
    if (!end)
        return NULL;
    if (s.kind == DEC_NAN)
        d = NAN;
    else if (s.kind == DEC_INF)
        d = INFINITY;
    else if (s.mant == 0)
        d = 0;
    else if (!s.truncated && dec_fast(s.mant, s.exp10, &d))
        ;
    else if (!s.truncated && dec_round_binary(s.mant, s.exp10, &dec_binary64, &bits))
        memcpy(&d, &bits, 8);
    else
        return dec_slow(p, end, 0, loc, out, NULL) ? end : NULL;
    *out = s.negative ? -d : d;
    return end;
}

/* A float from m * 10^e through a double with at most two roundings (the
 * power's and the product's), off by at most 2 units in the last place.
 * Unless that lands within a few units of a float rounding midpoint, the
 * float it rounds to is the correctly rounded one.  Returns 0 when it
 * cannot tell, and in float's subnormal range, where midpoints lie
 * elsewhere. */
static inline int dec_float_by_product(uint64_t m, long e, float *out)
{
    if (m > MANT_EXACT || e < -64 || e > 38)
        return 0;
    double d = (double)m * (e >= 0 ? scale_p10[e] : scale_p10_neg[-e]);
    uint64_t b;
    memcpy(&b, &d, 8);
    int64_t off = (int64_t)(b & 0x1fffffff) - 0x10000000;
    if (off >= -8 && off <= 8)
        return 0;
    if (d < 0x1p-126)
        return 0;
    *out = (float)d;
    return 1;
}

const char *dec_parse_f32(const char *p, const char *text_end, locale_t loc, float *out)
{
    struct dec_scan s;
    const char *end = dec_scan_short(p, text_end, &s);
    if (!end)
        end = dec_scan(p, &s);
    float f;
    if (!end)
        return NULL;
    if (s.kind == DEC_NAN) {
        f = NAN;
    } else if (s.kind == DEC_INF) {
        f = INFINITY;
    } else if (s.mant == 0) {
        f = 0;
    } else if (s.truncated || !dec_float_by_product(s.mant, s.exp10, &f)) {
        uint64_t bits;
        if (s.truncated || !dec_round_binary(s.mant, s.exp10, &dec_binary32, &bits))
            return dec_slow(p, end, 1, loc, NULL, out) ? end : NULL;
        uint32_t b32 = (uint32_t)bits;
        memcpy(&f, &b32, 4);
    }
    *out = s.negative ? -f : f;
    return end;
}

/* ---- formatting ---- */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes the 8 digits of v < 10^8, leading zeros included, ending just
 * before `end`. */
static void put_8_digits_back(char *end, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        memcpy(end - 2 - 2 * i, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
}

/* Writes v's digits ending just before `end`; returns how many.  Blocks of
 * eight in 32-bit arithmetic, which keeps the divisions short. */
static int put_digits_back(char *end, uint64_t v)
{
    char *p = end;
    while (v >= 100000000) {
        put_8_digits_back(p, (uint32_t)(v % 100000000));
        v /= 100000000;
        p -= 8;
    }
    uint32_t r = (uint32_t)v;
    while (r >= 100) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * (r % 100), 2);
        r /= 100;
    }
    if (r >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    } else {
        *--p = (char)('0' + r);
    }
    return (int)(end - p);
}

/* Decimal digits of v > 0: from its bit length (1233 / 4096 ~ log10 2, low
 * by at most one), then one comparison. */
static int count_digits(uint64_t v)
{
    int n = ((64 - __builtin_clzll(v)) * 1233) >> 12;
    return n + (n < 20 && v >= pow10_u64[n]);
}

/* Writes d * 10^-p in whichever of positional and scientific notation is
 * shorter (positional on a tie). */
static size_t dec_emit(char *buf, int negative, uint64_t d, int p)
{
    char *o = buf;
    while (d >= 10 && d % 10 == 0) {
        d /= 10;
        p--;
    }
    int nd = count_digits(d);
    int x = nd - 1 - p;             /* exponent of the first digit */
    int ax = x < 0 ? -x : x;
    int exp_digits = ax >= 100 ? 3 : ax >= 10 ? 2 : 1;
    int sci_len = nd + (nd > 1) + 1 + (x < 0) + exp_digits;
    int pos_len = x >= 0 ? (nd <= x + 1 ? x + 1 : nd + 1) : 1 - x + nd;
    if (negative)
        *o++ = '-';
    if (pos_len <= sci_len && x >= 0 && nd <= x + 1) {
        put_digits_back(o + nd, d);
        memset(o + nd, '0', (size_t)(x + 1 - nd));
        o += x + 1;
    } else if (pos_len <= sci_len && x >= 0) {
        /* Digits shifted one place right of the point, then the integer
         * part moved back over it. */
        put_digits_back(o + nd + 1, d);
        memmove(o, o + 1, (size_t)x + 1);
        o[x + 1] = '.';
        o += nd + 1;
    } else if (pos_len <= sci_len) {
        *o++ = '0';
        *o++ = '.';
        memset(o, '0', (size_t)(-x - 1));
        o += -x - 1;
        put_digits_back(o + nd, d);
        o += nd;
    } else {
        put_digits_back(o + nd + 1, d);
        o[0] = o[1];
        if (nd > 1) {
            o[1] = '.';
            o += nd + 1;
        } else {
            o += 1;
        }
        *o++ = 'e';
        if (x < 0)
            *o++ = '-';
        o += put_digits_back(o + exp_digits, (uint64_t)ax);
    }
    return (size_t)(o - buf);
}

static size_t dec_special(double v, char *buf)
{
    if (isnan(v)) {
        memcpy(buf, "nan", 3);
        return 3;
    }
    if (isinf(v)) {
        memcpy(buf, v < 0 ? "-inf" : "inf", 4 - (v > 0));
        return 4 - (v > 0);
    }
    size_t n = 0;
    if (signbit(v))
        buf[n++] = '-';
    buf[n++] = '0';
    return n;
}

/* Decimal exponent of the first significant digit of a > 0. */
static int dec_exponent(double a)
{
    return (int)floor(log10(a));
}

/* Digits and exponent from "%.*e" output, printed under the C locale. */
static void dec_printf_digits(double a, int digits, locale_t loc, uint64_t *d, int *p)
{
    char s[48];
    locale_t old = uselocale(loc);
    snprintf(s, sizeof s, "%.*e", digits - 1, a);
    uselocale(old);
    uint64_t m = 0;
    int nd = 0;
    const char *c = s;
    for (; *c && *c != 'e'; c++)
        if (is_digit(*c)) {
            m = m * 10 + (uint64_t)(*c - '0');
            nd++;
        }
    int x = *c == 'e' ? atoi(c + 1) : 0;
    *d = m;
    *p = nd - 1 - x;
}

/* `digits` significant digits, rounded to nearest even on the exact value:
 * the residual of the one rounded operation (exact by fma) settles a
 * scaled value that lands on .5. */
static void fixed_digits(double a, int digits, locale_t loc, uint64_t *d_out, int *p_out)
{
    int e10 = dec_exponent(a);
    for (int attempt = 0; attempt < 2; attempt++) {
        int p = digits - 1 - e10;
        if (digits > 15 || p > 22 || p < -22)
            break;
        double s, resid;
        if (p >= 0) {
            s = a * exact_p10[p];
            resid = fma(a, exact_p10[p], -s);       /* exact - s */
        } else {
            s = a / exact_p10[-p];
            resid = -fma(s, exact_p10[-p], -a);     /* sign of exact - s */
        }
        double n = floor(s), frac = s - n;
        if (frac > 0.5 || (frac == 0.5 && (resid > 0 || (resid == 0 && fmod(n, 2) != 0))))
            n += 1;
        uint64_t d = (uint64_t)n;
        if (d < (uint64_t)exact_p10[digits - 1] && d > 0) {
            e10--;                  /* log10 rounded up to the next power */
            continue;
        }
        if (d > (uint64_t)exact_p10[digits]) {
            e10++;
            continue;
        }
        *d_out = d;
        *p_out = p;
        return;
    }
    dec_printf_digits(a, digits, loc, d_out, p_out);
}

/* Giulietti's Schubfach ("The Schubfach way to render doubles"): the
 * shortest decimal in v's rounding interval, the nearest to v among those.
 *
 * v = c 2^q (c > 0).  Every value strictly between the midpoints to v's
 * neighbours reads back as v, and the midpoints themselves do when c is
 * even (ties go to the even significand).  The midpoints are v -+ 2^q / 2,
 * or v - 2^q / 4 below when v is the lowest value of a binade and the
 * neighbour below has half the spacing (`lower_half`).
 *
 * With 10^k the largest power of ten not above the interval's width, the
 * interval holds at least one multiple of 10^k and at most one of 10^(k+1).
 * If it holds a multiple of 10^(k+1), that is the answer (the shortest
 * candidate of all, a multiple of any higher power being one of 10^(k+1)
 * too); else the nearest multiple of 10^k, floor or ceiling of v / 10^k.
 *
 * Scaled by 4 / 10^k, v and the midpoints become x = cp 2^q 10^-k for
 * integers cp (4c, 4c - 2 or 4c - 1, 4c + 2); each is computed as
 * floor(x) with the lowest bit set when x is not an integer ("round to
 * odd"), which still compares exactly with any multiple of 4, so every
 * test below is exact.  formats/gen_pow10.py shows the 192-bit products
 * give exactly that. */

/* x = cp 2^h entry / 2^128, rounded to odd (cp 2^h < 2^60).  The product
 * exceeds x by under 2^60 units of 2^-128, and a non-integer x lies more
 * than 2^-68 (2^60 units) from any integer. */
static inline uint64_t scaled_to_odd(const uint64_t *g, uint64_t cp)
{
    u128 lo = (u128)cp * g[1];
    u128 hi = (u128)cp * g[0] + (uint64_t)(lo >> 64);
    uint64_t fraction_seen = (uint64_t)hi | ((uint64_t)lo >> 60);
    return (uint64_t)(hi >> 64) | (fraction_seen != 0);
}

/* The digits of v = c 2^q as d * 10^-p (d may end in zeros). */
static void shortest_digits(uint64_t c, int q, int lower_half, uint64_t *d_out, int *p_out)
{
    int k = lower_half ? floor_log10_pow2_3_4(q) : floor_log10_pow2(q);
    int h = q + floor_log2_pow10(-k) + 1;       /* 1..4: the entry's scale */
    const uint64_t *g = dec_pow10[-k - DEC_POW10_MIN];
    uint64_t cb = c << 2, odd = c & 1;          /* midpoints excluded for odd c */
    /* 4 v / 10^k and the lower and upper midpoints likewise, to odd. */
    uint64_t vb = scaled_to_odd(g, cb << h);
    uint64_t vbl = scaled_to_odd(g, (cb - 2 + (uint64_t)lower_half) << h);
    uint64_t vbr = scaled_to_odd(g, (cb + 2) << h);
    uint64_t s = vb >> 2, d;                    /* floor(v / 10^k) */
    /* n 10^k is inside when 4n >= vbl (> for odd c), and likewise above. */
    uint64_t s10 = s / 10 * 10, t10 = s10 + 10;
    int s10_in = vbl + odd <= s10 << 2, t10_in = (t10 << 2) + odd <= vbr;
    if (s10_in != t10_in) {
        d = s10_in ? s10 : t10;
    } else {
        uint64_t t = s + 1;
        int s_in = vbl + odd <= s << 2, t_in = (t << 2) + odd <= vbr;
        if (s_in != t_in)
            d = s_in ? s : t;
        else            /* both (one always is: the interval is 10^k wide or more): the
                         * nearer, on a tie the even */
            d = vb < 4 * s + 2 || (vb == 4 * s + 2 && !(s & 1)) ? s : t;
    }
    *d_out = d;
    *p_out = -k;
}

size_t dec_format_f32(float v, int precision, locale_t loc, char *buf)
{
    if (!isfinite(v) || v == 0)
        return dec_special(v, buf);
    double a = fabs((double)v);
    uint64_t d;
    int p;
    if (precision > 0) {
        fixed_digits(a, precision > 17 ? 17 : precision, loc, &d, &p);
    } else {
        uint32_t bits;
        memcpy(&bits, &v, 4);
        uint32_t be = bits >> 23 & 0xff, m = bits & ((UINT32_C(1) << 23) - 1);
        if (be == 0)
            shortest_digits(m, -149, 0, &d, &p);
        else
            shortest_digits(m | UINT32_C(1) << 23, (int)be - 150, m == 0 && be > 1, &d, &p);
    }
    return dec_emit(buf, signbit(v) != 0, d, p);
}

size_t dec_format_f64(double v, int precision, locale_t loc, char *buf)
{
    if (!isfinite(v) || v == 0)
        return dec_special(v, buf);
    double a = fabs(v);
    uint64_t d;
    int p;
    if (precision > 0) {
        fixed_digits(a, precision > 17 ? 17 : precision, loc, &d, &p);
    } else {
        uint64_t bits;
        memcpy(&bits, &v, 8);
        uint64_t be = bits >> 52 & 0x7ff, m = bits & ((UINT64_C(1) << 52) - 1);
        if (be == 0)
            shortest_digits(m, -1074, 0, &d, &p);
        else
            shortest_digits(m | UINT64_C(1) << 52, (int)be - 1075, m == 0 && be > 1, &d, &p);
    }
    return dec_emit(buf, signbit(v) != 0, d, p);
}
