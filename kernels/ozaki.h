/* The Ozaki scheme's plan, which the host reference
 * (kernels/reference/ozaki_cpu.c) and the tensor-core stage
 * (kernels/igemm/igemm_05_ozaki.cu) must agree on: the moduli, the bits a
 * row's largest value keeps, how many moduli a product of K takes, K a
 * piece, and Garner's weights.  Host code, for C and CUDA alike. */
#ifndef GC_OZAKI_H
#define GC_OZAKI_H

#include <math.h>
#include <stdint.h>

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

#endif
