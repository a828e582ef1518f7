/* gemmcli kernels: the registry's two tables as one listing (with
 * --details, each kernel's resources on this device), and with --for
 * SHAPE the kernels auto weighs for one product, by the model's estimate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/error.h"
#include "src/cli/commands.h"
#include "src/job/device.h"
#include "src/job/facts.h"
#include "src/job/json.h"
#include "src/plan/matmul.h"
#include "src/plan/model.h"
#include "src/plan/rates.h"
#include "src/plan/select.h"

struct kernel_row {
    const char *name, *op, *idea, *source, *file;
    char types[96], runs_on[32];
    unsigned flags;
    int cc_min;
    kernel_attr_fn attr;
    const char *shown;         /* the table's TYPES: types, or "all" for every signature */
};

static struct kernel_row gemm_row(size_t i)
{
    const struct gemm_kernel *k = &gemm_kernels[i];
    struct kernel_row r = { k->name, "mul", k->idea, k->source, k->file, "", "", k->flags,
                            k->cc_min, k->attr, NULL };
    gemm_sigs_text(k->sigs, r.types, sizeof r.types);
    r.shown = k->sigs == (1u << GEMM_SIG_COUNT) - 1 ? "all" : NULL;
    return r;
}

static struct kernel_row transpose_row(size_t i)
{
    const struct transpose_kernel *k = &transpose_kernels[i];
    struct kernel_row r = { k->name, k->flags & KERNEL_BENCH_ONLY ? "copy" : "transpose", k->idea,
                            k->source, k->file, "", "", k->flags, 0, k->attr, NULL };
    if (k->flags & KERNEL_FLOAT_VALUES) {
        snprintf(r.types, sizeof r.types, "f32,f64");
        return r;
    }
    size_t used = 0;
    for (unsigned es = 1; es <= 8; es *= 2)
        if (k->elem_sizes & (1u << es))
            used += (size_t)snprintf(r.types + used, sizeof r.types - used, "%s%u", used ? "," : "",
                                     es);
    snprintf(r.types + used, sizeof r.types - used, "-byte");
    return r;
}

static void fill_runs_on(struct kernel_row *r)
{
    if (r->flags & KERNEL_HOST)
        snprintf(r->runs_on, sizeof r->runs_on, "cpu");
    else if (r->cc_min)
        snprintf(r->runs_on, sizeof r->runs_on, "gpu %d.%d%s", r->cc_min / 10, r->cc_min % 10,
                 r->flags & KERNEL_ARCH_EXACT ? "a" : "+");
    else
        snprintf(r->runs_on, sizeof r->runs_on, "gpu");
}

/* Column widths: the longest entry of each column over all rows; on a
 * terminal, IDEA cut to fit its width (`cut`), or left out where it would
 * be too narrow to read (idea < 0), and SOURCE only with --details
 * (`source`). */
struct widths { int name, op, types, runs, idea, cut, source; };

/* The columns of the terminal on standard output, or 0 where it is none. */
static int terminal_columns(void)
{
    if (!isatty(STDOUT_FILENO))
        return 0;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *env = getenv("COLUMNS");
    int c = env ? atoi(env) : 0;
    return c > 0 ? c : 80;
}

/* A terminal's table: IDEA cut where the line would pass its last column,
 * and left out where fewer than 24 columns are left for it (--json and a
 * wider terminal have it whole). */
static void fit_terminal(struct widths *w, int columns, int details)
{
    w->source = details;
    int room = columns - 1 - (w->name + w->op + w->types + w->runs + 4 * 2);
    if (details)
        return;
    if (room < 24) {
        w->idea = -1;
    } else if (room < w->idea) {
        w->idea = room;
        w->cut = 1;
    }
}

static void widen(struct widths *w, const struct kernel_row *r)
{
#define W(f, s) if ((int)strlen(s) > w->f) w->f = (int)strlen(s)
    W(name, r->name);
    W(op, r->op);
    W(types, r->shown ? r->shown : r->types);
    W(runs, r->runs_on);
    W(idea, r->idea);
#undef W
}

static void print_row(const struct gc_opts *o, const struct kernel_row *r, const struct widths *w,
                      const struct gc_device *dev, struct json *j)
{
    struct kernel_attr a;
    int dev_cc = dev ? dev->cc_major * 10 + dev->cc_minor : 0;
    int usable = dev && !(r->flags & KERNEL_HOST) && dev_cc >= r->cc_min &&
                 (!(r->flags & KERNEL_ARCH_EXACT) || dev_cc == r->cc_min);
    int have_attr = o->details && usable && r->attr && r->attr(&a) == cudaSuccess;
    if (o->details && usable && r->attr && !have_attr)
        cudaGetLastError();
    if (o->json) {
        json_object(j, NULL);
        json_string(j, "name", r->name);
        json_string(j, "operation", r->op);
        json_string(j, "types", r->types);
        json_string(j, "runs_on", r->flags & KERNEL_HOST ? "cpu" : "gpu");
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", r->cc_min / 10, r->cc_min % 10);
        json_string(j, "min_compute_capability", r->cc_min ? cc : NULL);
        json_string(j, "idea", r->idea);
        json_string(j, "source", r->source);
        json_string(j, "file", r->file);
        if (dev && !(r->flags & KERNEL_HOST))
            json_bool(j, "available", usable);
        if (have_attr) {
            json_int(j, "registers", a.regs);
            json_count(j, "smem_bytes", a.smem_static + a.smem_dynamic);
            json_count(j, "local_bytes", a.local_bytes);
            json_int(j, "threads", a.threads);
            json_int(j, "blocks_per_sm", a.blocks_per_sm);
        }
        json_end(j);
        return;
    }
    printf("%-*s  %-*s  %-*s  %-*s", w->name, r->name, w->op, r->op, w->types,
           r->shown ? r->shown : r->types,
           w->idea < 0 ? 0 : w->runs, r->runs_on);
    if (w->cut && (int)strlen(r->idea) > w->idea)
        printf("  %.*s...", w->idea - 3, r->idea);
    else if (w->idea >= 0)
        printf("  %-*s", w->source ? w->idea : 0, r->idea);
    if (w->source)
        printf("  %s", r->source);
    if (have_attr)
        printf("\n%*s  regs %d, smem %zu B, local %zu B, %d threads, %d blocks/SM", w->name, "",
               a.regs, a.smem_static + a.smem_dynamic, a.local_bytes, a.threads,
               a.blocks_per_sm);
    else if (o->details && dev && !(r->flags & KERNEL_HOST) && !usable)
        printf("\n%*s  unavailable on this device (compute capability %d.%d)", w->name, "",
               dev_cc / 10, dev_cc % 10);
    putchar('\n');
}

struct estimate_row {
    const struct gemm_kernel *k;
    enum gemm_sig sig;
    struct model_estimate e;
    double convert_ms;         /* in e.ms: the operands (and C) converted for this signature */
    double result_ms;          /* the part of it that is C's */
};

static int cmp_estimate(const void *x, const void *y)
{
    double a = ((const struct estimate_row *)x)->e.ms, b = ((const struct estimate_row *)y)->e.ms;
    return a < b ? -1 : a > b;
}

/* kernels --for SHAPE: every kernel auto may pick that can compute the
 * product, fastest first by the model, and auto's choice.  On the device
 * when there is one, else on the one the model's rates come from; with
 * --rates FILE, on the GPU the file's rates were measured on. */
static int kernels_for(const struct gc_opts *o)
{
    const struct gc_shape_opt *sh = &o->kernels_for;
    size_t batch = sh->ndim == 4 ? sh->dims[0] : 1;
    const size_t *d = sh->dims + (sh->ndim == 4);
    struct gc_tensor a = { 0 }, b = { 0 };
    a.dtype = b.dtype = o->out_dtype >= 0 ? (enum gc_dtype)o->out_dtype : GC_F32;
    gc_tensor_set_stack(&a, batch, d[0], d[2]);
    gc_tensor_set_stack(&b, batch, d[2], d[1]);
    struct matmul_plan plan;
    int rc = matmul_plan(&a, &b, o->compute, "A", "B", &plan);
    if (rc)
        return rc;
    /* auto's choice is the product plan's (src/plan/product.h), as mul
     * --dry-run prints it: within the FP64 bound for integers; none for an
     * empty product. */
    struct device_facts facts;
    if (o->rates_file) {
        if ((rc = facts_of_rates_file(o->rates_file, &facts)))
            return rc;
    } else {
        facts_of_device(o, &facts);
    }
    int cc = facts.cc, sms = facts.sm_count;
    char where[600];
    if (o->rates_file)
        snprintf(where, sizeof where, "%s (%d SMs, compute capability %d.%d), as %s says",
                 facts.name, sms, cc / 10, cc % 10, o->rates_file);
    else if (facts.present)
        snprintf(where, sizeof where, "%s (%d SMs)", facts.name, sms);
    else
        snprintf(where, sizeof where, "the model's device (%d SMs, compute capability %d.%d)",
                 sms, cc / 10, cc % 10);
    struct product_ask ask = { .kernel = "auto", .a_count = gc_tensor_count(&a),
                               .b_count = gc_tensor_count(&b), .alpha = 1 };
    struct product_plan *pp = malloc(sizeof *pp);
    if (!pp)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    rc = product_plan_make(&ask, &plan, &facts, pp);
    const struct gemm_kernel *pick = pp->route[0].pick.kern;
    enum gemm_sig pick_sig = pp->route[0].pick.sig;
    free(pp);
    if (rc)
        return rc;
    struct estimate_row rows[GEMM_SIG_COUNT * 64];
    int n = 0;
    char why[512];
    for (int i = 0; i < plan.n_sigs; i++) {
        struct gemm_problem p;
        matmul_problem(&plan, plan.sigs[i], 1, 0, &p);
        p.cc = cc;
        double conv = select_convert_ms(&plan, plan.sigs[i], 1);
        double result = conv - select_convert_ms(&plan, plan.sigs[i], 0);
        for (size_t j = 0; j < gemm_kernel_count && n < (int)(sizeof rows / sizeof rows[0]); j++) {
            const struct gemm_kernel *k = &gemm_kernels[j];
            if (select_auto_candidate(k->flags) && gemm_can_implement(k, &p, why, sizeof why)) {
                rows[n] = (struct estimate_row){ k, plan.sigs[i], model_estimate(k, &p, sms),
                                                 conv, result };
                rows[n++].e.ms += conv;
            }
        }
    }
    qsort(rows, (size_t)n, sizeof rows[0], cmp_estimate);
    double gflop = 2.0 * (double)plan.batch * (double)plan.m * (double)plan.n * (double)plan.k / 1e9;
    const struct model_rates *rates = rates_active();
    char rates_line[1024];
    if (o->rates_file)
        snprintf(rates_line, sizeof rates_line, "measured on %s (driver %d.%d, %s), read from %s",
                 rates->measured_on, rates->device.driver / 1000,
                 rates->device.driver % 1000 / 10, rates->date, o->rates_file);
    else
        rates_describe(rates, rates_line, sizeof rates_line);
    if (o->json) {
        size_t shape[4] = { batch, d[0], d[1], d[2] };
        struct json j;
        json_begin(&j, stdout);
        json_object(&j, NULL);
        json_shape(&j, "shape", 4, shape);
        json_string(&j, "device", where);
        json_string(&j, "auto", pick ? pick->name : NULL);
        json_string(&j, "auto_sig", pick ? gemm_sigs[pick_sig].name : NULL);
        json_object(&j, "rates");
        json_string(&j, "source", rates_source_name(rates->source));
        json_string(&j, "measured_on", rates->measured_on);
        json_string(&j, "date", rates->date);
        json_number(&j, "compute_scale", rates->compute_scale);
        json_number(&j, "memory_scale", rates->memory_scale);
        json_string(&j, "words", rates_line);
        json_string(&j, "file", o->rates_file);
        json_string(&j, "build", rates_fingerprint());
        json_end(&j);
        json_list(&j, "candidates", 1);
        for (int i = 0; i < n; i++) {
            json_object(&j, NULL);
            json_string(&j, "kernel", rows[i].k->name);
            json_string(&j, "sig", gemm_sigs[rows[i].sig].name);
            json_number(&j, "ms", rows[i].e.ms);
            json_number(&j, "compute_ms", rows[i].e.compute_ms);
            json_number(&j, "memory_ms", rows[i].e.memory_ms);
            json_number(&j, "store_ms", rows[i].e.store_ms);
            json_number(&j, "convert_ms", rows[i].convert_ms);
            json_number(&j, "result_convert_ms", rows[i].result_ms);
            json_number(&j, "overhead_ms", rows[i].e.overhead_ms);
            json_number(&j, "util", rows[i].e.util);
            json_int(&j, "slices", rows[i].e.slices);
            json_end(&j);
        }
        json_end(&j);
        json_end(&j);
    } else {
        printf("%zu x %zu x %zu x %zu (%.4g GFLOP) on %s\n", batch, d[0], d[1], d[2], gflop, where);
        printf("rates: %s\n", rates_line);
        printf("%-18s %-7s %11s %11s %11s %11s %6s %6s\n", "KERNEL", "SIG", "EST. MS", "COMPUTE",
               "MEMORY", "STORES", "UTIL", "SLICES");
        for (int i = 0; i < n; i++) {
            if (!isfinite(rows[i].e.ms)) {
                printf("%-18s %-7s %11s  (no measured rate)\n", rows[i].k->name,
                       gemm_sigs[rows[i].sig].name, "-");
                continue;
            }
            printf("%-18s %-7s %11.4f %11.4f %11.4f %11.4f %5.0f%% %6d%s\n", rows[i].k->name,
                   gemm_sigs[rows[i].sig].name, rows[i].e.ms, rows[i].e.compute_ms,
                   rows[i].e.memory_ms, rows[i].e.store_ms, 100 * rows[i].e.util, rows[i].e.slices,
                   rows[i].k == pick && rows[i].sig == pick_sig ? "  <- auto" : "");
        }
        for (int i = 0; i < plan.n_sigs; i++) {
            const struct gemm_sig_info *si = &gemm_sigs[plan.sigs[i]];
            double conv = select_convert_ms(&plan, plan.sigs[i], 1);
            int ops = (plan.a_dtype != si->in) + (plan.b_dtype != si->in);
            if (conv <= 0)
                continue;
            printf("%s: EST. MS includes %.4f ms converting", si->name, conv);
            if (ops)
                printf(" %s to %s", ops == 2 ? "A and B" : plan.a_dtype != si->in ? "A" : "B",
                       gc_dtypes[si->in].name);
            if (plan.result != si->out)
                printf("%s C from %s to %s", ops ? " and" : "", gc_dtypes[si->out].name,
                       gc_dtypes[plan.result].name);
            putchar('\n');
        }
        if (pick)
            printf("auto: %s (%s)\n", pick->name, gemm_sigs[pick_sig].name);
        else
            printf("auto: none (an empty product runs no kernel)\n");
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return 0;
}

int kernels_check_usage(const struct gc_opts *o)
{
    if (o->n_operands)
        return gc_fail(GC_EXIT_USAGE, "kernels takes no operands");
    if (o->rates_file && !o->kernels_for_given)
        return gc_fail(GC_EXIT_USAGE, "--rates goes with --for: it plans a product for the GPU "
                       "the file's rates were measured on");
    return 0;
}

int cmd_kernels(const struct gc_opts *o)
{
    if (o->kernels_for_given)
        return kernels_for(o);
    int dev_ok = 0;
    struct gc_device dev;
    if (o->details) {
        if (device_present() && device_open(&dev, o->device, 0) == 0)
            dev_ok = 1;
        else
            gc_warn("no CUDA device: --details shows no per-device figures");
    }
    size_t n = gemm_kernel_count + transpose_kernel_count;
    struct kernel_row *rows = malloc(n * sizeof *rows);
    if (!rows)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    struct widths w = { 4, 2, 5, 7, 4, 0, 1 };
    for (size_t i = 0; i < n; i++) {
        rows[i] = i < gemm_kernel_count ? gemm_row(i) : transpose_row(i - gemm_kernel_count);
        fill_runs_on(&rows[i]);
        widen(&w, &rows[i]);
    }
    int columns = o->json || o->wide ? 0 : terminal_columns();
    if (columns)
        fit_terminal(&w, columns, o->details);
    struct json j;
    json_begin(&j, stdout);
    if (o->json)
        json_list(&j, NULL, 1);
    else if (w.source)
        printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w.name, "NAME", w.op, "OP", w.types, "TYPES",
               w.runs, "RUNS ON", w.idea, "IDEA", "SOURCE");
    else if (w.idea >= 0)
        printf("%-*s  %-*s  %-*s  %-*s  %s\n", w.name, "NAME", w.op, "OP", w.types, "TYPES",
               w.runs, "RUNS ON", "IDEA");
    else
        printf("%-*s  %-*s  %-*s  %s\n", w.name, "NAME", w.op, "OP", w.types, "TYPES",
               "RUNS ON");
    for (size_t i = 0; i < n; i++)
        print_row(o, &rows[i], &w, dev_ok ? &dev : NULL, &j);
    free(rows);
    if (o->json)
        json_end(&j);
    else if (o->details && dev_ok)
        printf("\n(on %s, compute capability %d.%d, %d SMs)\n", dev.name, dev.cc_major,
               dev.cc_minor, dev.sm_count);
    if (dev_ok)
        device_close(&dev);
    if (fflush(stdout) != 0 || ferror(stdout))
        return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return 0;
}
