/* The Ozaki scheme's plan, which the host reference
 * (kernels/reference/ozaki_cpu.c) and the tensor-core stage
 * (kernels/igemm/igemm_05_ozaki.cu) must agree on: the moduli, the bits a
 * row's largest value keeps, how many moduli a product of K takes, K a
 * piece; Garner's weights (the host reference's way back from residues)
 * and the Chinese remainder sum's constants (the stage's).  For C and
 * CUDA alike: the residues, ozaki_sym_mod and ozaki_crt_value run on
 * either side, and ozaki_crt_add is the sum a digit at a time as the
 * host sees it; tests/test_ozaki.c holds them to exact integers. */
#ifndef GC_OZAKI_H
#define GC_OZAKI_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Pairwise coprime moduli of at most 256 (256 = 2^8, 255 = 3 5 17, 253 =
 * 11 23, 247 = 13 19, 217 = 7 31, the rest primes), largest first: a
 * residue in [-p/2, p/2) is an int8. */
#define OZAKI_MODULI                                                                               \
    { 256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193, 191, 181,    \
      179, 173 }

enum {
    OZAKI_MOST = 20,       /* the moduli above */
    OZAKI_BETA = 54,       /* bits a row's largest value keeps (ozaki) */
    OZAKI_BETA32 = 28,     /* and for ozaki32: float's 24 and four more */
    OZAKI_PIECE = 65536,   /* K an int8 product at most: 128 * 128 * 65536 = 2^30 < 2^31 */
};

static inline int ozaki_modulus(int l)
{
    static const int moduli[OZAKI_MOST] = OZAKI_MODULI;
    return moduli[l];
}

/* The moduli a product of K needs for *beta bits a side: the fewest whose
 * product exceeds 2 K 2^(2 beta), or all of them (then *beta is cut). */
static inline int ozaki_count(int64_t k, int *beta)
{
    double need_k = log2((double)(k > 0 ? k : 1)) + 2;
    for (;;) {
        double bits = 0;
        for (int n = 0; n < OZAKI_MOST; n++) {
            bits += log2((double)ozaki_modulus(n));
            if (bits > 2.0 * *beta + need_k)
                return n + 1;
        }
        (*beta)--;
    }
}

/* The inverse of a modulo p (a and p coprime). */
static inline int ozaki_inverse(int a, int p)
{
    int r0 = p, r1 = ((a % p) + p) % p, t0 = 0, t1 = 1;
    while (r1) {
        int q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1;
        r1 = r;
        t0 = t1;
        t1 = t;
    }
    return ((t0 % p) + p) % p;
}

/* Garner's weights for the first nmod moduli: w[l] = (p_0 ... p_(l-1))^-1
 * modulo p_l. */
static inline void ozaki_weights(int nmod, int *w)
{
    for (int l = 0; l < nmod; l++) {
        int prod = 1;
        for (int q = 0; q < l; q++)
            prod = prod * ozaki_modulus(q) % ozaki_modulus(l);
        w[l] = ozaki_inverse(prod, ozaki_modulus(l));
    }
}

#ifdef __CUDACC__
#define OZAKI_HD static __host__ __device__ __forceinline__
#else
#define OZAKI_HD static inline
#endif

/* ---- residues ----
 *
 * An operand's scaled value x (|x| under 2^54, not yet rounded) modulo
 * each p, with no conversion instruction (a GPU's conversions run at a
 * quarter of its FP64 rate): X = rint(x) = h 2^27 + l, h and l integers
 * from two roundings by the 1.5 2^52 addend (|h| <= 2^27, |l| <= 2^26);
 * then for each p, t = h (2^27 modulo p) + l (|t| < 2^35, exact), q the
 * integer nearest t / p (exactly: t / p is 2^-25 or more from a
 * half-integer for odd p), and t - q p + 1.5 2^52, whose low byte is t
 * modulo p in [-(p-1)/2, (p-1)/2] for odd p, and modulo 256 for p = 256
 * (where a tie may leave 128, the same residue as -128).  Five FP64
 * operations a modulus. */

#define OZAKI_ROUNDER 6755399441055744.0   /* 1.5 2^52 */

struct ozaki_residues {
    double p[OZAKI_MOST], inv[OZAKI_MOST], c27[OZAKI_MOST];   /* p, 1/p, 2^27 modulo p */
};

static inline void ozaki_residues_of(struct ozaki_residues *r)
{
    for (int l = 0; l < OZAKI_MOST; l++) {
        int p = ozaki_modulus(l), c = (int)((1ll << 27) % p);
        r->p[l] = p;
        r->inv[l] = 1.0 / p;
        r->c27[l] = c > p / 2 ? c - p : c;
    }
}

/* rint(x) as h 2^27 + l. */
OZAKI_HD void ozaki_halves(double x, double *h, double *l)
{
    *h = fma(x, 0x1p-27, OZAKI_ROUNDER) - OZAKI_ROUNDER;
    *l = (fma(-*h, 0x1p27, x) + OZAKI_ROUNDER) - OZAKI_ROUNDER;
}

/* h 2^27 + l modulo p_l, in the low byte of the result's low word. */
OZAKI_HD double ozaki_residue(const struct ozaki_residues *r, int l, double h, double lo)
{
    double t = fma(h, r->c27[l], lo);
    double q = fma(t, r->inv[l], OZAKI_ROUNDER) - OZAKI_ROUNDER;
    return fma(-q, r->p[l], t + OZAKI_ROUNDER);
}

/* ---- the Chinese remainder sum ----
 *
 * C' (|C'| < P/4, P the moduli's product) from its residues d_l:
 * C' = S - k P with S = sum of y_l M_l, M_l = P / p_l, y_l = d_l (M_l^-1
 * modulo p_l) modulo p_l in [-p_l/2, p_l/2], and k the integer nearest
 * S / P.  Every M_l and P is cut into `parts` doubles on common grids
 * 2^(top - 40 j) (j = 1 .. parts; the first part of P keeps 48 bits, each
 * other part 40), so that each part's sum over up to 20 moduli of y_l
 * (|y_l| <= 128) times M_l's part stays an integer on its grid under 2^53:
 * exact.  k from the first parts alone (what the others add is under
 * 2^-30 of P), then the parts of S - k P (ozaki_crt_value).  O(L) a value
 * where Garner's mixed radix digits take O(L^2). */

enum {
    OZAKI_PARTS = 4,       /* 20 moduli: M_l under 2^150, four parts of 40 bits */
    OZAKI_PART_BITS = 40,
};

struct ozaki_crt {
    int nmod, parts;
    int inv[OZAKI_MOST], mod[OZAKI_MOST];  /* M_l^-1 modulo p_l, p_l */
    double m[OZAKI_MOST][OZAKI_PARTS];    /* M_l's parts */
    double p[OZAKI_PARTS];                /* P's parts */
    double grid[OZAKI_PARTS], ungrid[OZAKI_PARTS];   /* each part's unit, 2^lo, and 2^-lo */
    double inv_p;                         /* 1 / P, rounded */
};

/* Bits [lo, hi) of the little-endian integer x (words of 32 bits), lo >=
 * 0, hi - lo <= 52, as a double times 2^lo. */
static inline double ozaki_bits(const uint32_t *x, int words, int lo, int hi)
{
    uint64_t v = 0;
    for (int b = hi - 1; b >= lo; b--)
        v = v << 1 | (b / 32 < words ? x[b / 32] >> (b % 32) & 1 : 0);
    return ldexp((double)v, lo);
}

/* The constants of the sum over the first nmod moduli. */
static inline void ozaki_crt_of(int nmod, struct ozaki_crt *c)
{
    enum { WORDS = 6 };                   /* 192 bits: P under 2^158 */
    uint32_t big[OZAKI_MOST + 1][WORDS];  /* M_0 .. M_(nmod-1), then P */
    int top = 0;
    c->nmod = nmod;
    for (int l = 0; l <= nmod; l++) {
        uint32_t *x = big[l];
        for (int w = 0; w < WORDS; w++)
            x[w] = w == 0;
        for (int q = 0; q < nmod; q++) {
            if (q == l)
                continue;
            uint64_t carry = 0;
            for (int w = 0; w < WORDS; w++) {
                uint64_t t = (uint64_t)x[w] * (uint64_t)ozaki_modulus(q) + carry;
                x[w] = (uint32_t)t;
                carry = t >> 32;
            }
        }
        if (l < nmod) {
            int pl = ozaki_modulus(l), r = 1;
            for (int q = 0; q < nmod; q++)
                if (q != l)
                    r = r * ozaki_modulus(q) % pl;
            c->inv[l] = ozaki_inverse(r, pl);
            c->mod[l] = pl;
            for (int b = 32 * WORDS - 1; b >= 0; b--)
                if (x[b / 32] >> (b % 32) & 1) {
                    top = b + 1 > top ? b + 1 : top;
                    break;
                }
        }
    }
    c->parts = (top + OZAKI_PART_BITS - 1) / OZAKI_PART_BITS;
    for (int j = 0; j < OZAKI_PARTS; j++) {
        int hi = top - OZAKI_PART_BITS * j, lo = hi - OZAKI_PART_BITS;
        lo = lo > 0 ? lo : 0;
        c->grid[j] = ldexp(1.0, lo);
        c->ungrid[j] = ldexp(1.0, -lo);
        for (int l = 0; l <= nmod; l++) {
            /* (P's first part: its bits above M_l's top as well) */
            int h = l == nmod && j == 0 ? hi + 12 : hi;
            double v = j < c->parts && h > lo ? ozaki_bits(big[l], WORDS, lo, h) : 0.0;
            if (l < nmod)
                c->m[l][j] = v;
            else
                c->p[j] = v;
        }
    }
    double whole = 0;
    for (int j = c->parts - 1; j >= 0; j--)
        whole += c->p[j];
    c->inv_p = 1.0 / whole;
    for (int l = nmod; l < OZAKI_MOST; l++) {
        c->inv[l] = 0;
        c->mod[l] = 1;
        for (int j = 0; j < OZAKI_PARTS; j++)
            c->m[l][j] = 0;
    }
}

/* v as a double by its bits (1.5 2^52 + 2^31 + v, less the same), where
 * a conversion instruction would run at a quarter of the FP64 rate. */
OZAKI_HD double ozaki_int_double(int v)
{
    uint64_t bits = 0x4338000000000000ull | ((uint32_t)v ^ 0x80000000u);
    double b;
#ifdef __CUDA_ARCH__
    b = __longlong_as_double((long long)bits);
#else
    memcpy(&b, &bits, sizeof b);
#endif
    return b - 6755401588539392.0;
}

/* x w modulo p in [-p/2, p/2) (even p) or [-(p-1)/2, (p-1)/2] (odd), x
 * any int32, 0 <= w < p <= 256 and inv_p = 1/p rounded.  x w is exact in
 * a double (under 2^39); x w inv_p, rounded twice, lies within 2^-14 of
 * x w / p, which lies at least 1/p >= 2^-8 under any integer above it, so
 * q is floor(x w / p) or, where x w / p is an integer, one less (x = p
 * = 187 and w = 1 do it); x w - q p, exact in one FMA, is in [0, p], and
 * the centring takes p to 0 as it takes 0.  With w = M_l^-1 modulo p_l it
 * turns C' (or any representative of it modulo p_l) into the sum's digit
 * y: the int8 product's modular epilogue (kernels/igemm/igemm_03_igmma.cu)
 * writes y straight from its accumulators, for the sum to read as it is. */
OZAKI_HD int ozaki_sym_mod(int x, double w, int p, double inv_p)
{
    double v = (double)x * w, q = floor(v * inv_p);
    int r = (int)fma(-q, (double)p, v);
    return r >= (p + 1) / 2 ? r - p : r;
}

/* Residue d (any int representative of C' modulo p_l) added to the sums
 * s[parts]: y M_l, a part at a time. */
OZAKI_HD void ozaki_crt_add(const struct ozaki_crt *c, int l, int d, double *s)
{
    double y = ozaki_int_double(ozaki_sym_mod(d, c->inv[l], c->mod[l], 1.0 / c->mod[l]));
    for (int j = 0; j < OZAKI_PARTS; j++)
        if (j < c->parts)
            s[j] = fma(y, c->m[l][j], s[j]);
}

/* C' from the sums of every residue.  Each part's S - k P is exact; what
 * of each lies above the next part's unit is carried up into it (exactly:
 * every sum an integer on its grid under 2^53), so that each part is at
 * most half the unit of the part above and the parts' sum, smallest
 * first, is within an ulp of C' (exactly C' where C' fits a double). */
OZAKI_HD double ozaki_crt_value(const struct ozaki_crt *c, const double *s)
{
    double k = rint(s[0] * c->inv_p), t[OZAKI_PARTS], low = 0;
    for (int j = 0; j < OZAKI_PARTS; j++)
        t[j] = j < c->parts ? fma(-k, c->p[j], s[j]) : 0.0;
    for (int j = OZAKI_PARTS - 1; j > 0; j--)
        if (j < c->parts) {
            double carry = rint(t[j] * c->ungrid[j - 1]) * c->grid[j - 1];
            t[j - 1] += carry;
            t[j] -= carry;
        }
    for (int j = OZAKI_PARTS - 1; j > 0; j--)
        if (j < c->parts)
            low += t[j];
    return t[0] + low;
}

#endif
