/* --verify's figure for the library timed beside a product
 * (src/job/verify.c), without a GPU: a reference, a result and the
 * library's output made up on the host and checked through
 * verify_product.  The library's errors must be measured as the result's
 * dtype stores its output, rounded to nearest even as the result is, so
 * that both carry the same output rounding; where that rounding narrows the
 * output (float32 beside a float16 or bfloat16 result, float64 beside
 * float32), its errors before the rounding are given too, and the summary
 * and --json label both.  The rounding here is the compiler's _Float16 and
 * bfloat16 by its bits, not gemmcli's.  Prints 'test_verify: N passed, M
 * failed'. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/job/report.h"
#include "src/job/verify.h"
#include "tests/check.h"


static uint64_t rng = 88172645463325252ull;

/* Uniform in [-1, 1). */
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

static uint16_t f16_bits(double x)
{
    _Float16 h = (_Float16)x;
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}

static double f16_value(double x)
{
    return (double)(_Float16)x;
}

/* bfloat16, nearest even, from a float's bits (tests/bf16.py's rule). */
static uint16_t bf16_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

static double bf16_value(float x)
{
    uint32_t b = (uint32_t)bf16_bits(x) << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* ||got - ref|| / ||ref|| over the elements finite in both. */
static double rel_fro(const double *got, const double *ref, size_t n)
{
    double d2 = 0, r2 = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i]) || !isfinite(ref[i]))
            continue;
        d2 += (got[i] - ref[i]) * (got[i] - ref[i]);
        r2 += ref[i] * ref[i];
    }
    return sqrt(d2 / r2);
}

static int close_to(double x, double want)
{
    return fabs(x - want) <= 1e-12 * fabs(want) + 1e-300;
}

/* One product's check: a 1 x n result of `result_type` (its bits in
 * `result`), the reference `ref`, the library's output `timed` of
 * `timed_type`. */
static void check_product(enum gc_dtype result_type, void *result, const double *ref,
                          const void *timed, enum gc_dtype timed_type, size_t n,
                          struct gc_verify_result *v)
{
    struct gc_tensor a = { 0 }, b = { 0 }, c = { 0 };
    a.dtype = b.dtype = result_type;
    gc_tensor_set_2d(&a, 1, 4);
    gc_tensor_set_2d(&b, 4, n);
    struct matmul_plan mm;
    int rc = matmul_plan(&a, &b, COMPUTE_AUTO, "A", "B", &mm);
    CHECK(rc == 0 && !mm.exact, "matmul_plan 1x%zux4 %s: status %d", n,
          gc_dtypes[result_type].name, rc);
    c.dtype = result_type;
    c.data = result;
    gc_tensor_set_2d(&c, 1, n);
    struct verify_product vp = { 0 };
    vp.plan = &mm;
    vp.sig = mm.sigs[0];
    vp.result = &c;
    vp.alpha = 1;
    vp.threads = 1;
    vp.beside = ref;
    vp.beside_type = GC_F64;
    vp.beside_words = "made up";
    vp.timed = timed;
    vp.timed_type = timed_type;
    memset(v, 0, sizeof *v);
    v->tol = 1;
    v->timed = "cublas";
    rc = verify_product(&vp, v);
    CHECK(rc == 0 && v->done, "verify_product: status %d", rc);
}

/* Values at the float16 midpoints and edges: the library's float32 output
 * is the reference itself, the result the reference rounded to float16,
 * so that at the same output dtype the two are the same numbers. */
static void float16_ties(void)
{
    static const struct { double x, rounded; } cases[] = {
        { 1 + 0x1p-11, 1 },                  /* a tie: to the even 1.0 */
        { 1 + 3 * 0x1p-11, 1 + 0x1p-9 },     /* a tie: to the even above */
        { -(1 + 0x1p-11), -1 },
        { 2049, 2048 },                      /* ulp 2 */
        { 2051, 2052 },
        { 1 + 0x1p-12, 1 },                  /* below the midpoint */
        { 3 * 0x1p-25, 0x1p-23 },            /* subnormals: a tie to even */
        { 0x1p-25, 0 },
        { 65519, 65504 },                    /* the largest finite */
        { (double)0.1f, 0.0999755859375 },
    };
    enum { N = sizeof cases / sizeof cases[0] };
    double ref[N], rounded[N];
    float timed[N];
    uint16_t result[N];
    for (int i = 0; i < N; i++) {
        ref[i] = cases[i].x;
        timed[i] = (float)cases[i].x;
        rounded[i] = cases[i].rounded;
        result[i] = f16_bits(cases[i].x);
        CHECK(f16_value(cases[i].x) == cases[i].rounded, "the test's own f16 of %.17g: %.17g",
              cases[i].x, f16_value(cases[i].x));
    }
    struct gc_verify_result v;
    check_product(GC_F16, result, ref, timed, GC_F32, N, &v);
    double want = rel_fro(rounded, ref, N);
    CHECK(want > 1e-5, "the ties round: %g", want);
    CHECK(close_to(v.rel_fro, want), "the result's error %.17g, want %.17g", v.rel_fro, want);
    CHECK(close_to(v.timed_rel_fro, want),
          "float16 ties: the library's error at float16 is %.17g, want %.17g (the result's "
          "own: the same numbers)", v.timed_rel_fro, want);
    CHECK(v.timed_max_rel == v.max_rel, "float16 ties: the library's max rel error %.17g, the "
          "result's %.17g", v.timed_max_rel, v.max_rel);
    CHECK(v.timed_acc_dtype && strcmp(v.timed_acc_dtype, "f32") == 0 && v.timed_as &&
          strcmp(v.timed_as, "f16") == 0, "float16 ties: timed as %s, accumulator %s",
          v.timed_as ? v.timed_as : "NULL", v.timed_acc_dtype ? v.timed_acc_dtype : "NULL");
    CHECK(v.timed_acc_rel_fro == 0 && v.timed_acc_max_rel == 0,
          "float16 ties: the float32 output is the reference: %g, %g", v.timed_acc_rel_fro,
          v.timed_acc_max_rel);
}

/* Random products: the library's output carries an accumulator's error
 * (a relative 1e-6), the result a different one before its own rounding;
 * the library's figure at the result's dtype is that of its output
 * rounded as the test rounds it, and the one before the rounding that of
 * its output as it is. */
static void random_outputs(enum gc_dtype result_type)
{
    enum { N = 4000 };
    static double ref[N], timed_as[N], timed_out[N], own[N];
    static float timed[N];
    static uint16_t result[N];
    for (int i = 0; i < N; i++) {
        ref[i] = uniform() * 8;
        timed[i] = (float)(ref[i] * (1 + 1e-6 * uniform()));
        timed_out[i] = timed[i];
        double mine = (float)(ref[i] * (1 + 1e-6 * uniform()));
        if (result_type == GC_F16) {
            timed_as[i] = f16_value(timed[i]);
            result[i] = f16_bits(mine);
            own[i] = f16_value(mine);
        } else {
            timed_as[i] = bf16_value(timed[i]);
            result[i] = bf16_bits((float)mine);
            own[i] = bf16_value((float)mine);
        }
    }
    const char *name = gc_dtypes[result_type].name;
    struct gc_verify_result v;
    check_product(result_type, result, ref, timed, GC_F32, N, &v);
    double want = rel_fro(timed_as, ref, N), acc = rel_fro(timed_out, ref, N);
    CHECK(close_to(v.rel_fro, rel_fro(own, ref, N)), "%s: the result's error %g, want %g", name,
          v.rel_fro, rel_fro(own, ref, N));
    CHECK(close_to(v.timed_rel_fro, want), "%s: the library's error as %s stores it: %.17g, "
          "want %.17g", name, name, v.timed_rel_fro, want);
    CHECK(v.timed_rel_fro > v.rel_fro / 2 && v.timed_rel_fro < 2 * v.rel_fro,
          "%s: the library's error %g and the result's %g carry the same rounding", name,
          v.timed_rel_fro, v.rel_fro);
    CHECK(v.timed_acc_dtype && strcmp(v.timed_acc_dtype, "f32") == 0 &&
          close_to(v.timed_acc_rel_fro, acc), "%s: before the rounding %.17g (%s), want %.17g "
          "(f32)", name, v.timed_acc_rel_fro, v.timed_acc_dtype ? v.timed_acc_dtype : "NULL",
          acc);
    CHECK(v.timed_acc_rel_fro < v.timed_rel_fro / 10, "%s: the accumulator's %g is well below "
          "the rounded output's %g", name, v.timed_acc_rel_fro, v.timed_rel_fro);
}

/* A float32 result of float32 output: as it is, nothing before a rounding
 * to report.  Of float64 output (FP64 arithmetic on float32 data): the
 * output rounded to float32, and before that as float64. */
static void float32_results(void)
{
    enum { N = 500 };
    static double ref[N], out64[N], as32[N];
    static float result[N], out32[N];
    for (int i = 0; i < N; i++) {
        ref[i] = uniform();
        out32[i] = (float)(ref[i] * (1 + 1e-5 * uniform()));
        out64[i] = ref[i] * (1 + 1e-12 * uniform());
        as32[i] = (float)out64[i];
        result[i] = (float)ref[i];
    }
    static double out32_d[N];
    for (int i = 0; i < N; i++)
        out32_d[i] = out32[i];
    struct gc_verify_result v;
    check_product(GC_F32, result, ref, out32, GC_F32, N, &v);
    CHECK(close_to(v.timed_rel_fro, rel_fro(out32_d, ref, N)) && !v.timed_acc_dtype,
          "f32 of f32: %g, want %g, accumulator %s", v.timed_rel_fro, rel_fro(out32_d, ref, N),
          v.timed_acc_dtype ? v.timed_acc_dtype : "none");
    check_product(GC_F32, result, ref, out64, GC_F64, N, &v);
    CHECK(close_to(v.timed_rel_fro, rel_fro(as32, ref, N)), "f32 of f64: %g, want %g",
          v.timed_rel_fro, rel_fro(as32, ref, N));
    CHECK(v.timed_acc_dtype && strcmp(v.timed_acc_dtype, "f64") == 0 &&
          close_to(v.timed_acc_rel_fro, rel_fro(out64, ref, N)), "f32 of f64: before the "
          "rounding %g, want %g", v.timed_acc_rel_fro, rel_fro(out64, ref, N));
}

static void printed(const struct gc_verify_result *v, const char *dtype, char *text, size_t n,
                    char *json, size_t jn)
{
    struct gc_report r;
    memset(&r, 0, sizeof r);
    r.command = "mul";
    r.kernel = "made_up";
    r.device = "cpu";
    r.dtype = dtype;
    r.verify = *v;
    FILE *f = fmemopen(text, n, "w");
    report_print(f, &r);
    fclose(f);
    f = fmemopen(json, jn, "w");
    report_json(f, &r);
    fclose(f);
}

/* The summary and --json label the figures. */
static void labels(void)
{
    enum { N = 64 };
    static double ref[N];
    static float timed[N];
    static uint16_t result[N];
    for (int i = 0; i < N; i++) {
        ref[i] = (float)uniform();
        timed[i] = (float)ref[i];
        result[i] = f16_bits(ref[i]);
    }
    struct gc_verify_result v;
    check_product(GC_F16, result, ref, timed, GC_F32, N, &v);
    static char text[8192], json[8192];
    printed(&v, "f16", text, sizeof text, json, sizeof json);
    CHECK(strstr(text, "cublas's own errors against the same reference, its output rounded "
                 "to f16 as this result is: max rel error") != NULL, "f16 summary:\n%s", text);
    CHECK(strstr(text, "cublas's errors before that rounding (its f32 output, the "
                 "accumulator's): max rel error 0, rel Frobenius error 0") != NULL,
          "f16 summary:\n%s", text);
    CHECK(strstr(json, "\"timed_accumulator_dtype\": \"f32\", "
                 "\"timed_accumulator_rel_frobenius_error\": 0, "
                 "\"timed_accumulator_max_rel_error\": 0") != NULL, "f16 json: %s", json);
    char want[128];
    snprintf(want, sizeof want, "\"timed_rel_frobenius_error\": %.6g", v.timed_rel_fro);
    CHECK(v.timed_rel_fro > 0 && strstr(json, want) != NULL, "f16 json: %s", json);

    static float result32[N];
    for (int i = 0; i < N; i++)
        result32[i] = timed[i];
    check_product(GC_F32, result32, ref, timed, GC_F32, N, &v);
    printed(&v, "f32", text, sizeof text, json, sizeof json);
    CHECK(strstr(text, "cublas's own errors against the same reference: max rel error") &&
          !strstr(text, "before that rounding"), "f32 summary:\n%s", text);
    CHECK(strstr(json, "\"timed_accumulator_dtype\": null, "
                 "\"timed_accumulator_rel_frobenius_error\": null, "
                 "\"timed_accumulator_max_rel_error\": null") != NULL, "f32 json: %s", json);
}

/* The reference a float64 product is checked against: the double-double
 * product for float64 arithmetic and for ozaki (whose peer, DGEMM, would
 * otherwise be its own reference: its error 0), DGEMM for ozaki32. */
static int asked_dd = -1;

static int fake_fp64(void *arg, int double_double, double *out)
{
    const double *ref = arg;
    asked_dd = double_double;
    for (int i = 0; i < 8; i++)
        out[i] = ref[i];
    return 0;
}

static void references(void)
{
    static const struct { enum gemm_sig sig; int dd; } cases[] = {
        { GEMM_F64, 1 }, { GEMM_OZAKI, 1 }, { GEMM_OZAKI32, 0 }, { GEMM_F32, 0 },
    };
    double ref[8], result[8], timed[8];
    for (int i = 0; i < 8; i++) {
        ref[i] = uniform();
        result[i] = ref[i] * (1 + 1e-15);
        timed[i] = ref[i] * (1 + 1e-14);
    }
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        struct gc_tensor a = { 0 }, b = { 0 }, c = { 0 };
        a.dtype = b.dtype = c.dtype = GC_F64;
        gc_tensor_set_2d(&a, 1, 4);
        gc_tensor_set_2d(&b, 4, 8);
        gc_tensor_set_2d(&c, 1, 8);
        c.data = result;
        struct matmul_plan mm;
        CHECK(matmul_plan(&a, &b, COMPUTE_AUTO, "A", "B", &mm) == 0, "matmul_plan 1x8x4");
        struct verify_product vp = { 0 };
        vp.plan = &mm;
        vp.sig = cases[t].sig;
        vp.result = &c;
        vp.alpha = 1;
        vp.threads = 1;
        vp.device_fp64 = fake_fp64;
        vp.device_arg = ref;
        vp.timed = timed;
        vp.timed_type = GC_F64;
        struct gc_verify_result v;
        memset(&v, 0, sizeof v);
        v.tol = 1;
        v.timed = "cublas";
        asked_dd = -1;
        int rc = verify_product(&vp, &v);
        const char *name = gemm_sigs[cases[t].sig].name;
        CHECK(rc == 0 && asked_dd == cases[t].dd && v.reference &&
              (strstr(v.reference, "double-double") != NULL) == cases[t].dd,
              "%s: reference %s (double-double asked: %d), want %s", name,
              v.reference ? v.reference : "none", asked_dd,
              cases[t].dd ? "double-double" : "DGEMM");
        CHECK(v.timed_rel_fro > 5e-15 && v.timed_rel_fro < 2e-14,
              "%s: cublas's error against the reference %g, want 1e-14", name, v.timed_rel_fro);
    }
}

/* The same result and reference at 2^-1000, 1 and 2^+1000 (a power of
 * two scales every error exactly): the errors must be the same numbers.
 * Unscaled sums of squares would underflow to 0 at the first (an error
 * of 0) and overflow at the last (0 / inf).  Then blocks of those three
 * magnitudes added up as MPI ranks add theirs: the same relative error
 * as their squares summed in long double. */
static void magnitudes(void)
{
    enum { N = 64 };
    double ref[N], got[N], timed[N];
    for (int i = 0; i < N; i++) {
        ref[i] = uniform() * 2 - 1;
        got[i] = ref[i] * (1 + 1e-13 * (uniform() - 0.5));
        timed[i] = ref[i] * (1 + 1e-12 * (uniform() - 0.5));
    }
    struct gc_verify_result base;
    check_product(GC_F64, got, ref, timed, GC_F64, N, &base);
    CHECK(base.rel_fro > 1e-15 && base.max_rel > 1e-15 && base.timed_rel_fro > 1e-14,
          "at 1: errors %g, %g, %g", base.rel_fro, base.max_rel, base.timed_rel_fro);
    CHECK(close_to(base.rel_fro, rel_fro(got, ref, N)), "at 1: %.17g, want %.17g",
          base.rel_fro, rel_fro(got, ref, N));
    long double d2 = 0, r2 = 0;
    int exps[] = { -1000, 1000, 0 };
    double diff2 = 0, ref2 = 0;
    int exp = 0;
    for (int s = 0; s < 3; s++) {
        double rs[N], gs[N], ts[N];
        for (int i = 0; i < N; i++) {
            rs[i] = ldexp(ref[i], exps[s]);
            gs[i] = ldexp(got[i], exps[s]);
            ts[i] = ldexp(timed[i], exps[s]);
            long double d = (long double)gs[i] - rs[i];
            d2 += d * d;
            r2 += (long double)rs[i] * rs[i];
        }
        struct gc_verify_result v;
        check_product(GC_F64, gs, rs, ts, GC_F64, N, &v);
        CHECK(v.rel_fro == base.rel_fro && v.max_rel == base.max_rel &&
              v.timed_rel_fro == base.timed_rel_fro && v.timed_max_rel == base.timed_max_rel,
              "at 2^%d: errors %.17g, %.17g, %.17g, %.17g, want %.17g, %.17g, %.17g, %.17g",
              exps[s], v.rel_fro, v.max_rel, v.timed_rel_fro, v.timed_max_rel, base.rel_fro,
              base.max_rel, base.timed_rel_fro, base.timed_max_rel);
        verify_add_squares(&diff2, &ref2, &exp, v.diff2, v.ref2, v.square_exp);
    }
    /* The 2^1000 block outweighs the others by 2^2000: their sum is its. */
    double merged = sqrt(diff2 / ref2), want = (double)sqrtl(d2 / r2);
    CHECK(exp >= 999 && fabs(merged - want) <= 1e-12 * want,
          "blocks added up: %.17g at 4^%d, want %.17g", merged, exp, want);
}

int main(void)
{
    references();
    magnitudes();
    float16_ties();
    random_outputs(GC_F16);
    random_outputs(GC_BF16);
    float32_results();
    labels();
    printf("test_verify: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
