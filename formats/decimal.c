#include "formats/decimal.h"

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

/* The nearest doubles to 10^0..10^308: for scaling a value to a digit
 * candidate, which the exact parser then checks. */
static const double scale_p10[309] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
    1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28,
    1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39, 1e40, 1e41, 1e42,
    1e43, 1e44, 1e45, 1e46, 1e47, 1e48, 1e49, 1e50, 1e51, 1e52, 1e53, 1e54, 1e55, 1e56,
    1e57, 1e58, 1e59, 1e60, 1e61, 1e62, 1e63, 1e64, 1e65, 1e66, 1e67, 1e68, 1e69, 1e70,
    1e71, 1e72, 1e73, 1e74, 1e75, 1e76, 1e77, 1e78, 1e79, 1e80, 1e81, 1e82, 1e83, 1e84,
    1e85, 1e86, 1e87, 1e88, 1e89, 1e90, 1e91, 1e92, 1e93, 1e94, 1e95, 1e96, 1e97, 1e98,
    1e99, 1e100, 1e101, 1e102, 1e103, 1e104, 1e105, 1e106, 1e107, 1e108, 1e109, 1e110,
    1e111, 1e112, 1e113, 1e114, 1e115, 1e116, 1e117, 1e118, 1e119, 1e120, 1e121, 1e122,
    1e123, 1e124, 1e125, 1e126, 1e127, 1e128, 1e129, 1e130, 1e131, 1e132, 1e133, 1e134,
    1e135, 1e136, 1e137, 1e138, 1e139, 1e140, 1e141, 1e142, 1e143, 1e144, 1e145, 1e146,
    1e147, 1e148, 1e149, 1e150, 1e151, 1e152, 1e153, 1e154, 1e155, 1e156, 1e157, 1e158,
    1e159, 1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167, 1e168, 1e169, 1e170,
    1e171, 1e172, 1e173, 1e174, 1e175, 1e176, 1e177, 1e178, 1e179, 1e180, 1e181, 1e182,
    1e183, 1e184, 1e185, 1e186, 1e187, 1e188, 1e189, 1e190, 1e191, 1e192, 1e193, 1e194,
    1e195, 1e196, 1e197, 1e198, 1e199, 1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206,
    1e207, 1e208, 1e209, 1e210, 1e211, 1e212, 1e213, 1e214, 1e215, 1e216, 1e217, 1e218,
    1e219, 1e220, 1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227, 1e228, 1e229, 1e230,
    1e231, 1e232, 1e233, 1e234, 1e235, 1e236, 1e237, 1e238, 1e239, 1e240, 1e241, 1e242,
    1e243, 1e244, 1e245, 1e246, 1e247, 1e248, 1e249, 1e250, 1e251, 1e252, 1e253, 1e254,
    1e255, 1e256, 1e257, 1e258, 1e259, 1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266,
    1e267, 1e268, 1e269, 1e270, 1e271, 1e272, 1e273, 1e274, 1e275, 1e276, 1e277, 1e278,
    1e279, 1e280, 1e281, 1e282, 1e283, 1e284, 1e285, 1e286, 1e287, 1e288, 1e289, 1e290,
    1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298, 1e299, 1e300, 1e301, 1e302,
    1e303, 1e304, 1e305, 1e306, 1e307, 1e308
};

static const uint64_t pow10_u64[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/* The nearest doubles to 10^-0..10^-64, for the float fast path. */
static const double scale_p10_neg[65] = {
    1e-0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12,
    1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22, 1e-23, 1e-24,
    1e-25, 1e-26, 1e-27, 1e-28, 1e-29, 1e-30, 1e-31, 1e-32, 1e-33, 1e-34, 1e-35, 1e-36,
    1e-37, 1e-38, 1e-39, 1e-40, 1e-41, 1e-42, 1e-43, 1e-44, 1e-45, 1e-46, 1e-47, 1e-48,
    1e-49, 1e-50, 1e-51, 1e-52, 1e-53, 1e-54, 1e-55, 1e-56, 1e-57, 1e-58, 1e-59, 1e-60,
    1e-61, 1e-62, 1e-63, 1e-64
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

/* A double on a float rounding midpoint: the 29 bits a float drops are
 * exactly one half.  Only meaningful for doubles in float's normal range,
 * which is all the fast path produces. */
static int on_float_midpoint(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return (b & 0x1fffffff) == 0x10000000;
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
    if (!end)
        return NULL;
    if (s.kind == DEC_NAN)
        d = NAN;
    else if (s.kind == DEC_INF)
        d = INFINITY;
    else if (s.mant == 0)
        d = 0;
    else if (s.truncated || !dec_fast(s.mant, s.exp10, &d))
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
        double d;
        if (s.truncated || !dec_fast(s.mant, s.exp10, &d) || on_float_midpoint(d))
            return dec_slow(p, end, 1, loc, NULL, out) ? end : NULL;
        f = (float)d;
    }
    *out = s.negative ? -f : f;
    return end;
}

/* ---- formatting ---- */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes v's digits ending just before `end`; returns how many. */
static int put_digits_back(char *end, uint64_t v)
{
    char *p = end;
    while (v >= 100) {
        const char *pair = digit_pairs + 2 * (v % 100);
        v /= 100;
        *--p = pair[1];
        *--p = pair[0];
    }
    if (v >= 10) {
        *--p = digit_pairs[2 * v + 1];
        *--p = digit_pairs[2 * v];
    } else {
        *--p = (char)('0' + v);
    }
    return (int)(end - p);
}

static int count_digits(uint64_t v)
{
    int n = 1;
    while (n < 20 && v >= pow10_u64[n])
        n++;
    return n;
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

/* a * 10^p for a candidate: not exact, only close. */
static double dec_scale(double a, int p)
{
    if (p > 308)
        return a * 1e200 * scale_p10[p - 200];
    if (p >= 0)
        return a * scale_p10[p];
    if (p >= -308)
        return a / scale_p10[-p];
    return a / 1e200 / scale_p10[-p - 200];
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

/* Does d * 10^-p read back as v?  Exact: the fast path where it applies,
 * else the library parser. */
static int check_f32(uint64_t d, int p, float v, locale_t loc)
{
    double x;
    if (d <= MANT_EXACT && p >= -22 && p <= 22) {
        x = p >= 0 ? (double)d / exact_p10[p] : (double)d * exact_p10[-p];
        if (!on_float_midpoint(x))
            return (float)x == v;
    }
    char s[48];
    snprintf(s, sizeof s, "%llue%d", (unsigned long long)d, -p);
    return strtof_l(s, NULL, loc) == v;
}

static int check_f64(uint64_t d, int p, double v, locale_t loc)
{
    double x;
    if (d <= MANT_EXACT && p >= -22 && p <= 22)
        return (p >= 0 ? (double)d / exact_p10[p] : (double)d * exact_p10[-p]) == v;
    char s[48];
    snprintf(s, sizeof s, "%llue%d", (unsigned long long)d, -p);
    x = strtod_l(s, NULL, loc);
    return x == v;
}

/* The k-digit decimals nearest to a, nearest first, checked in turn.  The
 * scaled value is off by far less than one unit for float (k <= 9) and by
 * less than one for double (k <= 15), so the true nearest is among the
 * `spread` integers tried. */
static int try_digits(double a, int k, int e10, int is_f32, locale_t loc,
                      uint64_t *d_out, int *p_out)
{
    int p = k - 1 - e10;
    double s = dec_scale(a, p), r = nearbyint(s);
    if (r < 1)
        return 0;
    uint64_t c[3] = { (uint64_t)r, 0, 0 };
    int nc = 1;
    if (s < r) {
        c[nc++] = c[0] - 1;
        if (!is_f32)
            c[nc++] = c[0] + 1;
    } else {
        c[nc++] = c[0] + 1;
        if (!is_f32 && c[0] > 1)
            c[nc++] = c[0] - 1;
    }
    for (int i = 0; i < nc; i++) {
        int ok = is_f32 ? check_f32(c[i], p, (float)a, loc) : check_f64(c[i], p, a, loc);
        if (ok) {
            *d_out = c[i];
            *p_out = p;
            return 1;
        }
    }
    return 0;
}

/* The shortest k in [1, hi] whose candidate checks, given that hi's does
 * (its candidate in *d, *p): the property is monotone in k, since a k-digit
 * decimal is also a (k+1)-digit one. */
static void shortest_search(double a, int hi, int e10, int is_f32, locale_t loc,
                            uint64_t *d, int *p)
{
    int lo = 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (try_digits(a, mid, e10, is_f32, loc, d, p))
            hi = mid;
        else
            lo = mid + 1;
    }
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

/* v rounded down to a multiple of 10^j, with constant divisors that the
 * compiler turns into multiplications. */
static uint32_t round_down_pow10(uint32_t v, int j)
{
    switch (j) {
    case 0: return v;
    case 1: return v / 10 * 10;
    case 2: return v / 100 * 100;
    case 3: return v / 1000 * 1000;
    case 4: return v / 10000 * 10000;
    case 5: return v / 100000 * 100000;
    case 6: return v / 1000000 * 1000000;
    case 7: return v / 10000000 * 10000000;
    case 8: return v / 100000000 * 100000000;
    default: return v / 1000000000 * 1000000000;
    }
}

/* Shortest digits for a float from its rounding interval, in double.
 *
 * Every decimal strictly between the midpoints to the neighbouring floats
 * reads back as v.  Scaled so that v has 9 integer digits, the interval's
 * ends carry an error far below eps; a multiple of 10^j inside the interval
 * shrunk by eps certainly reads back, and none inside it grown by eps
 * certainly means that no decimal j digits shorter exists.  When the
 * two tests disagree the value is too close to call and the checked search
 * takes over (returns 0). */
static int shortest_f32_interval(float v, uint64_t *d_out, int *p_out)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    uint32_t be = bits >> 23, bm = bits & 0x7fffff;
    double a = v, ulp;
    uint64_t ubits = (uint64_t)((be ? (int)be : 1) - 150 + 1023) << 52;
    memcpy(&ulp, &ubits, 8);
    double up = ulp / 2, down = (bm == 0 && be > 1) ? ulp / 4 : ulp / 2;
    uint64_t abits;
    memcpy(&abits, &a, 8);
    int e2 = (int)((abits >> 52) & 0x7ff) - 1023;
    int p = 8 - ((e2 * 1233) >> 12);    /* 1233 / 4096 ~ log10(2), rounded down */
    double A = dec_scale(a, p);
    if (A >= 1e9) {
        p--;
        A = dec_scale(a, p);
    } else if (A < 1e8) {
        p++;
        A = dec_scale(a, p);
    }
    /* From here on positive and below 2^32: conversion truncates, as
     * floor would. */
    double L = dec_scale(a - down, p), H = dec_scale(a + up, p), eps = A * 0x1p-50;
    uint32_t dlo = (uint32_t)(L + eps) + 1, dhi = (uint32_t)(H - eps);  /* certainly inside */
    uint32_t plo = (uint32_t)(L - eps), phi = (uint32_t)(H + eps);      /* possibly inside */
    plo += (double)plo < L - eps;
    if (dlo > dhi)
        return 0;
    int j = 0;
    while (j < 9) {
        if (round_down_pow10(dhi, j + 1) >= dlo) {
            j++;
            continue;
        }
        if (round_down_pow10(phi, j + 1) >= plo)
            return 0;
        break;
    }
    uint32_t step = (uint32_t)pow10_u64[j], c0 = round_down_pow10((uint32_t)A, j);
    uint32_t c1 = c0 + step, c;
    int in0 = c0 >= dlo && c0 <= dhi, in1 = c1 >= dlo && c1 <= dhi;
    if (in0 && in1)
        c = A - (double)c0 <= (double)c1 - A ? c0 : c1;
    else if (in0 || in1)
        c = in0 ? c0 : c1;
    else
        return 0;
    *d_out = c;     /* dec_emit drops the trailing zeros */
    *p_out = p;
    return 1;
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
    } else if (!shortest_f32_interval(fabsf(v), &d, &p)) {
        int e10 = dec_exponent(a);
        if (!try_digits(a, 9, e10, 1, loc, &d, &p))
            dec_printf_digits(a, 9, loc, &d, &p);
        else
            shortest_search(a, 9, e10, 1, loc, &d, &p);
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
        int e10 = dec_exponent(a);
        if (try_digits(a, 15, e10, 0, loc, &d, &p)) {
            shortest_search(a, 15, e10, 0, loc, &d, &p);
        } else {
            dec_printf_digits(a, 16, loc, &d, &p);
            if (!check_f64(d, p, a, loc))
                dec_printf_digits(a, 17, loc, &d, &p);
        }
    }
    return dec_emit(buf, signbit(v) != 0, d, p);
}
