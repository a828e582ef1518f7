#include "src/job/verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"

static double got_at(const struct gc_tensor *t, size_t i)
{
    switch (t->dtype) {
    case GC_F32: return ((const float *)t->data)[i];
    case GC_F64: return ((const double *)t->data)[i];
    case GC_F16: return gc_half_to_float(((const uint16_t *)t->data)[i]);
    default: return (double)gc_tensor_get(t, i);
    }
}

/* The largest finite |ref[i]|. */
static double largest_finite(const double *ref, size_t n)
{
    double most = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > most)
            most = fabs(ref[i]);
    return most;
}

/* e with 2^e at or just below the largest magnitude (0 for 0), kept
 * within +-1022 so that 2^-e is a double: the errors and references are
 * multiplied by 2^-e (exactly) before they are squared, so that the sums
 * of squares neither underflow (values near 1e-154 and below,
 * subnormals) nor overflow (near 1e154 and above). */
static int square_exp(double largest)
{
    int e = largest > 0 && isfinite(largest) ? ilogb(largest) : 0;
    return e < -1022 ? -1022 : e > 1022 ? 1022 : e;
}

void verify_compare_float(const struct gc_tensor *got, const double *ref,
                          struct gc_verify_result *v)
{
    size_t n = gc_tensor_count(got);
    double diff2 = 0, ref2 = 0, max_abs = 0, max_rel = 0;
    size_t got_only = 0, ref_only = 0, differ = 0;
    double scale = largest_finite(ref, n), rel_floor = scale * 1e-6;
    int e = square_exp(scale);
    double unit = ldexp(1.0, -e);
    for (size_t i = 0; i < n; i++) {
        double g = got_at(got, i), r = ref[i];
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
        double d = fabs(g - r), ds = d * unit, rs = r * unit;
        diff2 += ds * ds;
        ref2 += rs * rs;
        if (d > max_abs)
            max_abs = d;
        if (fabs(r) > rel_floor && d / fabs(r) > max_rel)
            max_rel = d / fabs(r);
    }
    v->exact = 0;
    v->count = n;
    v->square_exp = e;
    verify_settle_float(v, max_abs, max_rel, diff2, ref2, got_only, ref_only, differ);
}

void verify_add_squares(double *diff2, double *ref2, int *exp, double more_diff2,
                        double more_ref2, int more_exp)
{
    if (more_ref2 == 0 && more_diff2 == 0)
        return;
    if (*ref2 == 0 && *diff2 == 0) {
        *diff2 = more_diff2;
        *ref2 = more_ref2;
        *exp = more_exp;
        return;
    }
    if (more_exp > *exp) {
        *diff2 = ldexp(*diff2, 2 * (*exp - more_exp));
        *ref2 = ldexp(*ref2, 2 * (*exp - more_exp));
        *exp = more_exp;
    } else {
        more_diff2 = ldexp(more_diff2, 2 * (more_exp - *exp));
        more_ref2 = ldexp(more_ref2, 2 * (more_exp - *exp));
    }
    *diff2 += more_diff2;
    *ref2 += more_ref2;
}

void verify_settle_float(struct gc_verify_result *v, double max_abs, double max_rel,
                         double diff2, double ref2, size_t got_only, size_t ref_only,
                         size_t differ)
{
    v->max_abs = max_abs;
    v->max_rel = max_rel;
    v->rel_fro = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    v->diff2 = diff2;
    v->ref2 = ref2;
    v->nonfinite_got = got_only;
    v->nonfinite_ref = ref_only;
    v->nonfinite_diff = differ;
    v->ok = !(got_only + ref_only + differ) && v->rel_fro <= v->tol;
    v->done = 1;
}

void verify_compare_exact(const struct gc_tensor *got, const void *ref,
                          struct gc_verify_result *v)
{
    size_t n = gc_tensor_count(got), es = gc_dtypes[got->dtype].size, bad = 0;
    const unsigned char *g = got->data, *r = ref;
    for (size_t i = 0; i < n; i++)
        bad += memcmp(g + i * es, r + i * es, es) != 0;
    v->exact = 1;
    v->count = n;
    v->mismatches = bad;
    v->max_abs = v->max_rel = v->rel_fro = 0;
    v->ok = bad == 0;
    v->done = 1;
}

/* x as the float dtype `as` holds it: rounded to nearest even once, as
 * the device converts a product's C into its result (kernels/convert.h). */
static double stored_as(double x, enum gc_dtype as)
{
    switch (as) {
    case GC_F16: return gc_half_to_float(gc_double_to_half(x));
    case GC_BF16: return gc_bf16_to_float(gc_double_to_bf16(x));
    case GC_F32: return (float)x;
    default: return x;
    }
}

void verify_errors(const void *x, enum gc_dtype dt, enum gc_dtype as, const double *ref,
                   size_t n, double *rel_fro, double *max_rel)
{
    double diff2 = 0, ref2 = 0, worst = 0, scale = largest_finite(ref, n);
    double unit = ldexp(1.0, -square_exp(scale));
    for (size_t i = 0; i < n; i++) {
        double g = stored_as(dt == GC_F64 ? ((const double *)x)[i] : ((const float *)x)[i], as);
        if (!isfinite(g) || !isfinite(ref[i]))
            continue;
        double d = fabs(g - ref[i]), ds = d * unit, rs = ref[i] * unit;
        diff2 += ds * ds;
        ref2 += rs * rs;
        if (fabs(ref[i]) > scale * 1e-6 && d / fabs(ref[i]) > worst)
            worst = d / fabs(ref[i]);
    }
    *rel_fro = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    *max_rel = worst;
}

struct ref_job {
    const struct matmul_plan *plan;
    const long double *a, *b;        /* floats */
    const uint64_t *ia, *ib;         /* integers, by their bits */
    const struct gc_tensor *c0;
    double alpha, beta;
    uint64_t ialpha, ibeta;
    void *out;
};

/* Rows [begin, end) of the stack's products laid end to end, i-k-j. */
static void ref_rows(void *arg, size_t begin, size_t end)
{
    const struct ref_job *j = arg;
    const struct matmul_plan *pl = j->plan;
    int64_t m = pl->m, n = pl->n, k = pl->k;
    long double *acc = malloc(sizeof *acc * (size_t)(n ? n : 1));
    uint64_t *iacc = malloc(sizeof *iacc * (size_t)(n ? n : 1));
    if (!acc || !iacc) {
        free(acc);
        free(iacc);
        return;
    }
    for (size_t r = begin; r < end; r++) {
        int64_t p = (int64_t)r / m, i = (int64_t)r % m;
        int64_t outer = p / pl->inner, in = p % pl->inner, oa, ob, oc;
        matmul_launch_offsets(pl, outer, &oa, &ob, &oc);
        oa += in * pl->inner_sa;
        ob += in * pl->inner_sb;
        oc += in * m * n;
        {
            size_t row = (size_t)(oc + i * n);
            if (!pl->exact) {
                for (int64_t c = 0; c < n; c++)
                    acc[c] = 0;
                for (int64_t q = 0; q < k; q++) {
                    long double av = j->a[oa + i * k + q];
                    const long double *brow = j->b + ob + q * n;
                    for (int64_t c = 0; c < n; c++)
                        acc[c] += av * brow[c];
                }
                for (int64_t c = 0; c < n; c++) {
                    long double r = j->alpha * acc[c];
                    if (j->beta != 0)
                        r += j->beta * (long double)gc_tensor_get(j->c0, row + (size_t)c);
                    ((double *)j->out)[row + (size_t)c] = (double)r;
                }
            } else {
                memset(iacc, 0, sizeof *iacc * (size_t)n);
                for (int64_t q = 0; q < k; q++) {
                    uint64_t av = j->ia[oa + i * k + q];
                    const uint64_t *brow = j->ib + ob + q * n;
                    for (int64_t c = 0; c < n; c++)
                        iacc[c] += av * brow[c];
                }
                size_t es = gc_dtypes[pl->result].size;
                for (int64_t c = 0; c < n; c++) {
                    uint64_t r = j->ialpha * iacc[c];
                    if (j->ibeta)
                        r += j->ibeta * matmul_int_at(j->c0, row + (size_t)c);
                    if (pl->result == GC_BOOL)
                        r = r != 0;
                    /* Truncation to the result's width is its low bytes. */
                    memcpy((char *)j->out + (row + (size_t)c) * es, &r, es);
                }
            }
        }
    }
    free(acc);
    free(iacc);
}

/* Every element of t as a long double, or (ints) as its 64-bit pattern. */
static void *widen(const struct gc_tensor *t, int as_int)
{
    size_t n = gc_tensor_count(t);
    void *w = malloc((n ? n : 1) * (as_int ? sizeof(uint64_t) : sizeof(long double)));
    if (!w)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!as_int) {
            ((long double *)w)[i] = gc_tensor_get(t, i);
        } else {
            ((uint64_t *)w)[i] = matmul_int_at(t, i);
        }
    }
    return w;
}

int verify_host_reference(const struct matmul_plan *plan, const struct gc_tensor *a,
                          const struct gc_tensor *b, const struct gc_tensor *c0, double alpha,
                          double beta, int threads, void *out)
{
    struct ref_job j = { plan, NULL, NULL, NULL, NULL, c0, alpha, beta,
                         (uint64_t)plan->alpha_i, (uint64_t)plan->beta_i, out };
    void *wa = widen(a, plan->exact), *wb = widen(b, plan->exact);
    if (!wa || !wb) {
        free(wa);
        free(wb);
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the reference product");
    }
    if (plan->exact) {
        j.ia = wa;
        j.ib = wb;
    } else {
        j.a = wa;
        j.b = wb;
    }
    if (!c0 || beta == 0) {
        j.beta = 0;
        j.ibeta = 0;
    }
    parallel_for(threads, (size_t)(plan->batch * plan->m), 1, ref_rows, &j);
    free(wa);
    free(wb);
    return 0;
}

/* ---- the references ---- */

static size_t result_count(const struct verify_product *vp)
{
    return gc_tensor_count(vp->result);
}

static int beside_usable(const struct verify_product *vp)
{
    return vp->beside != NULL;
}

/* Float64 products, native or from int8 ones (ozaki), which cuBLAS DGEMM
 * cannot check: it has float64's error itself. */
static int dd_usable(const struct verify_product *vp)
{
    return vp->device_fp64 && !vp->plan->exact &&
           (vp->sig == GEMM_F64 || vp->sig == GEMM_OZAKI);
}

static int dgemm_exact_usable(const struct verify_product *vp)
{
    return vp->device_fp64 && vp->plan->exact && vp->f64_exact;
}

static int dgemm_usable(const struct verify_product *vp)
{
    return vp->device_fp64 && !vp->plan->exact;
}

static int host_exact_usable(const struct verify_product *vp)
{
    return vp->plan->exact && vp->a && vp->b;
}

static int host_float_usable(const struct verify_product *vp)
{
    return !vp->plan->exact && vp->a && vp->b;
}

/* An integer result from exact sums (int64 or integral doubles) the way
 * the product's own: alpha, beta and C0 applied modulo 2^64, wrapped to
 * the result's dtype. */
static void integer_from_sums(const struct verify_product *vp, const void *sums,
                              enum gc_dtype type, void *out)
{
    const struct matmul_plan *pl = vp->plan;
    matmul_integer_result(sums, type, pl->alpha_i, pl->beta_i, vp->c0, result_count(vp), out,
                          pl->result);
}

static int beside_make(const struct verify_product *vp, void *out, const void **ref)
{
    if (!vp->plan->exact) {
        *ref = vp->beside;
        return 0;
    }
    integer_from_sums(vp, vp->beside, vp->beside_type, out);
    *ref = out;
    return 0;
}

static int device_make(const struct verify_product *vp, int dd, void *out, const void **ref)
{
    size_t n = result_count(vp);
    double *d = vp->plan->exact ? malloc((n ? n : 1) * sizeof *d) : out;
    if (!d)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
    int rc = vp->device_fp64(vp->device_arg, dd, d);
    if (!rc && vp->plan->exact)
        integer_from_sums(vp, d, GC_F64, out);
    if (d != out)
        free(d);
    *ref = out;
    return rc;
}

static int dd_make(const struct verify_product *vp, void *out, const void **ref)
{
    return device_make(vp, 1, out, ref);
}

static int dgemm_make(const struct verify_product *vp, void *out, const void **ref)
{
    return device_make(vp, 0, out, ref);
}

static int host_make(const struct verify_product *vp, void *out, const void **ref)
{
    *ref = out;
    return verify_host_reference(vp->plan, vp->a, vp->b, vp->c0, vp->alpha, vp->beta,
                                 vp->threads, out);
}

struct verify_reference {
    const char *words;            /* the report's; NULL: the executor's */
    const char *phase;            /* the progress line's; NULL: none */
    int (*usable)(const struct verify_product *vp);
    int (*make)(const struct verify_product *vp, void *out, const void **ref);
};

/* In order of preference: the first usable one checks the product. */
static const struct verify_reference verify_references[] = {
    { NULL, NULL, beside_usable, beside_make },
    { "double-double (ref_ddgemm, the operands as read)", "checking against an FP64 product",
      dd_usable, dd_make },
    { "exact (cuBLAS DGEMM below 2^53)", "checking against an FP64 product",
      dgemm_exact_usable, dgemm_make },
    { "fp64 (cuBLAS DGEMM of the operands as read)", "checking against an FP64 product",
      dgemm_usable, dgemm_make },
    { "exact (cpu, modulo 2^64)", "checking against the exact product", host_exact_usable,
      host_make },
    { "cpu (long double)", "checking against a long double product", host_float_usable,
      host_make },
};

/* The timed library's errors as the result's dtype stores its output, so
 * that they carry the same output rounding as the result's own; where that
 * rounding narrows the output (a 16-bit result of FP32 accumulation), also
 * as it came out: what the arithmetic itself costs. */
static void verify_timed(const struct verify_product *vp, const double *ref,
                         struct gc_verify_result *v)
{
    enum gc_dtype as = vp->result->dtype, out = vp->timed_type;
    size_t n = result_count(vp);
    verify_errors(vp->timed, out, as, ref, n, &v->timed_rel_fro, &v->timed_max_rel);
    v->timed_as = gc_dtypes[as].name;
    if (gc_dtypes[as].size < gc_dtypes[out].size) {
        verify_errors(vp->timed, out, out, ref, n, &v->timed_acc_rel_fro, &v->timed_acc_max_rel);
        v->timed_acc_dtype = gc_dtypes[out].name;
    }
}

int verify_product(const struct verify_product *vp, struct gc_verify_result *v)
{
    const struct verify_reference *r = NULL;
    size_t n_refs = sizeof verify_references / sizeof verify_references[0];
    for (size_t i = 0; i < n_refs && !r; i++)
        if (verify_references[i].usable(vp))
            r = &verify_references[i];
    if (!r)
        return gc_fail(GC_EXIT_INPUT, "no reference can check this product: its operands "
                       "are no longer in host memory");
    int exact = vp->plan->exact;
    size_t n = result_count(vp);
    void *out = malloc((n ? n : 1) * (exact ? gc_dtypes[vp->plan->result].size : sizeof(double)));
    if (!out)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the reference product");
    if (r->phase && vp->progress)
        progress_phase(vp->progress, "%s", r->phase);
    v->reference = r->words ? r->words : vp->beside_words;
    v->timed_rel_fro = -1;
    v->timed_as = v->timed_acc_dtype = NULL;
    const void *ref = NULL;
    int rc = r->make(vp, out, &ref);
    if (!rc && exact) {
        verify_compare_exact(vp->result, ref, v);
    } else if (!rc) {
        verify_compare_float(vp->result, ref, v);
        if (vp->timed)
            verify_timed(vp, ref, v);
    }
    free(out);
    return rc;
}
