#include "report.h"

#include <math.h>
#include <string.h>
#include <time.h>

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int is_mul(const struct gc_report *r) { return strcmp(r->command, "mul") == 0; }

/* GFLOP/s for mul, GB/s (bytes read + written) for transpose. */
static double rate(const struct gc_report *r, double ms)
{
    return ms > 0 ? r->work / (ms * 1e6) : 0.0;
}

void report_print(FILE *f, const struct gc_report *r)
{
    const char *unit = is_mul(r) ? "GFLOP/s" : "GB/s";
    if (is_mul(r))
        fprintf(f, "gemmcli mul: %zux%zu @ %zux%zu -> %zux%zu %s, kernel %s%s on %s\n",
                r->m, r->k, r->k, r->n, r->m, r->n, r->dtype, r->kernel,
                r->kernel_auto ? " (auto)" : "", r->device);
    else
        fprintf(f, "gemmcli transpose: %zux%zu -> %zux%zu %s, kernel %s%s on %s\n",
                r->m, r->n, r->n, r->m, r->dtype, r->kernel,
                r->kernel_auto ? " (auto)" : "", r->device);
    fprintf(f, "  %-13s %10.3f ms\n", "read", r->read_ms);
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
        if (v->ref_ms > 0)
            fprintf(f, "  %-13s %10.3f ms  %10.1f %s  (this kernel took %.0f%% of its time)\n",
                    v->reference, v->ref_ms, rate(r, v->ref_ms), unit,
                    100.0 * r->kernel_ms / v->ref_ms);
        fprintf(f, "  verify against %s: max abs error %.3g, max rel error %.3g, "
                "rel Frobenius error %.3g (tol %.3g): %s\n", v->reference, v->max_abs,
                v->max_rel, v->rel_fro, v->tol, v->ok ? "ok" : "FAILED");
    }
}

void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
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
    fprintf(f, ", \"auto\": %s, \"device\": ", r->kernel_auto ? "true" : "false");
    json_string(f, r->device);
    fputs(", \"dtype\": ", f);
    json_string(f, r->dtype);
    if (is_mul(r))
        fprintf(f, ", \"m\": %zu, \"n\": %zu, \"k\": %zu, ", r->m, r->n, r->k);
    else
        fprintf(f, ", \"rows\": %zu, \"cols\": %zu, ", r->m, r->n);
    fprintf(f, "\"repeat\": %d, \"ms\": {", r->repeat);
    json_num(f, "read", r->read_ms, 1);
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
        fputs(", ", f);
        json_num(f, "reference_ms", v->ref_ms, 1);
        json_num(f, "percent_of_reference_time",
                 v->ref_ms > 0 ? 100.0 * r->kernel_ms / v->ref_ms : NAN, 1);
        json_num(f, "max_abs_error", v->max_abs, 1);
        json_num(f, "max_rel_error", v->max_rel, 1);
        json_num(f, "rel_frobenius_error", v->rel_fro, 1);
        json_num(f, "tol", v->tol, 0);
        fprintf(f, ", \"ok\": %s}", v->ok ? "true" : "false");
    }
    fputs("}\n", f);
}
