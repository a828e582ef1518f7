/* ozaki on the host: float64 products from int8 ones (Ozaki scheme II),
 * for `--compute ozaki --kernel cpu`, the reference the tensor-core
 * version is held to, and the accuracy study's (tests/ozaki_test.py).
 *
 * Each row i of A is scaled by a power of two 2^s_i so that its largest
 * magnitude is just under 2^beta and rounded to integers, A'; each column
 * j of B likewise by 2^t_j, B'.  The integer product C' = A' B' is exact
 * once it is known modulo enough coprime moduli p (each at most 256, so
 * that a residue in [-p/2, p/2) is an int8): the moduli's product P
 * exceeds 2 K 2^(2 beta) > 2 |C'|, and the residues of C' modulo each p
 * come from an int8 product of the residues of A' and B' (int32 sums, K
 * cut into pieces short enough that no sum leaves int32: 128 x 128 x
 * 65536 = 2^30).  Garner's algorithm turns the residues into C' as mixed
 * radix digits in [-p/2, p/2), which sum, most significant first, in long
 * double (64 bits of mantissa) to C' in (-P/2, P/2); C = C' 2^-(s_i + t_j),
 * rounded once to double.
 *
 * ozaki32, for float operands, keeps beta = 28 bits (float's 24 and four
 * more), which takes fewer moduli (9 at K = 8192 against 16), and rounds
 * C once to float.
 *
 * What is lost is the rounding of A and B to beta bits under each row's
 * and column's largest value: beta is 54 here, so a row of values of one
 * magnitude keeps every bit of a double, while a value 2^20 under its
 * row's largest keeps 34.  Data whose rows span a wide range of exponents
 * lose that much (the accuracy study says how much); float64 GEMM does
 * not.  Rows of A and columns of B that hold an infinity or a NaN are
 * computed as float64 GEMM computes them (double sums), as the issue of
 * inf * 0 and inf - inf asks.
 *
 * gemmcli's own; the method is Ozaki, Uchino and Imamura's scheme II (the
 * Chinese remainder theorem over int8 products), Garner's algorithm for
 * the mixed radix form.
 *
 * Run and checked by (a.npy and b.npy float64):
 *   gemmcli mul a.npy b.npy -o c.npy --compute ozaki --kernel cpu --verify */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ozaki.h"
#include "kernels/registry.h"

void gemm_cpu(const struct gemm_problem *p, int threads);

static const int oz_moduli[] = OZAKI_MODULI;
enum {
    OZ_MOST = OZAKI_MOST,
    OZ_BETA = OZAKI_BETA,
    OZ_BETA32 = OZAKI_BETA32,
    OZ_CHUNK_K = OZAKI_PIECE,
};

/* x modulo p in [-p/2, p/2) (p even) or [-(p-1)/2, (p-1)/2] (p odd). */
static int64_t oz_sym(int64_t x, int64_t p)
{
    int64_t r = x % p;
    if (r < 0)
        r += p;
    return r >= (p + 1) / 2 ? r - p : r;
}

/* The power of two that brings the largest finite magnitude of n values
 * `stride` apart just under 2^beta (0 for none). */
static int oz_shift(const double *x, int64_t n, int64_t stride, int beta)
{
    double most = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(x[i * stride]);
        if (isfinite(v) && v > most)
            most = v;
    }
    if (most == 0)
        return 0;
    int e;
    frexp(most, &e);
    return beta - e;
}

static int oz_finite(const double *x, int64_t n, int64_t stride)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i * stride]))
            return 0;
    return 1;
}

/* One product of the stack: A m x k (rows lda apart), B k x n (ldb), C m x n
 * (ldc), C = alpha A B (+ beta C). */
static int oz_product(const struct gemm_problem *p, const double *a, const double *b, double *c,
                      int beta_bits, int threads)
{
    int64_t m = p->m, n = p->n, k = p->k;
    int nmod = ozaki_count(k, &beta_bits);
    int *s = malloc((size_t)m * sizeof *s), *t = malloc((size_t)n * sizeof *t);
    char *row_ok = malloc((size_t)m), *col_ok = malloc((size_t)n);
    int64_t *ai = malloc((size_t)(m * k + 1) * sizeof *ai);
    int64_t *bi = malloc((size_t)(k * n + 1) * sizeof *bi);
    int8_t *ra = malloc((size_t)(m * k + 1)), *rb = malloc((size_t)(k * n + 1));
    int32_t *part = malloc((size_t)(m * n + 1) * sizeof *part);
    int64_t *sum = malloc((size_t)(m * n + 1) * sizeof *sum);
    int16_t *res = malloc((size_t)(m * n * nmod + 1) * sizeof *res);
    int ok = s && t && row_ok && col_ok && ai && bi && ra && rb && part && sum && res;
    if (ok) {
        /* A' and B': rows and columns scaled and rounded (non-finite values
         * as zeros: their rows and columns are computed apart below). */
        for (int64_t i = 0; i < m; i++) {
            const double *row = a + i * p->lda;
            s[i] = oz_shift(row, k, 1, beta_bits);
            row_ok[i] = (char)oz_finite(row, k, 1);
            for (int64_t q = 0; q < k; q++)
                ai[i * k + q] = isfinite(row[q]) ? llrint(ldexp(row[q], s[i])) : 0;
        }
        for (int64_t j = 0; j < n; j++) {
            t[j] = oz_shift(b + j, k, p->ldb, beta_bits);
            col_ok[j] = (char)oz_finite(b + j, k, p->ldb);
            for (int64_t q = 0; q < k; q++) {
                double v = b[q * p->ldb + j];
                bi[q * n + j] = isfinite(v) ? llrint(ldexp(v, t[j])) : 0;
            }
        }
        /* C' modulo each p: int8 products of the residues, K in pieces. */
        for (int l = 0; l < nmod; l++) {
            int64_t pm = oz_moduli[l];
            for (int64_t e = 0; e < m * k; e++)
                ra[e] = (int8_t)oz_sym(ai[e], pm);
            for (int64_t e = 0; e < k * n; e++)
                rb[e] = (int8_t)oz_sym(bi[e], pm);
            memset(sum, 0, (size_t)(m * n) * sizeof *sum);
            for (int64_t k0 = 0; k0 < k; k0 += OZ_CHUNK_K) {
                struct gemm_problem q;
                memset(&q, 0, sizeof q);
                q.sig = GEMM_I8;
                q.m = m;
                q.n = n;
                q.k = k - k0 < OZ_CHUNK_K ? k - k0 : OZ_CHUNK_K;
                q.lda = k;
                q.ldb = n;
                q.ldc = n;
                q.batch = 1;
                q.stride_c = m * n;
                q.alpha = 1;
                q.a = ra + k0;
                q.b = rb + k0 * n;
                q.c = part;
                gemm_cpu(&q, threads);
                for (int64_t e = 0; e < m * n; e++)
                    sum[e] += part[e];
            }
            for (int64_t e = 0; e < m * n; e++)
                res[e * nmod + l] = (int16_t)oz_sym(sum[e], pm);
        }
        /* Garner: digits v_l in [-p_l/2, p_l/2) with C' = v_0 + p_0 (v_1 +
         * p_1 (v_2 + ...)); w[l] = (p_0 ... p_(l-1))^-1 modulo p_l. */
        int w[OZ_MOST];
        ozaki_weights(nmod, w);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double *out = c + i * p->ldc + j;
                long double x;
                if (row_ok[i] && col_ok[j]) {
                    const int16_t *r = res + (i * n + j) * nmod;
                    int64_t v[OZ_MOST];
                    for (int l = 0; l < nmod; l++) {
                        int64_t pm = oz_moduli[l], acc = 0;
                        for (int q = l - 1; q >= 0; q--)
                            acc = (v[q] + oz_moduli[q] * acc) % pm;
                        v[l] = oz_sym((r[l] - acc) % pm * w[l], pm);
                    }
                    x = 0;
                    for (int l = nmod - 1; l >= 0; l--)
                        x = (long double)v[l] + (long double)oz_moduli[l] * x;
                    x = ldexpl(x, -(s[i] + t[j]));
                } else {
                    /* (a row or column with an infinity or a NaN: as float64
                     * GEMM sums it) */
                    double d = 0;
                    for (int64_t q = 0; q < k; q++)
                        d += a[i * p->lda + q] * b[q * p->ldb + j];
                    x = d;
                }
                double v = (double)x;
                *out = p->beta == 0 ? p->alpha * v : p->alpha * v + p->beta * *out;
            }
    }
    free(s);
    free(t);
    free(row_ok);
    free(col_ok);
    free(ai);
    free(bi);
    free(ra);
    free(rb);
    free(part);
    free(sum);
    free(res);
    return ok ? 0 : -1;
}

/* ozaki32: one float product through doubles (the float operands are
 * doubles exactly; C rounded once to float after alpha and beta). */
static int oz_product32(const struct gemm_problem *p, const float *a, const float *b, float *c,
                        int threads)
{
    int64_t m = p->m, n = p->n, k = p->k;
    double *da = malloc((size_t)(m * k + 1) * sizeof *da);
    double *db = malloc((size_t)(k * n + 1) * sizeof *db);
    double *dc = malloc((size_t)(m * n + 1) * sizeof *dc);
    int rc = -1;
    if (da && db && dc) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t q = 0; q < k; q++)
                da[i * k + q] = a[i * p->lda + q];
        for (int64_t q = 0; q < k; q++)
            for (int64_t j = 0; j < n; j++)
                db[q * n + j] = b[q * p->ldb + j];
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                dc[i * n + j] = p->beta == 0 ? 0 : c[i * p->ldc + j];
        struct gemm_problem q = *p;
        q.lda = k;
        q.ldb = n;
        q.ldc = n;
        rc = oz_product(&q, da, db, dc, OZ_BETA32, threads);
        for (int64_t i = 0; i < m && rc == 0; i++)
            for (int64_t j = 0; j < n; j++)
                c[i * p->ldc + j] = (float)dc[i * n + j];
    }
    free(da);
    free(db);
    free(dc);
    return rc;
}

/* (kernels/reference/gemm_cpu.c calls it for GEMM_OZAKI and GEMM_OZAKI32) */
int ozaki_cpu(const struct gemm_problem *p, int threads)
{
    for (int64_t z = 0; z < p->batch; z++) {
        int rc;
        if (p->sig == GEMM_OZAKI32)
            rc = oz_product32(p, (const float *)p->a + z * p->stride_a,
                              (const float *)p->b + z * p->stride_b,
                              (float *)p->c + z * p->stride_c, threads);
        else
            rc = oz_product(p, (const double *)p->a + z * p->stride_a,
                            (const double *)p->b + z * p->stride_b,
                            (double *)p->c + z * p->stride_c, OZ_BETA, threads);
        if (rc)
            return -1;
    }
    return 0;
}
