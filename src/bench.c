/* gemmcli bench: every kernel of one operation, and cuBLAS, timed in one
 * process on the same inputs.  Each timed run uses the next of several
 * input sets, so that the L2 cache never holds the operands from the run
 * before; the figure is the median of the runs after a warm-up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "device.h"
#include "error.h"
#include "options.h"
#include "output.h"
#include "plot.h"
#include "report.h"

#define MAX_SETS 16
#define CELL_BUDGET_MS 300.0   /* timed runs per kernel and shape, about */
#define MAX_RUN_MS 1500.0      /* a kernel slower than this at a shape is skipped */
#define MAX_REPS 50

struct shape { size_t m, n, k; char label[48]; };

struct bench {
    const struct gc_opts *o;
    struct gc_device dev;
    int is_mul;
    struct shape shapes[GC_MAX_SIZES];
    int n_shapes;
    size_t n_kernels;
    double *ms;                 /* n_kernels x n_shapes; NAN: not run */
    char date[16];
};

static const char default_mul_sizes[] =
    "1024,2048,4096,8192,4097,127x129x255,1000x3000x500,256x256x65536,65536x64x1024";
static const char default_transpose_sizes[] = "4096,8192,16384,7001x3000";

static int parse_sizes(struct bench *b, const char *list)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (b->n_shapes == GC_MAX_SIZES)
            return gc_fail(GC_EXIT_USAGE, "--sizes: at most %d sizes", GC_MAX_SIZES);
        unsigned long long v[3];
        char extra;
        int n = sscanf(tok, "%llux%llux%llu%c", &v[0], &v[1], &v[2], &extra);
        struct shape *s = &b->shapes[b->n_shapes];
        if (n == 1 && b->is_mul)
            *s = (struct shape){ v[0], v[0], v[0], "" };
        else if (n == 1)
            *s = (struct shape){ v[0], v[0], 1, "" };
        else if (n == 2 && !b->is_mul)
            *s = (struct shape){ v[0], v[1], 1, "" };
        else if (n == 3 && b->is_mul)
            *s = (struct shape){ v[0], v[1], v[2], "" };
        else
            return gc_fail(GC_EXIT_USAGE, "--sizes: '%s' is not %s", tok,
                           b->is_mul ? "N or MxNxK" : "N or RxC");
        if (!s->m || !s->n || !s->k || s->m > 1u << 30 || s->n > 1u << 30 || s->k > 1u << 30)
            return gc_fail(GC_EXIT_USAGE, "--sizes: '%s' is out of range", tok);
        if (n == 1)
            snprintf(s->label, sizeof s->label, "%llu", v[0]);
        else
            snprintf(s->label, sizeof s->label, "%s", tok);
        b->n_shapes++;
    }
    return b->n_shapes ? 0 : gc_fail(GC_EXIT_USAGE, "--sizes: no sizes given");
}

static void fill_random(float *x, size_t n, unsigned long long seed)
{
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)((s >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

/* Device buffers for one shape: `sets` copies of the inputs and one output. */
struct operands {
    int sets;
    float *a[MAX_SETS], *b[MAX_SETS];
    float *c;
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
    size_t a_n = b->is_mul ? s->m * s->k : s->m * s->n;
    size_t b_n = b->is_mul ? s->k * s->n : 0;
    size_t c_n = s->m * s->n;
    size_t set_bytes = (a_n + b_n) * sizeof(float);
    int sets = (int)((3 * b->dev.l2_bytes) / set_bytes) + 2;
    ops->sets = sets > MAX_SETS ? MAX_SETS : sets;
    int rc = device_check_memory(&b->dev, set_bytes * ops->sets + c_n * sizeof(float),
                                 "this benchmark shape");
    if (rc)
        return rc;
    float *host = malloc((a_n > b_n ? a_n : b_n) * sizeof *host);
    if (!host)
        return gc_fail(GC_EXIT_GPU, "out of host memory");
    rc = CUDA_CALL(cudaMalloc((void **)&ops->c, c_n * sizeof(float)));
    for (int i = 0; i < ops->sets && !rc; i++) {
        if ((rc = CUDA_CALL(cudaMalloc((void **)&ops->a[i], a_n * sizeof(float)))) ||
            (b_n && (rc = CUDA_CALL(cudaMalloc((void **)&ops->b[i], b_n * sizeof(float))))))
            break;
        if (i == 0) {
            fill_random(host, a_n, 1);
            rc = CUDA_CALL(cudaMemcpy(ops->a[0], host, a_n * sizeof(float),
                                      cudaMemcpyHostToDevice));
            if (!rc && b_n) {
                fill_random(host, b_n, 2);
                rc = CUDA_CALL(cudaMemcpy(ops->b[0], host, b_n * sizeof(float),
                                          cudaMemcpyHostToDevice));
            }
        } else {
            rc = CUDA_CALL(cudaMemcpy(ops->a[i], ops->a[0], a_n * sizeof(float),
                                      cudaMemcpyDeviceToDevice));
            if (!rc && b_n)
                rc = CUDA_CALL(cudaMemcpy(ops->b[i], ops->b[0], b_n * sizeof(float),
                                          cudaMemcpyDeviceToDevice));
        }
    }
    free(host);
    return rc;
}

static cudaError_t launch(struct bench *b, size_t kernel, const struct shape *s,
                          const struct operands *ops, int set)
{
    struct launch_env env = device_launch_env(&b->dev);
    if (b->is_mul) {
        struct sgemm_problem p = { (int)s->m, (int)s->n, (int)s->k, 1.0f, 0.0f,
                                   ops->a[set], ops->b[set], ops->c };
        return gemm_kernels[kernel].launch(&p, &env);
    }
    struct transpose_problem p = { (int)s->m, (int)s->n, sizeof(float), ops->a[set], ops->c };
    return transpose_kernels[kernel].launch(&p, &env);
}

static int time_cell(struct bench *b, size_t kernel, const struct shape *s,
                     const struct operands *ops, double *median)
{
    float ms[MAX_REPS];
    int reps = 1, rc = 0;
    for (int r = -1; r < reps; r++) {   /* r == -1: the warm-up, which sizes reps */
        int set = (r + 1) % ops->sets;
        float t;
        if ((rc = CUDA_CALL(cudaEventRecord(b->dev.start, b->dev.stream))) ||
            (rc = CUDA_CALL(launch(b, kernel, s, ops, set))) ||
            (rc = CUDA_CALL(cudaEventRecord(b->dev.stop, b->dev.stream))) ||
            (rc = CUDA_CALL(cudaEventSynchronize(b->dev.stop))) ||
            (rc = CUDA_CALL(cudaEventElapsedTime(&t, b->dev.start, b->dev.stop))))
            return rc;
        if (r < 0) {
            double want = CELL_BUDGET_MS / (t > 1e-3 ? t : 1e-3);
            reps = want < 3 ? 3 : want > MAX_REPS ? MAX_REPS : (int)want;
            if (t > MAX_RUN_MS)
                reps = 1;
        } else {
            ms[r] = t;
        }
    }
    *median = device_median_ms(ms, reps);
    return 0;
}

static int is_host(const struct bench *b, size_t i)
{
    return b->is_mul ? (gemm_kernels[i].flags & KERNEL_HOST) != 0
                     : (transpose_kernels[i].flags & KERNEL_HOST) != 0;
}

static const char *kernel_name(const struct bench *b, size_t i)
{
    return b->is_mul ? gemm_kernels[i].name : transpose_kernels[i].name;
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
    return b->is_mul ? 2.0 * s->m * s->n * s->k / 1e9 : 2.0 * s->m * s->n * sizeof(float) / 1e9;
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
            fprintf(stderr, "bench: %s (%d input sets)\n", s->label, ops.sets);
        for (size_t i = 0; i < b->n_kernels; i++) {
            if (is_host(b, i))
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

static void print_table(const struct bench *b, FILE *f)
{
    long ref = find_kernel(b, b->is_mul ? "cublas" : "geam");
    long copy = b->is_mul ? -1 : find_kernel(b, "copy");
    double peak = device_fp32_peak_gflops(&b->dev) / 1e3;
    fprintf(f, "\n%s on %s, %s; %s\n", b->is_mul ? "mul" : "transpose", b->dev.name, b->date,
            b->is_mul ? "TFLOP/s (% of cuBLAS)" : "GB/s read+written (% of copy, % of geam)");
    fprintf(f, "%-16s", "kernel");
    for (int j = 0; j < b->n_shapes; j++)
        fprintf(f, " %19s", b->shapes[j].label);
    fputc('\n', f);
    for (size_t i = 0; i < b->n_kernels; i++) {
        if (is_host(b, i))
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
    if (b->is_mul)
        fprintf(f, "FP32 peak of this device: %.1f TFLOP/s (%d SMs x 128 lanes x 2 x %.2f GHz)\n",
                peak, b->dev.sm_count, b->dev.clock_ghz);
}

static int write_files(const struct bench *b, const char *prefix)
{
    long ref = find_kernel(b, b->is_mul ? "cublas" : "geam");
    double peak = device_fp32_peak_gflops(&b->dev) / 1e3;
    const char *unit = b->is_mul ? "tflops" : "gbps";

    char csv_path[4200], json_path[4200], svg_path[4200];
    snprintf(csv_path, sizeof csv_path, "%s.csv", prefix);
    snprintf(json_path, sizeof json_path, "%s.json", prefix);
    snprintf(svg_path, sizeof svg_path, "%s.svg", prefix);
    struct gc_output out_csv = { 0 }, out_json = { 0 }, out_svg = { 0 };
    int rc;
    if ((rc = output_begin(&out_csv, csv_path, 0)) ||
        (rc = output_begin(&out_json, json_path, 0)) ||
        (rc = output_begin(&out_svg, svg_path, 0))) {
        output_abort(&out_csv);
        output_abort(&out_json);
        return rc;
    }
    FILE *csv = out_csv.f, *json = out_json.f, *svg = out_svg.f;
    fprintf(csv, "op,device,date,kernel,shape,m,n,k,ms,%s,pct_of_reference,pct_of_peak\n", unit);
    fprintf(json, "{\"op\": \"%s\", \"device\": ", b->is_mul ? "mul" : "transpose");
    json_string(json, b->dev.name);
    fprintf(json, ", \"date\": \"%s\", \"results\": [", b->date);
    int first = 1;
    for (size_t i = 0; i < b->n_kernels; i++)
        for (int j = 0; j < b->n_shapes && !is_host(b, i); j++) {
            double v = rate(b, i, j);
            if (!isfinite(v))
                continue;
            const struct shape *s = &b->shapes[j];
            double pct_ref = ref >= 0 ? 100 * v / rate(b, (size_t)ref, j) : NAN;
            double pct_peak = b->is_mul ? 100 * v / peak : NAN;
            fprintf(csv, "%s,\"%s\",%s,%s,%s,%zu,%zu,%zu,%.5f,%.3f,%.1f,%.1f\n",
                    b->is_mul ? "mul" : "transpose", b->dev.name, b->date, kernel_name(b, i),
                    s->label, s->m, s->n, s->k, b->ms[i * b->n_shapes + j], v, pct_ref, pct_peak);
            fprintf(json, "%s\n  {\"kernel\": \"%s\", \"shape\": \"%s\", \"m\": %zu, \"n\": %zu, "
                    "\"k\": %zu, \"ms\": %.5f, \"%s\": %.3f, \"pct_of_reference\": %.1f}",
                    first ? "" : ",", kernel_name(b, i), s->label, s->m, s->n, s->k,
                    b->ms[i * b->n_shapes + j], unit, v, isfinite(pct_ref) ? pct_ref : -1);
            first = 0;
        }
    fputs("\n]}\n", json);

    /* The plot: one line per GPU kernel. */
    const char *names[256];
    const char *labels[GC_MAX_SIZES];
    double *values = malloc(b->n_kernels * b->n_shapes * sizeof *values);
    int n_series = 0;
    if (!values) {
        output_abort(&out_csv);
        output_abort(&out_json);
        output_abort(&out_svg);
        return gc_fail(GC_EXIT_OUTPUT, "out of memory");
    }
    for (int j = 0; j < b->n_shapes; j++)
        labels[j] = b->shapes[j].label;
    for (size_t i = 0; i < b->n_kernels && n_series < 256; i++) {
        if (is_host(b, i))
            continue;
        names[n_series] = kernel_name(b, i);
        for (int j = 0; j < b->n_shapes; j++)
            values[n_series * b->n_shapes + j] = rate(b, i, j);
        n_series++;
    }
    char title[512];
    snprintf(title, sizeof title, "gemmcli %s kernels on %s, %s", b->is_mul ? "mul" : "transpose",
             b->dev.name, b->date);
    struct plot p = { title, b->is_mul ? "TFLOP/s" : "GB/s (read + written)", b->n_shapes,
                      n_series, labels, names, values };
    int bad = plot_svg(svg, &p) != 0;
    free(values);
    if (bad)
        rc = gc_fail(GC_EXIT_OUTPUT, "%s: cannot write the plot", svg_path);
    /* All three files or none. */
    if (!rc && !(rc = output_commit(&out_csv)) && !(rc = output_commit(&out_json)))
        rc = output_commit(&out_svg);
    output_abort(&out_csv);
    output_abort(&out_json);
    output_abort(&out_svg);
    if (rc)
        return rc;
    if (!b->o->quiet)
        fprintf(stderr, "bench: wrote %s.csv, %s.json, %s.svg\n", prefix, prefix, prefix);
    return 0;
}

static int auto_eligible(const struct bench *b, size_t i)
{
    unsigned f = b->is_mul ? gemm_kernels[i].flags : transpose_kernels[i].flags;
    return !(f & (KERNEL_HOST | KERNEL_REFERENCE | KERNEL_BENCH_ONLY | KERNEL_NO_AUTO));
}

/* One row per benchmarked shape: the fastest kernel auto may pick. */
static void auto_rows(const struct bench *b, FILE *f)
{
    for (int j = 0; j < b->n_shapes; j++) {
        long best = -1;
        for (size_t i = 0; i < b->n_kernels; i++)
            if (auto_eligible(b, i) && isfinite(rate(b, i, j)) &&
                (best < 0 || rate(b, i, j) > rate(b, (size_t)best, j)))
                best = (long)i;
        if (best >= 0)
            fprintf(f, "    { \"%s\", %zu, %zu, %zu, \"%s\" },   /* %.2f %s */\n",
                    b->is_mul ? "mul" : "transpose", b->shapes[j].m, b->shapes[j].n,
                    b->is_mul ? b->shapes[j].k : 1, kernel_name(b, (size_t)best),
                    rate(b, (size_t)best, j), b->is_mul ? "TFLOP/s" : "GB/s");
    }
}

static int write_auto_table(struct bench *const *benches, int n, const char *path)
{
    struct gc_output out;
    int rc = output_begin(&out, path, 0);
    if (rc)
        return rc;
    FILE *f = out.f;
    fprintf(f, "/* auto's choices, measured by `gemmcli bench --auto-table` on %s, %s.\n"
            " * For each benchmarked shape, the fastest kernel auto may pick. */\n"
            "#include \"registry.h\"\n\nconst struct auto_choice auto_choices[] = {\n",
            benches[0]->dev.name, benches[0]->date);
    for (int i = 0; i < n; i++)
        auto_rows(benches[i], f);
    fputs("};\nconst size_t auto_choice_count = sizeof auto_choices / sizeof auto_choices[0];\n", f);
    return output_commit(&out);
}

static int bench_op(struct bench *b, const struct gc_opts *o, int is_mul)
{
    b->o = o;
    b->is_mul = is_mul;
    b->n_kernels = is_mul ? gemm_kernel_count : transpose_kernel_count;
    int rc = parse_sizes(b, o->bench_sizes ? o->bench_sizes
                              : is_mul ? default_mul_sizes : default_transpose_sizes);
    if (rc)
        return rc;
    time_t now = time(NULL);
    strftime(b->date, sizeof b->date, "%Y-%m-%d", gmtime(&now));
    b->ms = malloc(b->n_kernels * b->n_shapes * sizeof *b->ms);
    if (!b->ms)
        return gc_fail(GC_EXIT_GPU, "out of host memory");
    for (size_t i = 0; i < b->n_kernels * b->n_shapes; i++)
        b->ms[i] = NAN;
    if (!(rc = device_open(&b->dev, o->device, 0)) && !(rc = device_cublas(&b->dev)) &&
        !(rc = run_all(b))) {
        print_table(b, stdout);
        if (o->bench_out) {
            char prefix[4096];
            snprintf(prefix, sizeof prefix, "%s-%s", o->bench_out, is_mul ? "mul" : "transpose");
            rc = write_files(b, prefix);
        }
    }
    return rc;
}

int cmd_bench(const struct gc_opts *o)
{
    if (o->n_operands)
        return gc_fail(GC_EXIT_USAGE, "bench takes no operands (sizes go in --sizes)");
    int all = strcmp(o->bench_op, "all") == 0;
    if (all && o->bench_sizes)
        return gc_fail(GC_EXIT_USAGE, "--sizes needs --op mul or --op transpose");
    struct bench benches[2];
    memset(benches, 0, sizeof benches);
    struct bench *done[2];
    int n = 0, rc = 0;
    for (int op = 0; op < 2 && !rc; op++) {
        int is_mul = op == 0;
        if (!all && is_mul != (strcmp(o->bench_op, "mul") == 0))
            continue;
        struct bench *b = &benches[n];
        rc = bench_op(b, o, is_mul);
        device_close(&b->dev);
        done[n++] = b;
    }
    if (!rc && o->auto_table)
        rc = write_auto_table(done, n, o->auto_table);
    for (int i = 0; i < n; i++)
        free(done[i]->ms);
    if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
        rc = gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return rc;
}
