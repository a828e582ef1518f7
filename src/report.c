#include "report.h"

#include "../core/error.h"

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

void report_print(FILE *f, const struct gc_report *r)
{
    const char *unit = is_mul(r) ? "GFLOP/s" : "GB/s";
    if (is_mul(r))
        fprintf(f, "gemmcli mul: %s @ %s -> %s %s (%s), kernel %s%s on %s\n", r->shape_a,
                r->shape_b, r->shape_out, r->dtype, r->compute ? r->compute : "-", r->kernel,
                chosen_by(r), r->device);
    else
        fprintf(f, "gemmcli transpose: %s -> %s %s, kernel %s%s on %s\n", r->shape_a,
                r->shape_out, r->dtype, r->kernel, chosen_by(r), r->device);
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
            fprintf(f, "  %s's own errors against the same reference: max rel error %.3g, "
                    "rel Frobenius error %.3g\n", v->timed, v->timed_max_rel, v->timed_rel_fro);
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

/* Length of the well-formed UTF-8 sequence at s (1-4), or 0 if the byte
 * there does not start one (overlong forms and surrogates are not). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
        (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

void json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        int n = utf8_len(s);
        if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s);
        } else if (*s < 0x20) {
            fprintf(f, "\\u%04x", *s);
        } else if (n == 0) {
            /* A byte that is not UTF-8 (a file name may hold any bytes):
             * written as Python's surrogateescape writes it, U+DC00 + byte,
             * so that the JSON stays valid and the name recoverable. */
            fprintf(f, "\\udc%02x", *s);
            n = 1;
        } else {
            fwrite(s, 1, (size_t)n, f);
        }
        s += n ? n : 1;
    }
    fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v, int comma)
{
    if (isfinite(v))
        fprintf(f, "\"%s\": %.6g%s", key, v, comma ? ", " : "");
    else
        fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
}

void report_json(FILE *f, const struct gc_report *r)
{
    fputs("{\"command\": ", f);
    json_string(f, r->command);
    fputs(", \"kernel\": ", f);
    json_string(f, r->kernel);
    fprintf(f, ", \"auto\": %s, ", r->kernel_auto ? "true" : "false");
    if (r->kernel_auto)
        fprintf(f, "\"auto_source\": \"%s\", ", r->auto_source ? r->auto_source : "shipped");
    fputs("\"device\": ", f);
    json_string(f, r->device);
    fputs(", \"dtype\": ", f);
    json_string(f, r->dtype);
    fputs(", \"shape_out\": ", f);
    json_string(f, r->shape_out);
    if (is_mul(r)) {
        fputs(", \"shape_a\": ", f);
        json_string(f, r->shape_a);
        fputs(", \"shape_b\": ", f);
        json_string(f, r->shape_b);
        fputs(", \"compute\": ", f);
        json_string(f, r->compute ? r->compute : "");
        fprintf(f, ", \"m\": %zu, \"n\": %zu, \"k\": %zu, \"batch\": %zu, ", r->m, r->n, r->k,
                r->batch);
    } else {
        fputs(", \"shape_in\": ", f);
        json_string(f, r->shape_a);
        fprintf(f, ", \"rows\": %zu, \"cols\": %zu, \"batch\": %zu, ", r->m, r->n, r->batch);
    }
    fprintf(f, "\"repeat\": %d, \"uploaded_while_read\": %d, \"tiles\": ", r->repeat,
            r->uploaded_while_read);
    json_string(f, r->tiles);
    fputs(", \"ranks\": ", f);
    json_string(f, r->ranks);
    fputs(", \"panels\": ", f);
    json_string(f, r->panels);
    fputs(", \"ms\": {", f);
    json_num(f, "read", r->read_ms, 1);
    json_num(f, "gpu_start", r->start_ms, 1);
    json_num(f, "host_to_device", r->h2d_ms, 1);
    json_num(f, "kernel", r->kernel_ms, 1);
    json_num(f, "device_to_host", r->d2h_ms, 1);
    json_num(f, "write", r->write_ms, 1);
    json_num(f, "total", r->total_ms, 0);
    fputs("}, ", f);
    json_num(f, is_mul(r) ? "kernel_gflops" : "kernel_gbps", rate(r, r->kernel_ms), 0);
    const struct gc_verify_result *v = &r->verify;
    if (v->done) {
        fputs(", \"verify\": {\"reference\": ", f);
        json_string(f, v->reference);
        fputs(", \"timed\": ", f);
        json_string(f, v->timed ? v->timed : "");
        fprintf(f, ", \"exact\": %s, \"mismatches\": %zu, ", v->exact ? "true" : "false",
                v->mismatches);
        json_num(f, "timed_rel_frobenius_error", v->timed_rel_fro >= 0 ? v->timed_rel_fro : NAN, 1);
        json_num(f, "timed_max_rel_error", v->timed_rel_fro >= 0 ? v->timed_max_rel : NAN, 1);
        json_num(f, "reference_ms", v->ref_ms, 1);
        json_num(f, "percent_of_reference_time",
                 v->ref_ms > 0 ? 100.0 * r->kernel_ms / v->ref_ms : NAN, 1);
        json_num(f, "max_abs_error", v->max_abs, 1);
        json_num(f, "max_rel_error", v->max_rel, 1);
        json_num(f, "rel_frobenius_error", v->rel_fro, 1);
        json_num(f, "tol", v->tol, 1);
        fprintf(f, "\"nonfinite_mismatches\": {\"result_only\": %zu, \"reference_only\": %zu, "
                "\"different\": %zu}", v->nonfinite_got, v->nonfinite_ref, v->nonfinite_diff);
        fprintf(f, ", \"ok\": %s}", v->ok ? "true" : "false");
    }
    fputs("}\n", f);
}
