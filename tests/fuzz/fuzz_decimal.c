/* Number text both ways.  Parsing must agree bit for bit with strtof_l and
 * strtod_l on the span it accepts; formatting must read back exactly and,
 * at a fixed precision, give the value printf gives. */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/decimal.h"

static int same_f32(float a, float b)
{
    return isnan(a) ? isnan(b) : memcmp(&a, &b, 4) == 0;
}

static int same_f64(double a, double b)
{
    return isnan(a) ? isnan(b) : memcmp(&a, &b, 8) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    float f;
    double d;
    const char *e = dec_parse_f32(text, text + size, loc, &f);
    if (e) {
        char *ref_end;
        char saved = *e;
        *(char *)e = 0;
        float rf = strtof_l(text, &ref_end, loc);
        if (ref_end != e || !same_f32(f, rf))
            abort();
        if (dec_parse_f64(text, text + size, loc, &d) != e ||
            !same_f64(d, strtod_l(text, NULL, loc)))
            abort();
        *(char *)e = saved;
    }
    if (size >= 9) {
        char buf[DEC_MAX_TEXT + 1];
        memcpy(&f, data, 4);
        size_t n = dec_format_f32(f, 0, loc, buf);
        buf[n] = 0;
        if (n > DEC_MAX_TEXT || !same_f32(strtof_l(buf, NULL, loc), f))
            abort();
        memcpy(&d, data + 1, 8);
        n = dec_format_f64(d, 0, loc, buf);
        buf[n] = 0;
        if (n > DEC_MAX_TEXT || !same_f64(strtod_l(buf, NULL, loc), d))
            abort();
        int prec = 1 + data[0] % 17;
        if (isfinite(d)) {
            char ref[64];
            n = dec_format_f64(d, prec, loc, buf);
            buf[n] = 0;
            snprintf(ref, sizeof ref, "%.*e", prec - 1, d);
            if (n > DEC_MAX_TEXT || strtod_l(buf, NULL, loc) != strtod_l(ref, NULL, loc))
                abort();
        }
    }
    free(text);
    freelocale(loc);
    return 0;
}
