/* gemmcli bench: every kernel of one operation and one type, and cuBLAS,
 * timed in one process on the same inputs.  Each timed run uses the next
 * of several input sets, so that the L2 cache never holds the operands
 * from the run before; the figure is the median of the runs after a
 * warm-up (core/clock.h's loop, with CUDA events). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "kernels/convert.h"
#include "src/bench/bench.h"
#include "src/job/device.h"
#include "src/job/options.h"
#include "src/job/output.h"
#include "src/plan/fit.h"
#include "src/plan/model.h"
#include "src/plan/rates.h"
#include "src/bench/plot.h"
#include "src/job/json.h"
#include "src/job/report.h"
#include "src/plan/select.h"

#define MAX_SETS 16
#define CELL_BUDGET_MS 300.0   /* timed runs per kernel and shape, about */
#define MAX_RUN_MS 1500.0      /* a kernel slower than this at a shape is skipped */
#define MAX_REPS 50

struct shape { size_t batch, m, n, k; char label[64]; };

struct bench {
    const struct gc_opts *o;
    struct gc_device dev;
    int is_mul;
    enum gemm_sig sig;          /* mul */
    struct shape shapes[GC_MAX_SIZES];
    int n_shapes;
    size_t n_kernels;
    double *ms;                 /* n_kernels x n_shapes; NAN: not run */
    char date[16];
    char name[32];              /* "mul f32", "transpose" */
};

/* The first signature bench times (f32) carries the ladder: its shapes are
 * the most. */
static const char default_ladder_sizes[] =
    "1024,2048,4096,8192,4097,127x129x255,1000x3000x500,256x256x65536,65536x64x1024,"
    "1024x128x128x128,16x1024x1024x1024,1x8192x8192,8192x1x8192,100000x8x8x8,4096x32x32x32,"
    "8192x8192x1,8192x8192x32,32768x16x8192,16x8192x32768,1000x64x64x64";
/* The tensor-core chapter's shapes add a long K on few tiles (its split)
 * and a stack; the other types' lists, the shapes of the memory-bound
 * stages (a thin side, a short K), from which auto's rates for them come. */
static const char default_tensor_core_sizes[] =
    "1024,4096,8192,4097,1000x3000x500,256x256x65536,16x1024x1024x1024,1x8192x8192,"
    "8192x1x8192,4096x32x32x32,32768x16x8192,16x8192x32768,8192x8192x8,8192x8192x32";
static const char default_other_sizes[] =
    "1024,4096,8192,4097,1000x3000x500,1x8192x8192,8192x1x8192,4096x32x32x32,32768x16x8192,"
    "16x8192x32768,8192x8192x8,8192x8192x32";
static const char default_transpose_sizes[] = "4096,8192,16384,7001x3000";

static int parse_sizes(struct bench *b, const char *list)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (b->n_shapes == GC_MAX_SIZES)
            return gc_fail(GC_EXIT_USAGE, "--sizes: at most %d sizes", GC_MAX_SIZES);
        struct gc_shape_opt sh;
        struct shape *s = &b->shapes[b->n_shapes];
        if (options_parse_shape(tok, &sh))
            return gc_fail(GC_EXIT_USAGE, "--sizes: '%s' is not a list of numbers joined by x", tok);
        size_t *d = sh.dims;
        if (sh.ndim == 1)
            *s = (struct shape){ 1, d[0], d[0], b->is_mul ? d[0] : 1, "" };
        else if (sh.ndim == 2 && !b->is_mul)
            *s = (struct shape){ 1, d[0], d[1], 1, "" };
        else if (sh.ndim == 3 && b->is_mul)
            *s = (struct shape){ 1, d[0], d[1], d[2], "" };
        else if (sh.ndim == 4 && b->is_mul)
            *s = (struct shape){ d[0], d[1], d[2], d[3], "" };
        else
            return gc_fail(GC_EXIT_USAGE, "--sizes: '%s' is not %s", tok,
                           b->is_mul ? "N, MxNxK or BATCHxMxNxK" : "N or RxC");
        if (!s->batch || !s->m || !s->n || !s->k || s->m > 1u << 30 || s->n > 1u << 30 ||
            s->k > 1u << 30 || s->batch > 1u << 24)
            return gc_fail(GC_EXIT_USAGE, "--sizes: '%s' is out of range", tok);
        snprintf(s->label, sizeof s->label, "%s", tok);
        b->n_shapes++;
    }
    return b->n_shapes ? 0 : gc_fail(GC_EXIT_USAGE, "--sizes: no sizes given");
}

/* Device buffers for one shape: `sets` copies of the inputs and one output. */
struct operands {
    int sets;
    void *a[MAX_SETS], *b[MAX_SETS];
    void *c;
};

static void free_operands(struct operands *ops)
{
    for (int i = 0; i < ops->sets; i++) {
        cudaFree(ops->a[i]);
        cudaFree(ops->b[i]);
    }
    cudaFree(ops->c);
    memset(ops, 0, sizeof *ops);
}

static int alloc_operands(struct bench *b, const struct shape *s, struct operands *ops)
{
    enum gc_dtype in = b->is_mul ? gemm_sigs[b->sig].in : GC_F32;
    enum gc_dtype out = b->is_mul ? gemm_sigs[b->sig].out : GC_F32;
    size_t a_n = s->batch * (b->is_mul ? s->m * s->k : s->m * s->n);
    size_t b_n = b->is_mul ? s->batch * s->k * s->n : 0;
    size_t c_n = s->batch * s->m * s->n;
    size_t set_bytes = (a_n + b_n) * gc_dtypes[in].size;
    int sets = (int)((3 * b->dev.l2_bytes) / set_bytes) + 2;
    ops->sets = sets > MAX_SETS ? MAX_SETS : sets;
    int rc = device_check_memory(&b->dev, set_bytes * ops->sets + c_n * gc_dtypes[out].size +
                                 a_n * sizeof(float), "this benchmark shape");
    if (rc)
        return rc;
    rc = CUDA_CALL(cudaMalloc(&ops->c, c_n * gc_dtypes[out].size));
    for (int i = 0; i < ops->sets && !rc; i++) {
        if (i == 0) {
            if (!(rc = device_random_operand(&b->dev, a_n, 1, in, &ops->a[0])) && b_n)
                rc = device_random_operand(&b->dev, b_n, 2, in, &ops->b[0]);
            continue;
        }
        if ((rc = CUDA_CALL(cudaMalloc(&ops->a[i], a_n * gc_dtypes[in].size))) ||
            (b_n && (rc = CUDA_CALL(cudaMalloc(&ops->b[i], b_n * gc_dtypes[in].size)))) ||
            (rc = CUDA_CALL(cudaMemcpy(ops->a[i], ops->a[0], a_n * gc_dtypes[in].size,
                                       cudaMemcpyDeviceToDevice))))
            break;
        if (b_n)
            rc = CUDA_CALL(cudaMemcpy(ops->b[i], ops->b[0], b_n * gc_dtypes[in].size,
                                      cudaMemcpyDeviceToDevice));
    }
    return rc;
}

static unsigned kernel_flags(const struct bench *b, size_t i)
{
    return b->is_mul ? gemm_kernels[i].flags : transpose_kernels[i].flags;
}

static const char *kernel_name(const struct bench *b, size_t i)
{
    return b->is_mul ? gemm_kernels[i].name : transpose_kernels[i].name;
}

static void mul_problem(const struct bench *b, const struct shape *s, struct gemm_problem *p)
{
    memset(p, 0, sizeof *p);
    p->sig = b->sig;
    p->m = (int64_t)s->m;
    p->n = (int64_t)s->n;
    p->k = (int64_t)s->k;
    p->batch = (int64_t)s->batch;
    gemm_problem_dense(p);
    p->stride_a = p->m * p->k;
    p->stride_b = p->k * p->n;
    p->alpha = 1;
    p->beta = 0;
    p->cc = b->dev.cc_major * 10 + b->dev.cc_minor;
}

/* The signature kernel i runs in: the bench's, except that cuBLAS runs in
 * the signature's reference (tf32x3's: SGEMM, the accuracy it aims at). */
static enum gemm_sig kernel_sig(const struct bench *b, size_t i)
{
    return kernel_flags(b, i) & KERNEL_REFERENCE ? gemm_sigs[b->sig].reference : b->sig;
}

/* Whether kernel i runs in this bench at shape s (a GPU kernel of the
 * operation and type that can compute it). */
static int runs_here(const struct bench *b, size_t i, const struct shape *s)
{
    if (kernel_flags(b, i) & KERNEL_HOST)
        return 0;
    if (!b->is_mul)
        return 1;
    struct gemm_problem p;
    char why[256];
    mul_problem(b, s, &p);
    p.sig = kernel_sig(b, i);
    return gemm_can_implement(&gemm_kernels[i], &p, why, sizeof why);
}

struct cell {
    struct bench *b;
    size_t kernel;
    const struct shape *s;
    const struct operands *ops;
};

static int run_cell(void *arg, int i)
{
    const struct cell *c = arg;
    struct bench *b = c->b;
    int set = (i + 1) % c->ops->sets;
    struct launch_env env = device_launch_env(&b->dev);
    cudaError_t err;
    if (b->is_mul) {
        struct gemm_problem p;
        mul_problem(b, c->s, &p);
        p.sig = kernel_sig(b, c->kernel);
        p.a = c->ops->a[set];
        p.b = c->ops->b[set];
        p.c = c->ops->c;
        err = gemm_run(&gemm_kernels[c->kernel], &p, &env, 0);
    } else {
        struct transpose_problem p = { (int)c->s->m, (int)c->s->n, sizeof(float),
                                       c->ops->a[set], c->ops->c };
        err = transpose_kernels[c->kernel].launch(&p, &env);
    }
    return err == cudaSuccess ? 0 : device_cuda_fail(err, kernel_name(b, c->kernel), __FILE__,
                                                     __LINE__);
}

static int time_cell(struct bench *b, size_t kernel, const struct shape *s,
                     const struct operands *ops, double *median)
{
    struct cell c = { b, kernel, s, ops };
    struct clock_timer timer = device_timer_clock(&b->dev.timer);
    struct clock_plan plan = { 0, 1, CELL_BUDGET_MS, MAX_RUN_MS, 3, MAX_REPS, 0 };
    int rc = clock_time_runs(&timer, run_cell, NULL, &c, &plan, median, NULL);
    if (rc == -1 && b->dev.timer.err != cudaSuccess)
        return device_cuda_fail(b->dev.timer.err, "timing", __FILE__, __LINE__);
    return rc == -1 ? gc_fail(GC_EXIT_INPUT, "out of host memory") : rc;
}

static long find_kernel(const struct bench *b, const char *name)
{
    for (size_t i = 0; i < b->n_kernels; i++)
        if (strcmp(kernel_name(b, i), name) == 0)
            return (long)i;
    return -1;
}

/* GFLOP or GB for one run of shape s. */
static double work(const struct bench *b, const struct shape *s)
{
    return b->is_mul ? 2.0 * s->batch * s->m * s->n * s->k / 1e9
                     : 2.0 * s->m * s->n * sizeof(float) / 1e9;
}

/* TFLOP/s for mul, GB/s for transpose. */
static double rate(const struct bench *b, size_t i, int j)
{
    double ms = b->ms[i * b->n_shapes + j];
    if (!isfinite(ms) || ms <= 0)
        return NAN;
    double per_s = work(b, &b->shapes[j]) / (ms / 1e3);
    return b->is_mul ? per_s / 1e3 : per_s;
}

static int run_all(struct bench *b)
{
    for (int j = 0; j < b->n_shapes; j++) {
        const struct shape *s = &b->shapes[j];
        struct operands ops = { 0 };
        int rc = alloc_operands(b, s, &ops);
        if (rc) {
            free_operands(&ops);
            return rc;
        }
        if (!b->o->quiet)
            fprintf(stderr, "bench: %s %s (%d input sets)\n", b->name, s->label, ops.sets);
        for (size_t i = 0; i < b->n_kernels; i++) {
            if (!runs_here(b, i, s))
                continue;
            /* Skip a kernel whose last rate says one run here would be too slow. */
            double last = NAN;
            for (int p = j - 1; p >= 0 && !isfinite(last); p--)
                last = b->ms[i * b->n_shapes + p] / work(b, &b->shapes[p]);
            if (isfinite(last) && last * work(b, s) > MAX_RUN_MS) {
                if (!b->o->quiet)
                    fprintf(stderr, "bench:   %-16s skipped (about %.0f ms a run)\n",
                            kernel_name(b, i), last * work(b, s));
                continue;
            }
            if ((rc = time_cell(b, i, s, &ops, &b->ms[i * b->n_shapes + j]))) {
                free_operands(&ops);
                return rc;
            }
        }
        free_operands(&ops);
    }
    return 0;
}

static int has_results(const struct bench *b, size_t i)
{
    for (int j = 0; j < b->n_shapes; j++)
        if (isfinite(rate(b, i, j)))
            return 1;
    return 0;
}

static void print_table(const struct bench *b, FILE *f)
{
    long ref = find_kernel(b, b->is_mul ? "cublas" : "geam");
    long copy = b->is_mul ? -1 : find_kernel(b, "copy");
    double peak = device_fp32_peak_gflops(&b->dev) / 1e3;
    fprintf(f, "\n%s on %s, %s; %s\n", b->name, b->dev.name, b->date,
            !b->is_mul ? "GB/s read+written (% of copy, % of geam)"
            : gemm_sigs[b->sig].reference != b->sig ? "TFLOP/s (% of cuBLAS; cublas is SGEMM, FP32)"
                                    : "TFLOP/s (% of cuBLAS)");
    fprintf(f, "%-16s", "kernel");
    for (int j = 0; j < b->n_shapes; j++)
        fprintf(f, " %19s", b->shapes[j].label);
    fputc('\n', f);
    for (size_t i = 0; i < b->n_kernels; i++) {
        if (!has_results(b, i))
            continue;
        fprintf(f, "%-16s", kernel_name(b, i));
        for (int j = 0; j < b->n_shapes; j++) {
            double v = rate(b, i, j);
            char cell[48];
            if (!isfinite(v))
                snprintf(cell, sizeof cell, "-");
            else if (b->is_mul)
                snprintf(cell, sizeof cell, "%.2f (%3.0f%%)", v,
                         ref >= 0 ? 100 * v / rate(b, (size_t)ref, j) : NAN);
            else
                snprintf(cell, sizeof cell, "%.0f (%3.0f%%,%3.0f%%)", v,
                         copy >= 0 ? 100 * v / rate(b, (size_t)copy, j) : NAN,
                         ref >= 0 ? 100 * v / rate(b, (size_t)ref, j) : NAN);
            fprintf(f, " %19s", cell);
        }
        fputc('\n', f);
    }
    if (b->is_mul && b->sig != GEMM_F64)
        fprintf(f, "FP32 peak of this device: %.1f TFLOP/s (%d SMs x 128 lanes x 2 x %.2f GHz)\n",
                peak, b->dev.sm_count, b->dev.clock_ghz);
    if (b->is_mul && b->sig == GEMM_F64)
        fprintf(f, "FP64 CUDA-core peak of this device: %.1f TFLOP/s (%d SMs x 64 lanes x 2 x "
                "%.2f GHz)\n", peak / 2, b->dev.sm_count, b->dev.clock_ghz);
}

int bench_files_begin(struct bench_files *f, const char *prefix, int flags)
{
    char path[sizeof f->prefix + 8];
    int rc;
    memset(f, 0, sizeof *f);
    snprintf(f->prefix, sizeof f->prefix, "%s", prefix);
    snprintf(path, sizeof path, "%s.csv", prefix);
    if ((rc = output_begin(&f->csv, path, flags)))
        return rc;
    snprintf(path, sizeof path, "%s.json", prefix);
    if ((rc = output_begin(&f->json, path, flags)))
        return bench_files_end(f, rc, 1);
    snprintf(path, sizeof path, "%s.svg", prefix);
    if ((rc = output_begin(&f->svg, path, flags)))
        return bench_files_end(f, rc, 1);
    return 0;
}

int bench_files_end(struct bench_files *f, int rc, int quiet)
{
    if (!rc && !(rc = output_commit(&f->csv)) && !(rc = output_commit(&f->json)))
        rc = output_commit(&f->svg);
    output_abort(&f->csv);
    output_abort(&f->json);
    output_abort(&f->svg);
    if (!rc && !quiet)
        fprintf(stderr, "bench: wrote %s.csv, %s.json, %s.svg\n", f->prefix, f->prefix,
                f->prefix);
    return rc;
}

static int write_files(const struct bench *b, const char *prefix, int flags)
{
    long ref = find_kernel(b, b->is_mul ? "cublas" : "geam");
    double peak = device_fp32_peak_gflops(&b->dev) / 1e3;
    const char *unit = b->is_mul ? "tflops" : "gbps";
    const char *type = b->is_mul ? gemm_sigs[b->sig].name : "f32";
    struct bench_files out;
    int rc = bench_files_begin(&out, prefix, flags);
    if (rc)
        return rc;
    FILE *csv = out.csv.f, *json = out.json.f, *svg = out.svg.f;
    fprintf(csv, "op,type,device,date,kernel,shape,batch,m,n,k,ms,%s,pct_of_reference,pct_of_peak\n",
            unit);
    struct json j;
    json_begin(&j, json);
    json_object(&j, NULL);
    json_string(&j, "op", b->is_mul ? "mul" : "transpose");
    json_string(&j, "type", type);
    json_string(&j, "device", b->dev.name);
    json_string(&j, "date", b->date);
    json_list(&j, "results", 1);
    for (size_t i = 0; i < b->n_kernels; i++)
        for (int k = 0; k < b->n_shapes; k++) {
            double v = rate(b, i, k);
            if (!isfinite(v))
                continue;
            const struct shape *s = &b->shapes[k];
            double pct_ref = ref >= 0 ? 100 * v / rate(b, (size_t)ref, k) : NAN;
            double pct_peak = b->is_mul ? 100 * v / (b->sig == GEMM_F64 ? peak / 2 : peak) : NAN;
            fprintf(csv, "%s,%s,\"%s\",%s,%s,%s,%zu,%zu,%zu,%zu,%.5f,%.3f,%.1f,%.1f\n",
                    b->is_mul ? "mul" : "transpose", type, b->dev.name, b->date,
                    kernel_name(b, i), s->label, s->batch, s->m, s->n, s->k,
                    b->ms[i * b->n_shapes + k], v, pct_ref, pct_peak);
            /* mul: BATCHxMxNxK; transpose: rows x columns. */
            size_t dims[4] = { s->batch, s->m, s->n, s->k };
            json_object(&j, NULL);
            json_string(&j, "kernel", kernel_name(b, i));
            if (b->is_mul)
                json_shape(&j, "shape", 4, dims);
            else
                json_shape(&j, "shape", 2, dims + 1);
            json_count(&j, "batch", s->batch);
            json_count(&j, "m", s->m);
            json_count(&j, "n", s->n);
            json_count(&j, "k", s->k);
            json_number(&j, "ms", b->ms[i * b->n_shapes + k]);
            json_number(&j, unit, v);
            json_number(&j, "pct_of_reference", pct_ref);
            json_end(&j);
        }
    json_end(&j);
    json_end(&j);

    /* The heatmap: each GPU kernel that ran against the reference row. */
    const char *names[256];
    const char *labels[GC_MAX_SIZES], *captions[GC_MAX_SIZES];
    char caption_text[GC_MAX_SIZES][24];
    double *values = malloc(b->n_kernels * b->n_shapes * sizeof *values);
    int n_rows = 0;
    if (!values)
        return bench_files_end(&out, gc_fail(GC_EXIT_INPUT, "out of host memory"), 1);
    for (int j = 0; j < b->n_shapes; j++) {
        double r = ref >= 0 ? rate(b, (size_t)ref, j) : NAN;
        snprintf(caption_text[j], sizeof caption_text[j], b->is_mul ? "%.1f" : "%.0f", r);
        labels[j] = b->shapes[j].label;
        captions[j] = isfinite(r) ? caption_text[j] : NULL;
    }
    for (size_t i = 0; i < b->n_kernels && n_rows < 256; i++) {
        if (!has_results(b, i))
            continue;
        names[n_rows] = kernel_name(b, i);
        for (int j = 0; j < b->n_shapes; j++)
            values[n_rows * b->n_shapes + j] =
                ref >= 0 ? 100 * rate(b, i, j) / rate(b, (size_t)ref, j) : NAN;
        n_rows++;
    }
    const char *ref_name = !b->is_mul ? "cuBLAS geam" : gemm_sigs[b->sig].reference != b->sig ? "cuBLAS SGEMM"
                                                                            : "cuBLAS";
    char title[512], subtitle[512];
    snprintf(title, sizeof title, "gemmcli bench: %s on %s", b->name, b->dev.name);
    snprintf(subtitle, sizeof subtitle, "%s; each cell: %% of %s's speed at that shape "
             "(100 x its time / the kernel's), in the same run", b->date, ref_name);
    struct plot_heatmap hm = { title, subtitle, n_rows, b->n_shapes, names, labels, values,
                               captions, b->is_mul ? "cuBLAS TFLOP/s" : "geam GB/s" };
    int bad = plot_heatmap(svg, &hm) != 0;
    free(values);
    if (bad)
        rc = gc_fail(GC_EXIT_OUTPUT, "%s.svg: cannot write the plot", prefix);
    return bench_files_end(&out, rc, b->o->quiet);
}

/* auto's rates from bench b (src/plan/rates.h's rates_fit, the rules a
 * calibration follows too): a row for each kernel auto may pick. */
static int rate_rows(const struct bench *b, double copy_gbps, FILE *f)
{
    int rows = 0;
    for (size_t i = 0; i < b->n_kernels; i++) {
        if (!b->is_mul || !gemm_kernels[i].geometry ||
            !select_auto_candidate(kernel_flags(b, i)) || !has_results(b, i))
            continue;
        struct rate_sample s[GC_MAX_SIZES];
        struct rate_entry e;
        int n = 0;
        for (int j = 0; j < b->n_shapes; j++) {
            mul_problem(b, &b->shapes[j], &s[n].p);
            s[n].p.sig = kernel_sig(b, i);
            s[n].ms = b->ms[i * b->n_shapes + j];
            n += isfinite(s[n].ms) && s[n].ms > 0;
        }
        if (rates_fit(&gemm_kernels[i], kernel_sig(b, i), s, n, b->dev.sm_count, copy_gbps,
                      &e) != 0)
            continue;
        fprintf(f, "    { \"%s\", \"%s\", %.2f, %.1f, %.2f, %.2f },\n", e.type, e.kernel,
                e.tflops, e.gbps, e.slice_eff, e.ragged_eff);
        rows++;
    }
    return rows;
}

/* One row per benchmarked transpose shape: the fastest kernel auto may pick. */
static void transpose_rows(const struct bench *b, FILE *f)
{
    for (int j = 0; j < b->n_shapes; j++) {
        long best = -1;
        for (size_t i = 0; i < b->n_kernels; i++)
            if (select_auto_candidate(kernel_flags(b, i)) && isfinite(rate(b, i, j)) &&
                (best < 0 || rate(b, i, j) > rate(b, (size_t)best, j)))
                best = (long)i;
        if (best >= 0)
            fprintf(f, "    { \"transpose\", \"any\", 1, %zu, %zu, 1, \"%s\", %.2f },   /* GB/s */\n",
                    b->shapes[j].m, b->shapes[j].n, kernel_name(b, (size_t)best),
                    rate(b, (size_t)best, j));
    }
}

/* kernels/auto_table.c from the benches that ran; the rows of types (and
 * of transpose) not benchmarked now are kept from the table built in. */
static int write_auto_table(struct bench *const *benches, int n, const char *path, int flags)
{
    struct gc_output out;
    int rc = output_begin(&out, path, flags);
    if (rc)
        return rc;
    FILE *f = out.f;
    struct gc_device *dev = &benches[0]->dev;
    int reopened = 0;
    if (!dev->open) {
        if ((rc = device_open(dev, benches[0]->o->device, 0))) {
            output_abort(&out);
            return rc;
        }
        reopened = 1;
    }
    double gbps = device_copy_gbps(dev, (size_t)512 << 20);
    if (reopened)
        device_close(dev);
    if (!(gbps > 0)) {
        output_abort(&out);
        return gc_fail(GC_EXIT_GPU, "--auto-table: could not time a device copy");
    }
    fprintf(f, "/* auto's rates, measured by `gemmcli bench --auto-table` on %s, %s\n"
            " * (src/plan/model.c turns them into estimates).  For each signature and kernel\n"
            " * auto may pick: TFLOP/s with every SM busy, or for the memory-bound\n"
            " * ones GB/s moved; and for transpose, the fastest kernel per shape. */\n"
            "#include \"registry.h\"\n\n"
            "const char auto_rate_device[] = \"%s\";\n"
            "const char auto_rate_date[] = \"%s\";\n"
            "const int auto_rate_sm_count = %d;\n"
            "const int auto_rate_clock_mhz = %d;\n"
            "const double auto_rate_mem_gbps = %.0f;\n"
            "const double auto_rate_copy_gbps = %.0f;\n\n"
            "const struct auto_rate auto_rates[] = {\n",
            benches[0]->dev.name, benches[0]->date, benches[0]->dev.name, benches[0]->date,
            benches[0]->dev.sm_count, (int)(benches[0]->dev.clock_ghz * 1e3 + 0.5),
            benches[0]->dev.mem_gbps, gbps);
    unsigned benched = 0;
    int have_transpose = 0;
    for (int i = 0; i < n; i++) {
        if (benches[i]->is_mul) {
            rate_rows(benches[i], gbps, f);
            benched |= 1u << benches[i]->sig;
        } else {
            have_transpose = 1;
        }
    }
    for (size_t i = 0; i < auto_rate_count; i++) {
        int s;
        for (s = 0; s < GEMM_SIG_COUNT; s++)
            if (!strcmp(gemm_sigs[s].name, auto_rates[i].type))
                break;
        if (s < GEMM_SIG_COUNT && !(benched & (1u << s)))
            fprintf(f, "    { \"%s\", \"%s\", %.2f, %.1f, %.2f, %.2f },\n", auto_rates[i].type,
                    auto_rates[i].kernel, auto_rates[i].tflops, auto_rates[i].gbps,
                    auto_rates[i].slice_eff > 0 ? auto_rates[i].slice_eff : 1.0,
                    auto_rates[i].ragged_eff > 0 ? auto_rates[i].ragged_eff : 1.0);
    }
    fputs("};\nconst size_t auto_rate_count = sizeof auto_rates / sizeof auto_rates[0];\n\n"
          "const struct auto_choice auto_choices[] = {\n", f);
    for (int i = 0; i < n; i++)
        if (!benches[i]->is_mul)
            transpose_rows(benches[i], f);
    if (!have_transpose)
        for (size_t i = 0; i < auto_choice_count; i++)
            fprintf(f, "    { \"transpose\", \"any\", 1, %lu, %lu, 1, \"%s\", %.2f },   /* GB/s */\n",
                    auto_choices[i].m, auto_choices[i].n, auto_choices[i].kernel,
                    auto_choices[i].rate);
    fputs("};\nconst size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];\n", f);
    return output_commit(&out);
}

static int bench_one(struct bench *b, const struct gc_opts *o, int is_mul, enum gemm_sig sig)
{
    b->o = o;
    b->is_mul = is_mul;
    b->sig = sig;
    b->n_kernels = is_mul ? gemm_kernel_count : transpose_kernel_count;
    snprintf(b->name, sizeof b->name, is_mul ? "mul %s" : "transpose", gemm_sigs[sig].name);
    int rc = parse_sizes(b, o->bench_sizes ? o->bench_sizes
                              : !is_mul ? default_transpose_sizes
                              : gemm_sigs[sig].bench_order == 1 ? default_ladder_sizes
                              : gemm_sigs[sig].flags & GEMM_SIG_TENSOR_CORES ? default_tensor_core_sizes
                                                                           : default_other_sizes);
    if (rc)
        return rc;
    time_t now = time(NULL);
    strftime(b->date, sizeof b->date, "%Y-%m-%d", gmtime(&now));
    b->ms = malloc(b->n_kernels * b->n_shapes * sizeof *b->ms);
    if (!b->ms)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    for (size_t i = 0; i < b->n_kernels * b->n_shapes; i++)
        b->ms[i] = NAN;
    if (!(rc = device_open(&b->dev, o->device, 0)) && !(rc = device_cublas(&b->dev)) &&
        !(rc = run_all(b))) {
        print_table(b, stdout);
        if (o->bench_out) {
            char prefix[4096];
            snprintf(prefix, sizeof prefix, "%s-%s%s%s", o->bench_out, is_mul ? "mul" : "transpose",
                     is_mul ? "-" : "", is_mul ? gemm_sigs[sig].name : "");
            rc = write_files(b, prefix, o->force ? OUTPUT_FORCE : 0);
        }
    }
    return rc;
}

int bench_run(const struct gc_opts *o, unsigned sigs, int mul, int transpose)
{
    struct bench benches[GEMM_SIG_COUNT + 1];
    memset(benches, 0, sizeof benches);
    struct bench *done[GEMM_SIG_COUNT + 1];
    int n = 0, rc = 0;
    for (int rank = 1; mul && rank <= GEMM_SIG_COUNT && !rc; rank++)
        for (int s = 0; s < GEMM_SIG_COUNT && !rc; s++) {
            if (gemm_sigs[s].bench_order != rank || !(sigs & (1u << s)))
                continue;
            struct bench *b = &benches[n];
            rc = bench_one(b, o, 1, (enum gemm_sig)s);
            device_close(&b->dev);
            done[n++] = b;
        }
    if (!rc && transpose) {
        struct bench *b = &benches[n];
        rc = bench_one(b, o, 0, GEMM_F32);
        device_close(&b->dev);
        done[n++] = b;
    }
    if (!rc && o->auto_table)
        rc = write_auto_table(done, n, o->auto_table, o->force ? OUTPUT_FORCE : 0);
    for (int i = 0; i < n; i++)
        free(done[i]->ms);
    return rc;
}
