/* Unit tests of the Ozaki stage's residues and its way back from them
 * (kernels/ozaki.h, which i8_ozaki's passes run on the GPU), on the host:
 * each scaled value's residue modulo every modulus (the value rounded as
 * rint rounds it, the residue an int8 congruent to it, within
 * [-(p-1)/2, (p-1)/2] for odd p); every int8 digit's y (d M_l^-1 modulo
 * p_l, centred); and for every count of moduli, integers C' of every size
 * under P/4 (2^126 at most), from their residues in any int8
 * representative, must come back within one unit in the last place of
 * double (exactly, where C' has 53 bits or fewer); and the constants must
 * add up to M_l and P exactly.  Built by tests/tests.mk as
 * build/tests/test_ozaki. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/ozaki.h"
#include "tests/check.h"

typedef __int128 i128;

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    return check_xorshift(&state);
}

/* A value below 2^bits in magnitude, either sign. */
static i128 draw(int bits)
{
    unsigned __int128 u = ((unsigned __int128)next() << 64 | next());
    u = bits >= 128 ? u : u & (((unsigned __int128)1 << bits) - 1);
    i128 v = (i128)(u >> 1);
    return next() & 1 ? -v : v;
}

/* Whether x came back from C': within one ulp of x, and x an integer. */
static int close_to(double x, i128 want)
{
    if (x != rint(x) || fabs(x) >= ldexp(1, 127))
        return 0;
    i128 got = (i128)x, diff = got > want ? got - want : want - got;
    int e;
    frexp(x, &e);
    i128 ulp = e > 53 ? (i128)1 << (e - 53) : 1;
    return e > 53 ? diff <= ulp : diff == 0;
}

/* C' from its residues, one int8 representative each (shifted by p where
 * that stays in int8, as the product's digits may be). */
static double back(const struct ozaki_crt *c, i128 v)
{
    double s[OZAKI_PARTS] = { 0, 0, 0, 0 };
    for (int l = 0; l < c->nmod; l++) {
        int p = ozaki_modulus(l), d = (int)(v % p);
        d += d < -p / 2 ? p : 0;
        d -= d >= (p + 1) / 2 ? p : 0;
        if (next() & 1)
            d += d + p <= 127 ? p : d - p >= -128 ? -p : 0;
        ozaki_crt_add(c, l, d, s);
    }
    return ozaki_crt_value(c, s);
}

/* The residue's int8: the low byte of ozaki_residue's result. */
static int residue_byte(const struct ozaki_residues *r, int l, double x)
{
    double h, lo;
    ozaki_halves(x, &h, &lo);
    double v = ozaki_residue(r, l, h, lo);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return (int8_t)(uint8_t)bits;
}

static void residues(void)
{
    struct ozaki_residues r;
    ozaki_residues_of(&r);
    int bad = 0;
    for (int t = 0; t < 200000; t++) {
        /* integers and fractions (ties among them) of every size under
         * 2^54, and the largest */
        int bits = (int)(next() % 55);
        double x = ldexp((double)(next() >> 11), bits - 53);
        x = t % 4 == 1 ? floor(x) + 0.5 : t % 4 == 2 ? floor(x) : x;
        x = t < 4 ? 0x1p54 - 1 - t : x;
        x = next() & 1 ? -x : x;
        int64_t want = (int64_t)rint(x);
        for (int l = 0; l < OZAKI_MOST; l++) {
            int p = ozaki_modulus(l), got = residue_byte(&r, l, x);
            int64_t diff = ((int64_t)got - want) % p;
            int ok = diff == 0 && (p % 2 == 0 || (got >= -(p - 1) / 2 && got <= (p - 1) / 2));
            if (!ok && bad++ < 5)
                CHECK(0, "%.17g modulo %d: %d, want %lld modulo %d", x, p, got,
                      (long long)(want % p), p);
        }
    }
    CHECK(bad == 0, "residues: %d wrong", bad);
}

/* ozaki_sym_mod (the int8 product's modular epilogue, which writes the
 * sum's digits y) against exact integers: every p <= 256 and w < p, x at
 * int32's ends, at and beside multiples of p there (where the rounded
 * quotient can fall one short), and at random. */
static void sym_mods(void)
{
    long long wrong = 0, tried = 0;
    for (int p = 2; p <= 256; p++) {
        int xs[48], nx = 0;
        int ends[] = { INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX };
        for (int e = 0; e < 7; e++)
            xs[nx++] = ends[e];
        long long top = (long long)INT32_MAX / p * p, bottom = (long long)INT32_MIN / p * p;
        for (int d = -1; d <= 1; d++) {
            xs[nx++] = (int)(top - (d > 0 ? 0 : -d));
            xs[nx++] = (int)(bottom + (d < 0 ? 0 : d));
            xs[nx++] = p + d;
            xs[nx++] = -p + d;
            xs[nx++] = (int)((1ll << 30) / p * p + d);
        }
        while (nx < 48)
            xs[nx++] = (int)(uint32_t)next();
        for (int w = 0; w < p; w++)
            for (int i = 0; i < nx; i++) {
                long long r = (long long)xs[i] * w % p;
                r += r < 0 ? p : 0;
                r -= r >= (p + 1) / 2 ? p : 0;
                wrong += ozaki_sym_mod(xs[i], w, p, 1.0 / p) != r;
                tried++;
            }
    }
    CHECK(wrong == 0, "ozaki_sym_mod: %lld of %lld wrong", wrong, tried);
}

int main(void)
{
    int wrong = 0;
    for (int v = -70000; v <= 70000; v++)
        wrong += ozaki_int_double(v) != (double)v;
    wrong += ozaki_int_double(INT32_MAX) != (double)INT32_MAX;
    wrong += ozaki_int_double(INT32_MIN) != (double)INT32_MIN;
    CHECK(wrong == 0, "ozaki_int_double: %d integers wrong", wrong);
    residues();
    sym_mods();
    for (int nmod = 1; nmod <= OZAKI_MOST; nmod++) {
        struct ozaki_crt c;
        ozaki_crt_of(nmod, &c);
        /* P and each M_l exactly the sums of their parts (while they fit
         * 128 bits: 16 moduli), 1/P near 1/P, the inverses inverses. */
        double logp = 0;
        for (int l = 0; l < nmod; l++)
            logp += log2((double)ozaki_modulus(l));
        CHECK(c.parts >= 1 && c.parts <= OZAKI_PARTS, "%d moduli: %d parts", nmod, c.parts);
        CHECK(fabs(log2(1 / c.inv_p) - logp) < 1e-9, "%d moduli: 1/P is 2^%g, P 2^%g", nmod,
              log2(1 / c.inv_p), logp);
        for (int l = 0; l <= nmod && nmod <= 16; l++) {
            unsigned __int128 m = 1, sum = 0;
            for (int q = 0; q < nmod; q++)
                m *= q == l ? 1 : (unsigned)ozaki_modulus(q);
            for (int j = 0; j < c.parts; j++)
                sum += (unsigned __int128)(l < nmod ? c.m[l][j] : c.p[j]);
            CHECK(sum == m, "%d moduli: %s%d's parts do not sum to it", nmod,
                  l < nmod ? "M_" : "P (", l);
            if (l < nmod)
                CHECK((int)(m % (unsigned)ozaki_modulus(l)) * c.inv[l] % ozaki_modulus(l) == 1,
                      "%d moduli: M_%d's inverse %d", nmod, l, c.inv[l]);
        }
        /* C' of every size up to P/4 (or 2^126), and the edges. */
        int most = (int)floor(logp) - 2;
        most = most < 126 ? most : 126;
        int bad = 0;
        for (int t = 0; t < 4000; t++) {
            int bits = 1 + (int)(next() % (unsigned)(most > 1 ? most : 1));
            i128 v = draw(bits + 1);
            if (!close_to(back(&c, v), v) && bad++ < 3)
                CHECK(0, "%d moduli: C' of %d bits (%.17g) came back as %.17g", nmod, bits,
                      (double)v, back(&c, v));
        }
        /* C' that a double holds exactly (53 bits, shifted: the products
         * of integer operands scaled up) must come back exactly. */
        int inexact = 0;
        for (int t = 0; t < 1000; t++) {
            int bits = 1 + (int)(next() % (unsigned)(most < 53 ? most : 53));
            int shift = (int)(next() % (unsigned)(most - bits + 1));
            i128 v = draw(bits + 1) * ((i128)1 << shift);
            inexact += back(&c, v) != (double)v;
        }
        CHECK(inexact == 0, "%d moduli: %d of 1000 values a double holds came back inexact",
              nmod, inexact);
        i128 edge = ((i128)1 << most) - 1;
        i128 edges[] = { 0, 1, -1, 127, -128, edge, -edge };
        for (unsigned e = 0; e < sizeof edges / sizeof *edges; e++)
            if (edges[e] <= edge && edges[e] >= -edge)
                    CHECK(close_to(back(&c, edges[e]), edges[e]),
                      "%d moduli: C' = %.17g came back as %.17g", nmod, (double)edges[e],
                      back(&c, edges[e]));
        CHECK(bad == 0, "%d moduli: %d of 4000 values wrong", nmod, bad);
    }
    printf("test_ozaki: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
