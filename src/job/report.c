#include "src/job/report.h"

#include "core/error.h"
#include "src/job/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int is_mul(const struct gc_report *r) { return strcmp(r->command, "mul") == 0; }

/* GFLOP/s for mul, GB/s (bytes read + written) for transpose. */
static double rate(const struct gc_report *r, double ms)
{
    return ms > 0 ? r->work / (ms * 1e6) : 0.0;
}

/* How the summary says who chose the kernel. */
static const char *chosen_by(const struct gc_report *r)
{
    if (!r->kernel_auto)
        return "";
    if (!r->auto_source)
        return " (auto)";
    return strcmp(r->auto_source, "cache") == 0 ? " (auto: tuned, cache)"
                                                : " (auto: tuned, this run)";
}

/* The timed library's errors; beside a result narrower than its output,
 * first as that result's dtype stores it (the figure to set beside the
 * result's own), then before that rounding. */
static void timed_print(FILE *f, const struct gc_verify_result *v)
{
    if (!v->timed_acc_dtype) {
        fprintf(f, "  %s's own errors against the same reference: max rel error %.3g, "
                "rel Frobenius error %.3g\n", v->timed, v->timed_max_rel, v->timed_rel_fro);
        return;
    }
    fprintf(f, "  %s's own errors against the same reference, its output rounded to %s as "
            "this result is: max rel error %.3g, rel Frobenius error %.3g\n", v->timed,
            v->timed_as, v->timed_max_rel, v->timed_rel_fro);
    fprintf(f, "  %s's errors before that rounding (its %s output, the accumulator's): "
            "max rel error %.3g, rel Frobenius error %.3g\n", v->timed, v->timed_acc_dtype,
            v->timed_acc_max_rel, v->timed_acc_rel_fro);
}

void report_print(FILE *f, const struct gc_report *r)
{
    const char *unit = is_mul(r) ? "GFLOP/s" : "GB/s";
    char sa[96], sb[96], so[96];
    gc_shape_text(r->shape_a.ndim, r->shape_a.dims, sa, sizeof sa);
    gc_shape_text(r->shape_b.ndim, r->shape_b.dims, sb, sizeof sb);
    gc_shape_text(r->shape_out.ndim, r->shape_out.dims, so, sizeof so);
    if (is_mul(r))
        fprintf(f, "gemmcli mul: %s @ %s -> %s %s (%s), kernel %s%s on %s\n", sa, sb, so,
                r->dtype, r->compute ? r->compute : "-", r->kernel, chosen_by(r), r->device);
    else
        fprintf(f, "gemmcli transpose: %s -> %s %s, kernel %s%s on %s\n", sa, so, r->dtype,
                r->kernel, chosen_by(r), r->device);
    if (r->tiles[0])
        fprintf(f, "  tiles: %s\n", r->tiles);
    if (r->ranks[0])
        fprintf(f, "  ranks: %s\n", r->ranks);
    if (r->panels[0])
        fprintf(f, "  panels: %s\n", r->panels);
    fprintf(f, "  %-13s %10.3f ms\n", "read", r->read_ms);
    if (r->start_ms > 0)
        fprintf(f, "  %-13s %10.3f ms\n", "GPU start", r->start_ms);
    if (r->uploaded_while_read)
        fprintf(f, "  %-13s %10.3f ms  (%d of the inputs copied while read)\n", "host->device",
                r->h2d_ms, r->uploaded_while_read);
    else
        fprintf(f, "  %-13s %10.3f ms\n", "host->device", r->h2d_ms);
    if (r->repeat > 1)
        fprintf(f, "  %-13s %10.3f ms  %10.1f %s  (median of %d)\n", "kernel", r->kernel_ms,
                rate(r, r->kernel_ms), unit, r->repeat);
    else
        fprintf(f, "  %-13s %10.3f ms  %10.1f %s\n", "kernel", r->kernel_ms,
                rate(r, r->kernel_ms), unit);
    fprintf(f, "  %-13s %10.3f ms\n", "device->host", r->d2h_ms);
    fprintf(f, "  %-13s %10.3f ms\n", "write", r->write_ms);
    fprintf(f, "  %-13s %10.3f ms\n", "total", r->total_ms);
    const struct gc_verify_result *v = &r->verify;
    if (v->done) {
        if (v->timed && v->ref_ms > 0)
            fprintf(f, "  %-13s %10.3f ms  %10.1f %s  (this kernel took %.0f%% of its time)\n",
                    v->timed, v->ref_ms, rate(r, v->ref_ms), unit,
                    100.0 * r->kernel_ms / v->ref_ms);
        if (v->exact)
            fprintf(f, "  verify against %s: %zu of %zu elements differ: %s\n", v->reference,
                    v->mismatches, v->count, v->ok ? "ok" : "FAILED");
        else
            fprintf(f, "  verify against %s: max abs error %.3g, max rel error %.3g, "
                    "rel Frobenius error %.3g (tol %.3g): %s\n", v->reference, v->max_abs,
                    v->max_rel, v->rel_fro, v->tol, v->ok ? "ok" : "FAILED");
        if (v->timed && v->timed_rel_fro >= 0)
            timed_print(f, v);
        if (v->nonfinite_got + v->nonfinite_ref + v->nonfinite_diff)
            fprintf(f, "  non-finite disagreements: %zu inf/nan where %s is finite, %zu finite "
                    "where it is inf/nan, %zu other inf/nan mismatches\n", v->nonfinite_got,
                    v->reference, v->nonfinite_ref, v->nonfinite_diff);
    }
}

void verify_describe_failure(const struct gc_verify_result *v, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    if (v->exact) {
        snprintf(buf, n, "%zu of %zu elements differ from the reference (%s)", v->mismatches,
                 v->count, v->reference);
        return;
    }
#define ADD(...) (used += (size_t)snprintf(buf + used, used < n ? n - used : 0, __VA_ARGS__))
    if (v->nonfinite_got)
        ADD("%zu element%s inf or nan where the reference (%s) is finite; ", v->nonfinite_got,
            v->nonfinite_got == 1 ? " is" : "s are", v->reference);
    if (v->nonfinite_ref)
        ADD("%zu element%s finite where the reference (%s) is inf or nan; ", v->nonfinite_ref,
            v->nonfinite_ref == 1 ? " is" : "s are", v->reference);
    if (v->nonfinite_diff)
        ADD("%zu element%s inf or nan unlike the reference's (%s); ", v->nonfinite_diff,
            v->nonfinite_diff == 1 ? " is" : "s are", v->reference);
    if (used)
        ADD("the elements finite in both have a relative Frobenius error of %.3g (tolerance "
            "%.3g)", v->rel_fro, v->tol);
    else
        ADD("relative Frobenius error %.3g is above the tolerance %.3g", v->rel_fro, v->tol);
#undef ADD
}

void report_shape(struct gc_report_shape *s, int ndim, const size_t *dims)
{
    s->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        s->dims[d] = dims[d];
}

static void verify_json(struct json *j, const struct gc_report *r)
{
    const struct gc_verify_result *v = &r->verify;
    json_object(j, "verify");
    json_string(j, "reference", v->reference);
    json_string(j, "timed", v->timed);
    json_bool(j, "exact", v->exact);
    json_count(j, "mismatches", v->mismatches);
    /* What was not timed or measured is null. */
    int timed_errors = v->timed && v->timed_rel_fro >= 0;
    json_number(j, "timed_rel_frobenius_error", timed_errors ? v->timed_rel_fro : NAN);
    json_number(j, "timed_max_rel_error", timed_errors ? v->timed_max_rel : NAN);
    int acc = timed_errors && v->timed_acc_dtype;
    json_string(j, "timed_accumulator_dtype", acc ? v->timed_acc_dtype : NULL);
    json_number(j, "timed_accumulator_rel_frobenius_error", acc ? v->timed_acc_rel_fro : NAN);
    json_number(j, "timed_accumulator_max_rel_error", acc ? v->timed_acc_max_rel : NAN);
    json_number(j, "reference_ms", v->timed ? v->ref_ms : NAN);
    json_number(j, "percent_of_reference_time",
                v->timed && v->ref_ms > 0 ? 100.0 * r->kernel_ms / v->ref_ms : NAN);
    json_number(j, "max_abs_error", v->max_abs);
    json_number(j, "max_rel_error", v->max_rel);
    json_number(j, "rel_frobenius_error", v->rel_fro);
    json_number(j, "tol", v->tol);
    json_object(j, "nonfinite_mismatches");
    json_count(j, "result_only", v->nonfinite_got);
    json_count(j, "reference_only", v->nonfinite_ref);
    json_count(j, "different", v->nonfinite_diff);
    json_end(j);
    json_bool(j, "ok", v->ok);
    json_end(j);
}

void report_json(FILE *f, const struct gc_report *r)
{
    struct json j;
    json_begin(&j, f);
    json_object(&j, NULL);
    json_string(&j, "command", r->command);
    json_string(&j, "kernel", r->kernel);
    json_bool(&j, "auto", r->kernel_auto);
    json_string(&j, "auto_source", !r->kernel_auto ? NULL
                                   : r->auto_source ? r->auto_source : "shipped");
    if (r->rates_source) {
        json_string(&j, "rates_source", r->rates_source);
        json_string(&j, "rates", r->rates);
    }
    json_string(&j, "device", r->device);
    json_string(&j, "dtype", r->dtype);
    json_shape(&j, "shape_out", r->shape_out.ndim, r->shape_out.dims);
    if (is_mul(r)) {
        json_shape(&j, "shape_a", r->shape_a.ndim, r->shape_a.dims);
        json_shape(&j, "shape_b", r->shape_b.ndim, r->shape_b.dims);
        json_string(&j, "compute", r->compute);
        json_count(&j, "m", r->m);
        json_count(&j, "n", r->n);
        json_count(&j, "k", r->k);
    } else {
        json_shape(&j, "shape_in", r->shape_a.ndim, r->shape_a.dims);
        json_count(&j, "rows", r->m);
        json_count(&j, "cols", r->n);
    }
    json_count(&j, "batch", r->batch);
    json_int(&j, "repeat", r->repeat);
    json_int(&j, "uploaded_while_read", r->uploaded_while_read);
    json_string(&j, "tiles", r->tiles);
    json_string(&j, "ranks", r->ranks);
    json_string(&j, "panels", r->panels);
    json_object(&j, "ms");
    json_number(&j, "read", r->read_ms);
    json_number(&j, "gpu_start", r->start_ms);
    json_number(&j, "host_to_device", r->h2d_ms);
    json_number(&j, "kernel", r->kernel_ms);
    json_number(&j, "device_to_host", r->d2h_ms);
    json_number(&j, "write", r->write_ms);
    json_number(&j, "total", r->total_ms);
    json_end(&j);
    json_number(&j, is_mul(r) ? "kernel_gflops" : "kernel_gbps", rate(r, r->kernel_ms));
    if (r->verify.done)
        verify_json(&j, r);
    json_end(&j);
}
