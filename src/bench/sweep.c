/* gemmcli bench --sweep N: auto against cuBLAS on the shapes users bring.
 *
 * The shapes: N drawn log-uniformly (each dimension 1..65536, redrawn
 * until the work is at most SWEEP_MAX_FLOP and the operands fit
 * SWEEP_MAX_BYTES), and the edge families: the ladder's own shapes, a
 * vector times a matrix (m = 1), a matrix times a vector (n = 1), outer
 * products (k = 1), tiny products, a huge k over few outputs, and stacks.
 *
 * Each shape: auto chooses as `mul` would (src/plan/select.c; the choice is
 * timed on the host clock, it is part of every mul), then auto's kernel
 * and cuBLAS run on the same device inputs (where auto's kernel takes
 * another type than the data's, float16 data on a float32 kernel, it runs
 * on copies converted from them each time, as in mul, and cuBLAS in the
 * data's own type: GemmEx on float16), each timed as the median of
 * several runs after a warm-up, each run on the next of several input
 * sets so that L2 never holds the operands of the run before.  The figure
 * per shape is cuBLAS's time over auto's (100%: as fast).  Beside it,
 * auto's model's estimate for the kernel it chose (src/plan/model.h, on
 * the device's SMs) and its error against auto's measured time, signed:
 * (model - measured) / measured.  Printed: the worst shapes, then the
 * worst, 10th-percentile and median figures per family and over all, and
 * a line on the model's accuracy; --bench-out PREFIX writes
 * PREFIX-sweep-TYPE.csv, .json and a scatter (.svg) of the figure against
 * the work. */
#include "src/bench/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "kernels/convert.h"
#include "src/bench/bench.h"
#include "src/job/calibrate.h"
#include "src/job/device.h"
#include "src/plan/matmul.h"
#include "src/plan/model.h"
#include "src/job/output.h"
#include "src/job/json.h"
#include "src/bench/plot.h"
#include "src/job/report.h"
#include "src/plan/select.h"

#define SWEEP_MAX_FLOP 2.5e11     /* about 5 ms in FP32 on the H200 */
#define SWEEP_MAX_BYTES (1u << 30)
#define SWEEP_MAX_DIM 65536
#define SWEEP_SETS 16
#define SWEEP_BUDGET_MS 60.0      /* timed runs per kernel and shape, about */
#define SWEEP_MAX_REPS 25
#define SWEEP_WORST_SHOWN 15
#define SWEEP_MODEL_WITHIN 0.25   /* the model's error counted as close */

enum family {
    FAM_RANDOM, FAM_LADDER, FAM_M1, FAM_N1, FAM_K1, FAM_TINY, FAM_HUGE_K, FAM_STACK,
    FAM_COUNT
};
static const char *const family_names[FAM_COUNT] = {
    "random", "ladder", "m = 1", "n = 1", "k = 1", "tiny", "huge k", "stack",
};

struct edge { int family; size_t batch, m, n, k; };

/* The shapes a random draw rarely lands on, and the ladder's own. */
static const struct edge edges[] = {
    { FAM_LADDER, 1, 1024, 1024, 1024 },   { FAM_LADDER, 1, 4096, 4096, 4096 },
    { FAM_LADDER, 1, 4097, 4097, 4097 },   { FAM_LADDER, 1, 1000, 3000, 500 },
    { FAM_LADDER, 1, 777, 5555, 3333 },    { FAM_LADDER, 1, 12345, 6789, 321 },
    { FAM_LADDER, 1, 65536, 64, 1024 },    { FAM_LADDER, 1, 3000, 3001, 2999 },
    { FAM_M1, 1, 1, 8192, 8192 },          { FAM_M1, 1, 1, 65536, 4096 },
    { FAM_M1, 1, 1, 4096, 65536 },         { FAM_M1, 1, 1, 1000, 1000 },
    { FAM_M1, 1, 1, 5555, 777 },           { FAM_M1, 1, 1, 100, 100000 },
    { FAM_N1, 1, 8192, 1, 8192 },          { FAM_N1, 1, 65536, 1, 4096 },
    { FAM_N1, 1, 4096, 1, 65536 },         { FAM_N1, 1, 1000, 1, 1000 },
    { FAM_N1, 1, 64, 1, 1000000 },         { FAM_N1, 1, 16, 1, 4000000 },
    { FAM_N1, 1, 1, 1, 16000000 },
    { FAM_K1, 1, 4096, 4096, 1 },          { FAM_K1, 1, 8192, 8192, 1 },
    { FAM_K1, 1, 1000, 3000, 1 },          { FAM_K1, 1, 65536, 64, 1 },
    { FAM_TINY, 1, 1, 1, 1 },              { FAM_TINY, 1, 2, 3, 4 },
    { FAM_TINY, 1, 8, 8, 8 },              { FAM_TINY, 1, 16, 16, 16 },
    { FAM_TINY, 1, 31, 17, 5 },            { FAM_TINY, 1, 64, 64, 64 },
    { FAM_TINY, 1, 100, 100, 100 },        { FAM_TINY, 1, 127, 129, 255 },
    { FAM_HUGE_K, 1, 64, 64, 1000000 },    { FAM_HUGE_K, 1, 128, 128, 500000 },
    { FAM_HUGE_K, 1, 256, 256, 65536 },    { FAM_HUGE_K, 1, 8, 8, 4000000 },
    { FAM_HUGE_K, 1, 32, 4096, 100000 },   { FAM_HUGE_K, 1, 512, 512, 262144 },
    { FAM_STACK, 100000, 8, 8, 8 },        { FAM_STACK, 4096, 32, 32, 32 },
    { FAM_STACK, 10000, 16, 16, 64 },      { FAM_STACK, 1000, 64, 64, 64 },
    { FAM_STACK, 256, 128, 128, 128 },     { FAM_STACK, 16, 1024, 1024, 1024 },
    { FAM_STACK, 100, 1, 512, 512 },       { FAM_STACK, 1000, 3, 5, 7 },
    { FAM_STACK, 64, 512, 512, 512 },
};
#define N_EDGES (sizeof edges / sizeof edges[0])

struct sweep_shape {
    int family;
    size_t batch, m, n, k;
    char label[64];
    const char *kernel;           /* auto's choice */
    double auto_ms, cublas_ms, select_us;
    double model_ms;              /* the model's estimate for auto's choice; NAN: none */
};

static double shape_flop(const struct sweep_shape *s)
{
    return 2.0 * s->batch * s->m * s->n * s->k;
}

static double shape_bytes(const struct sweep_shape *s, size_t in, size_t out)
{
    return (double)s->batch * ((double)s->m * s->k + (double)s->k * s->n) * in +
           (double)s->batch * s->m * s->n * out;
}

static void shape_label(struct sweep_shape *s)
{
    if (s->batch > 1)
        snprintf(s->label, sizeof s->label, "%zux%zux%zux%zu", s->batch, s->m, s->n, s->k);
    else
        snprintf(s->label, sizeof s->label, "%zux%zux%zu", s->m, s->n, s->k);
}

/* A 64-bit generator (splitmix64): the same seed gives the same shapes on
 * every machine. */
static double next_uniform(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (z >> 11) * (1.0 / 9007199254740992.0);
}

static size_t log_uniform_dim(unsigned long long *state)
{
    double d = floor(exp2(next_uniform(state) * log2((double)SWEEP_MAX_DIM + 1)));
    return d < 1 ? 1 : d > SWEEP_MAX_DIM ? SWEEP_MAX_DIM : (size_t)d;
}

static int sweep_shapes(int n, unsigned long long seed, size_t in_size, size_t out_size,
                 struct sweep_shape **out, int *count)
{
    struct sweep_shape *v = calloc((size_t)n + N_EDGES, sizeof *v);
    if (!v)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    unsigned long long state = seed;
    int c = 0;
    for (int i = 0; i < n; i++) {
        struct sweep_shape s = { FAM_RANDOM, 1, 0, 0, 0, "", NULL, NAN, NAN, NAN, NAN };
        do {
            s.m = log_uniform_dim(&state);
            s.n = log_uniform_dim(&state);
            s.k = log_uniform_dim(&state);
        } while (shape_flop(&s) > SWEEP_MAX_FLOP ||
                 shape_bytes(&s, in_size, out_size) > SWEEP_MAX_BYTES);
        shape_label(&s);
        v[c++] = s;
    }
    for (size_t i = 0; i < N_EDGES; i++) {
        struct sweep_shape s = { edges[i].family, edges[i].batch, edges[i].m, edges[i].n,
                                 edges[i].k, "", NULL, NAN, NAN, NAN, NAN };
        shape_label(&s);
        v[c++] = s;
    }
    *out = v;
    *count = c;
    return 0;
}

/* ---- timing one shape ---- */

struct sweep_run {
    struct gc_device *dev;
    const struct gemm_kernel *kern;
    struct gemm_problem p;
    int sets;
    void *a[SWEEP_SETS], *b[SWEEP_SETS];
    /* Where auto's kernel takes another type than the data's (float16
     * data on a float32 kernel): the data's sets, converted into a and b
     * ahead of each run, as mul converts them. */
    void *data_a[SWEEP_SETS], *data_b[SWEEP_SETS];
    enum gc_dtype data_type, kern_type;
    size_t a_n, b_n;
    int convert;
};

static int run_one(void *arg, int i)
{
    struct sweep_run *r = arg;
    struct launch_env env = device_launch_env(r->dev);
    int set = (i + 1) % r->sets;
    struct gemm_problem p = r->p;
    p.a = r->a[set];
    p.b = r->b[set];
    cudaError_t err = cudaSuccess;
    if (r->convert) {
        err = convert_operand_launch(r->data_a[set], r->data_type, 0, 0, 0, r->a_n, r->a[set],
                                     r->kern_type, env.stream);
        if (err == cudaSuccess)
            err = convert_operand_launch(r->data_b[set], r->data_type, 0, 0, 0, r->b_n,
                                         r->b[set], r->kern_type, env.stream);
    }
    if (err == cudaSuccess)
        err = gemm_run(r->kern, &p, &env, 0);
    return err == cudaSuccess ? 0 : device_cuda_fail(err, r->kern->name, __FILE__, __LINE__);
}

static int time_kernel(struct sweep_run *r, double *median)
{
    struct clock_timer timer = device_timer_clock(&r->dev->timer);
    struct clock_plan plan = { 0, 1, SWEEP_BUDGET_MS, 1500.0, 3, SWEEP_MAX_REPS, 0 };
    int rc = clock_time_runs(&timer, run_one, NULL, r, &plan, median, NULL);
    if (rc == -1 && r->dev->timer.err != cudaSuccess)
        return device_cuda_fail(r->dev->timer.err, "timing", __FILE__, __LINE__);
    return rc == -1 ? gc_fail(GC_EXIT_INPUT, "out of host memory") : rc;
}

static int sweep_shape(struct gc_device *dev, enum gemm_sig want, struct sweep_shape *s)
{
    /* The operands and --compute mode that make `want` the plan's choice. */
    int compute = gemm_sigs[want].compute ? matmul_compute_parse(gemm_sigs[want].compute)
                                          : COMPUTE_AUTO;
    int rc, is_auto;
    struct gc_tensor ta = { 0 }, tb = { 0 };
    ta.dtype = tb.dtype = gemm_sigs[want].in;
    gc_tensor_set_stack(&ta, s->batch, s->m, s->k);
    gc_tensor_set_stack(&tb, s->batch, s->k, s->n);
    struct matmul_plan plan;
    if ((rc = matmul_plan(&ta, &tb, compute, "A", "B", &plan)))
        return rc;
    if (plan.outer != 1)
        return gc_fail(GC_EXIT_INPUT, "sweep: %s is not one launch", s->label);

    int cc = dev->cc_major * 10 + dev->cc_minor;
    enum gemm_sig sig;
    double t0 = clock_ms();
    const struct gemm_kernel *kern;
    rc = select_gemm_kernel("auto", &plan, cc, dev->sm_count, 1, &kern, &sig, &is_auto);
    s->select_us = (clock_ms() - t0) * 1e3;
    if (rc)
        return rc;
    s->kernel = kern->name;
    const struct gemm_kernel *ref = gemm_kernel_find("cublas");

    struct sweep_run r = { 0 };
    r.dev = dev;
    r.kern = kern;
    matmul_problem(&plan, sig, 1, 0, &r.p);
    r.p.cc = cc;
    /* The estimate auto weighed for this kernel: the same problem, the
     * same SMs (src/plan/select.c), and the operands' conversion where the
     * kernel takes another type (timed below, as the result's is not). */
    double model_ms = model_estimate(kern, &r.p, dev->sm_count).ms +
                      select_convert_ms(&plan, sig, 0);
    s->model_ms = isfinite(model_ms) ? model_ms : NAN;
    const struct gemm_sig_info *si = &gemm_sigs[sig];
    size_t in_size = gc_dtypes[si->in].size, out_size = gc_dtypes[si->out].size;
    size_t a_n = s->batch * s->m * s->k, b_n = s->batch * s->k * s->n;
    size_t c_n = s->batch * s->m * s->n;
    /* The data's type is the swept signature's; auto's kernel may take
     * another (float16 data on a float32 kernel), and then runs on copies
     * converted from the data each time, as in mul. */
    r.data_type = gemm_sigs[want].in;
    r.kern_type = si->in;
    r.convert = r.data_type != r.kern_type;
    r.a_n = a_n;
    r.b_n = b_n;
    size_t data_size = gc_dtypes[r.data_type].size;
    size_t set_bytes = (a_n + b_n) * (in_size + (r.convert ? data_size : 0));
    size_t ws = gemm_workspace_bytes(kern, &r.p);
    r.sets = (int)(3 * dev->l2_bytes / (set_bytes ? set_bytes : 1)) + 2;
    if (r.sets > SWEEP_SETS)
        r.sets = SWEEP_SETS;
    void *c = NULL;
    if ((rc = device_check_memory(dev, set_bytes * r.sets + c_n * out_size + ws + a_n * 4,
                                  "this sweep shape")))
        return rc;
    if ((rc = CUDA_CALL(cudaMalloc(&c, c_n ? c_n * out_size : 1))))
        goto out;
    for (int i = 0; i < r.sets && !rc; i++) {
        if (!(rc = device_random_operand(dev, a_n, 2 * i + 1, si->in, &r.a[i])))
            rc = device_random_operand(dev, b_n, 2 * i + 2, si->in, &r.b[i]);
        if (!rc && r.convert &&
            !(rc = device_random_operand(dev, a_n, 2 * i + 1, r.data_type, &r.data_a[i])))
            rc = device_random_operand(dev, b_n, 2 * i + 2, r.data_type, &r.data_b[i]);
    }
    if (rc)
        goto out;
    r.p.c = c;
    if ((rc = time_kernel(&r, &s->auto_ms)))
        goto out;
    /* cuBLAS in the swept signature's reference (tf32x3's: SGEMM, the
     * accuracy it aims at) on the data as it is: float16 data against
     * GemmEx on float16 even where auto took a float32 kernel. */
    r.kern = ref;
    r.p.sig = gemm_sigs[want].reference;
    if (r.convert) {
        r.convert = 0;
        for (int i = 0; i < r.sets; i++) {
            void *a = r.a[i], *b = r.b[i];
            r.a[i] = r.data_a[i];
            r.b[i] = r.data_b[i];
            r.data_a[i] = a;
            r.data_b[i] = b;
        }
        if (gc_dtypes[gemm_sigs[r.p.sig].out].size > out_size) {
            cudaFree(c);
            c = NULL;
            if ((rc = CUDA_CALL(cudaMalloc(&c, c_n ? c_n * gc_dtypes[gemm_sigs[r.p.sig].out].size
                                                    : 1))))
                goto out;
            r.p.c = c;
        }
    }
    char why[256];
    if (ref && gemm_can_implement(ref, &r.p, why, sizeof why))
        rc = time_kernel(&r, &s->cublas_ms);
out:
    for (int i = 0; i < r.sets; i++) {
        cudaFree(r.a[i]);
        cudaFree(r.b[i]);
        cudaFree(r.data_a[i]);
        cudaFree(r.data_b[i]);
    }
    cudaFree(c);
    return rc;
}

/* ---- the summary ---- */

static double pct(const struct sweep_shape *s)
{
    return isfinite(s->auto_ms) && isfinite(s->cublas_ms) && s->auto_ms > 0
               ? 100.0 * s->cublas_ms / s->auto_ms : NAN;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The median of r[0..n), sorted, n > 0. */
static double sorted_median(const double *r, int n)
{
    return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

struct stats { int n; double worst, p10, median; };

/* Over the shapes of `family` (-1: all). */
static struct stats family_stats(const struct sweep_shape *v, int count, int family)
{
    struct stats st = { 0, NAN, NAN, NAN };
    double *r = malloc((size_t)count * sizeof *r);
    if (!r)
        return st;
    for (int i = 0; i < count; i++)
        if ((family < 0 || v[i].family == family) && isfinite(pct(&v[i])))
            r[st.n++] = pct(&v[i]);
    if (st.n) {
        qsort(r, (size_t)st.n, sizeof *r, cmp_double);
        st.worst = r[0];
        st.p10 = r[(st.n - 1) / 10];
        st.median = sorted_median(r, st.n);
    }
    free(r);
    return st;
}

/* The model's error against auto's measured time, signed: (model -
 * measured) / measured; NAN where either is missing. */
static double model_err(const struct sweep_shape *s)
{
    return isfinite(s->model_ms) && isfinite(s->auto_ms) && s->auto_ms > 0
               ? (s->model_ms - s->auto_ms) / s->auto_ms : NAN;
}

/* How well the model foretold auto's times over the sweep. */
struct model_fit {
    int n;                            /* shapes with an estimate and a time */
    double median_abs;                /* the median of |error| */
    double within;                    /* share of them within SWEEP_MODEL_WITHIN */
    const struct sweep_shape *worst;  /* the largest |error| */
};

static struct model_fit model_fit(const struct sweep_shape *v, int count)
{
    struct model_fit mf = { 0, NAN, NAN, NULL };
    double *r = malloc((size_t)(count ? count : 1) * sizeof *r);
    if (!r)
        return mf;
    int close = 0;
    for (int i = 0; i < count; i++) {
        double e = fabs(model_err(&v[i]));
        if (!isfinite(e))
            continue;
        r[mf.n++] = e;
        close += e <= SWEEP_MODEL_WITHIN;
        if (!mf.worst || e > fabs(model_err(mf.worst)))
            mf.worst = &v[i];
    }
    if (mf.n) {
        qsort(r, (size_t)mf.n, sizeof *r, cmp_double);
        mf.median_abs = sorted_median(r, mf.n);
        mf.within = (double)close / mf.n;
    }
    free(r);
    return mf;
}

static void print_model_fit(FILE *f, const struct sweep_shape *v, int count)
{
    struct model_fit mf = model_fit(v, count);
    if (!mf.n) {
        fprintf(f, "auto's model: no shape with both an estimate and a time\n");
        return;
    }
    fprintf(f, "auto's model: median error %.0f%% over %d shapes, %.0f%% of them within "
            "+-%.0f%%; the largest %+.0f%% at %s (%s: model %.4f ms, measured %.4f ms)\n",
            100 * mf.median_abs, mf.n, 100 * mf.within, 100 * SWEEP_MODEL_WITHIN,
            100 * model_err(mf.worst), mf.worst->label, mf.worst->kernel, mf.worst->model_ms,
            mf.worst->auto_ms);
}

static int cmp_pct(const void *x, const void *y)
{
    double a = pct(*(const struct sweep_shape *const *)x);
    double b = pct(*(const struct sweep_shape *const *)y);
    if (!isfinite(a))
        return isfinite(b);
    if (!isfinite(b))
        return -1;
    return a < b ? -1 : a > b;
}

static void print_summary(FILE *f, const char *name, const struct gc_device *dev,
                          const char *date, const struct sweep_shape *v, int count)
{
    fprintf(f, "\nsweep %s on %s, %s: auto against cuBLAS (%% = cuBLAS's time / auto's)\n",
            name, dev->name, date);
    const struct sweep_shape **order = malloc((size_t)count * sizeof *order);
    if (order) {
        for (int i = 0; i < count; i++)
            order[i] = &v[i];
        qsort(order, (size_t)count, sizeof *order, cmp_pct);
        fprintf(f, "worst shapes:\n%-24s %-8s %-16s %10s %10s %7s %10s %9s\n", "shape",
                "family", "auto's kernel", "auto ms", "cuBLAS ms", "%", "model ms", "model err");
        for (int i = 0; i < count && i < SWEEP_WORST_SHOWN; i++) {
            const struct sweep_shape *s = order[i];
            fprintf(f, "%-24s %-8s %-16s %10.4f %10.4f %6.0f%%", s->label,
                    family_names[s->family], s->kernel ? s->kernel : "-", s->auto_ms,
                    s->cublas_ms, pct(s));
            if (isfinite(model_err(s)))
                fprintf(f, " %10.4f %+8.0f%%\n", s->model_ms, 100 * model_err(s));
            else
                fprintf(f, " %10s %9s\n", "-", "-");
        }
        free(order);
    }
    fprintf(f, "%-10s %6s %8s %8s %8s\n", "family", "shapes", "worst", "p10", "median");
    for (int fam = -1; fam < FAM_COUNT; fam++) {
        struct stats st = family_stats(v, count, fam);
        if (st.n)
            fprintf(f, "%-10s %6d %7.0f%% %7.0f%% %7.0f%%\n", fam < 0 ? "all" : family_names[fam],
                    st.n, st.worst, st.p10, st.median);
    }
    double sel[2] = { 0, 0 };
    for (int i = 0; i < count; i++)
        if (isfinite(v[i].select_us) && v[i].select_us > sel[1])
            sel[1] = v[i].select_us;
    fprintf(f, "auto's choice took at most %.0f us a shape\n", sel[1]);
    print_model_fit(f, v, count);
}

/* The scatter: each shape's figure against its work, by family. */
static int sweep_plot(FILE *f, const char *name, const struct gc_device *dev, const char *date,
                      const struct sweep_shape *v, int count, enum gemm_sig sig)
{
    struct plot_point *pts = malloc((size_t)(count ? count : 1) * sizeof *pts);
    if (!pts)
        return -1;
    for (int i = 0; i < count; i++)
        pts[i] = (struct plot_point){ shape_flop(&v[i]) / 1e9, pct(&v[i]), v[i].family,
                                      v[i].label };
    struct stats st = family_stats(v, count, -1);
    struct model_fit mf = model_fit(v, count);
    char title[160], subtitle[400], summary[160], fit[64] = "";
    snprintf(title, sizeof title, "gemmcli %s: auto against cuBLAS over %d shapes", name, count);
    snprintf(subtitle, sizeof subtitle, "%s, %s; 100%% = as fast as cuBLAS%s, measured in the "
             "same run", dev->name, date, gemm_sigs[sig].reference != sig ? " SGEMM" : "");
    if (mf.n)
        snprintf(fit, sizeof fit, "  model: median error %.0f%%", 100 * mf.median_abs);
    snprintf(summary, sizeof summary, "worst %.0f%%  p10 %.0f%%  median %.0f%%  (%d shapes)%s",
             st.worst, st.p10, st.median, st.n, fit);
    struct plot_scatter sc = { title, subtitle, "GFLOP (a stack's products together)",
                               "% of cuBLAS's speed", summary, count, FAM_COUNT, pts,
                               family_names };
    int rc = plot_scatter(f, &sc);
    free(pts);
    return rc;
}

/* The model's accuracy over the sweep, as print_model_fit says it. */
static void json_model_fit(struct json *j, const struct sweep_shape *v, int count)
{
    struct model_fit mf = model_fit(v, count);
    json_object(j, "model");
    json_int(j, "shapes", mf.n);
    json_number(j, "median_abs_err", mf.median_abs);
    json_number(j, "within_25", mf.within);
    if (mf.worst) {
        json_object(j, "worst");
        json_string(j, "shape", mf.worst->label);
        json_string(j, "kernel", mf.worst->kernel);
        json_number(j, "model_ms", mf.worst->model_ms);
        json_number(j, "auto_ms", mf.worst->auto_ms);
        json_number(j, "model_err", model_err(mf.worst));
        json_end(j);
    } else {
        json_null(j, "worst");
    }
    json_end(j);
}

static int write_sweep_files(const char *prefix, const char *name, enum gemm_sig sig,
                             const struct gc_device *dev, const char *date,
                             const struct sweep_shape *v, int count, int quiet, int flags)
{
    struct bench_files out;
    int rc = bench_files_begin(&out, prefix, flags);
    if (rc)
        return rc;
    FILE *csv = out.csv.f, *json = out.json.f;
    const char *type = gemm_sigs[sig].name;
    fprintf(csv, "type,device,date,family,shape,batch,m,n,k,gflop,kernel,auto_ms,cublas_ms,"
            "pct_of_cublas,select_us,model_ms,model_err\n");
    struct json j;
    json_begin(&j, json);
    json_object(&j, NULL);
    json_string(&j, "op", "mul");
    json_string(&j, "type", type);
    json_string(&j, "device", dev->name);
    json_string(&j, "date", date);
    json_object(&j, "summary");
    for (int fam = -1; fam < FAM_COUNT; fam++) {
        struct stats st = family_stats(v, count, fam);
        json_object(&j, fam < 0 ? "all" : family_names[fam]);
        json_int(&j, "shapes", st.n);
        json_number(&j, "worst", st.n ? st.worst : NAN);
        json_number(&j, "p10", st.n ? st.p10 : NAN);
        json_number(&j, "median", st.n ? st.median : NAN);
        json_end(&j);
    }
    json_end(&j);
    json_model_fit(&j, v, count);
    json_list(&j, "results", 1);
    for (int i = 0; i < count; i++) {
        const struct sweep_shape *s = &v[i];
        double p = pct(s);
        fprintf(csv, "%s,\"%s\",%s,%s,%s,%zu,%zu,%zu,%zu,%.6g,%s,%.5f,%.5f,%.1f,%.1f,%.5f,%.4f\n",
                type, dev->name, date, family_names[s->family], s->label, s->batch, s->m, s->n,
                s->k, shape_flop(s) / 1e9, s->kernel ? s->kernel : "", s->auto_ms, s->cublas_ms,
                p, s->select_us, s->model_ms, model_err(s));
        size_t dims[4] = { s->batch, s->m, s->n, s->k };
        json_object(&j, NULL);
        json_string(&j, "family", family_names[s->family]);
        json_shape(&j, "shape", 4, dims);
        json_count(&j, "batch", s->batch);
        json_count(&j, "m", s->m);
        json_count(&j, "n", s->n);
        json_count(&j, "k", s->k);
        json_string(&j, "kernel", s->kernel);
        json_number(&j, "auto_ms", s->auto_ms);
        json_number(&j, "cublas_ms", s->cublas_ms);
        json_number(&j, "pct_of_cublas", p);
        json_number(&j, "model_ms", s->model_ms);
        json_number(&j, "model_err", model_err(s));
        json_end(&j);
    }
    json_end(&j);
    json_end(&j);
    if (sweep_plot(out.svg.f, name, dev, date, v, count, sig))
        rc = gc_fail(GC_EXIT_OUTPUT, "%s.svg: cannot write the plot", prefix);
    return bench_files_end(&out, rc, quiet);
}

int bench_sweep(const struct gc_opts *o, enum gemm_sig sig)
{
    struct gc_device dev;
    memset(&dev, 0, sizeof dev);
    const struct gemm_sig_info *si = &gemm_sigs[sig];
    struct sweep_shape *v = NULL;
    int count = 0;
    int rc = sweep_shapes(o->sweep, (unsigned long long)o->seed, gc_dtypes[si->in].size,
                          gc_dtypes[si->out].size, &v, &count);
    if (rc)
        return rc;
    char date[16], name[48];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    snprintf(name, sizeof name, "mul %s", si->name);
    if (!(rc = device_open(&dev, o->device, 0)) && !(rc = device_cublas(&dev))) {
        /* auto chooses with this GPU's rates, as mul would. */
        calibrate_ready(&dev, o->no_calibrate ? CALIBRATE_NEVER : CALIBRATE_IF_MISSING, o->quiet);
        for (int i = 0; i < count && !rc; i++) {
            if (!o->quiet)
                fprintf(stderr, "sweep: %s %d/%d %s\n", name, i + 1, count, v[i].label);
            rc = sweep_shape(&dev, sig, &v[i]);
        }
    }
    if (!rc) {
        print_summary(stdout, name, &dev, date, v, count);
        if (o->bench_out) {
            char prefix[4096];
            snprintf(prefix, sizeof prefix, "%s-sweep-%s", o->bench_out, si->name);
            rc = write_sweep_files(prefix, name, sig, &dev, date, v, count, o->quiet,
                                   o->force ? OUTPUT_FORCE : 0);
        }
    }
    device_close(&dev);
    free(v);
    return rc;
}
