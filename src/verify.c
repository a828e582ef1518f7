#include "verify.h"

#include <math.h>
#include <string.h>

#include "parallel.h"

/* One comparison for both reference precisions: exactly one of ref_f and
 * ref_d is non-NULL. */
static void compare(const float *got, const float *ref_f, const double *ref_d, size_t n,
                    struct gc_verify_result *v)
{
    double scale = 0, diff2 = 0, ref2 = 0, max_abs = 0, max_rel = 0;
    size_t got_only = 0, ref_only = 0, differ = 0;
    for (size_t i = 0; i < n; i++) {
        double r = ref_d ? ref_d[i] : ref_f[i];
        if (isfinite(r) && fabs(r) > scale)
            scale = fabs(r);
    }
    double rel_floor = scale * 1e-6;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], r = ref_d ? ref_d[i] : ref_f[i];
        if (!isfinite(g) || !isfinite(r)) {
            /* Non-finite values must agree exactly: NaN with NaN, an
             * infinity with the same infinity. */
            if (isfinite(r))
                got_only++;
            else if (isfinite(g))
                ref_only++;
            else if (!(isnan(g) && isnan(r)) && g != r)
                differ++;
            continue;
        }
        double d = fabs(g - r);
        diff2 += d * d;
        ref2 += r * r;
        if (d > max_abs)
            max_abs = d;
        if (fabs(r) > rel_floor && d / fabs(r) > max_rel)
            max_rel = d / fabs(r);
    }
    v->max_abs = max_abs;
    v->max_rel = max_rel;
    v->rel_fro = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    v->nonfinite_got = got_only;
    v->nonfinite_ref = ref_only;
    v->nonfinite_diff = differ;
    v->ok = !(got_only + ref_only + differ) && v->rel_fro <= v->tol;
    v->done = 1;
}

void verify_compare_f32(const float *got, const float *ref, size_t n,
                        struct gc_verify_result *v)
{
    compare(got, ref, NULL, n, v);
}

void verify_compare_f32_f64(const float *got, const double *ref, size_t n,
                            struct gc_verify_result *v)
{
    compare(got, NULL, ref, n, v);
}

struct dgemm_job {
    size_t n, k;
    double alpha, beta;
    const float *a, *b, *c0;
    double *c;
};

/* Rows [row0, row1) of C, in i-p-j order so that B and C are walked along rows. */
static void dgemm_rows(void *arg, size_t row0, size_t row1)
{
    const struct dgemm_job *j = arg;
    for (size_t i = row0; i < row1; i++) {
        double *crow = j->c + i * j->n;
        memset(crow, 0, j->n * sizeof *crow);
        for (size_t p = 0; p < j->k; p++) {
            double aip = j->a[i * j->k + p];
            const float *brow = j->b + p * j->n;
            for (size_t c = 0; c < j->n; c++)
                crow[c] += aip * brow[c];
        }
        for (size_t c = 0; c < j->n; c++)
            crow[c] = j->alpha * crow[c] + (j->c0 ? j->beta * j->c0[i * j->n + c] : 0.0);
    }
}

int verify_host_dgemm(size_t m, size_t n, size_t k, double alpha, const float *a,
                      const float *b, double beta, const float *c0, double *c,
                      int threads)
{
    struct dgemm_job job = { n, k, alpha, beta, a, b, beta != 0 ? c0 : NULL, c };
    parallel_for(threads, m, 1, dgemm_rows, &job);
    return 0;
}
