/* gemmcli convert, info and kernels: the commands that run no kernel. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "device.h"
#include "error.h"
#include "io.h"
#include "output.h"
#include "progress.h"
#include "report.h"

int cmd_emit_report(const struct gc_opts *o, const struct gc_report *r)
{
    if (o->json) {
        FILE *f = output_is_stdout(o->output) ? stderr : stdout;
        report_json(f, r);
        if ((fflush(f) != 0 || ferror(f)) && f == stdout)
            return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error: %s", strerror(errno));
    } else if (!o->quiet) {
        report_print(stderr, r);
    }
    return 0;
}

int cmd_finish(const struct gc_opts *o, int fmt, struct gc_output *out, int streamed,
               struct gc_matrix *result, enum gc_dtype dtype, struct gc_report *r, double t0,
               struct gc_progress *prog)
{
    int rc = 0;
    if (!streamed) {
        progress_phase(prog, "writing %s", gc_display_name(o->output, 1));
        if ((rc = io_to_c_order(result, dtype, NULL)))
            return rc;
        double t = now_ms();
        if ((rc = output_begin(out, o->output, io_format_is_binary(fmt))) ||
            (rc = io_write_matrix(out, o, fmt, result)))
            return rc;
        r->write_ms = now_ms() - t;
    }
    r->total_ms = now_ms() - t0;
    progress_end(prog);
    if ((rc = cmd_emit_report(o, r)))
        return rc;
    return output_commit(out);
}

int cmd_convert(const struct gc_opts *o)
{
    struct gc_opts oo = *o;
    if (oo.n_operands == 2 && !oo.output) {
        oo.output = oo.operands[1];
        oo.n_operands = 1;
    }
    if (oo.n_operands != 1 || !oo.output)
        return gc_fail(GC_EXIT_USAGE, "convert takes one input and one output: "
                       "convert IN -o OUT (see 'gemmcli convert --help')");
    o = &oo;
    int fb = format_by_extension(o->operands[0]);
    int fmt = io_output_format(o, fb >= 0 ? fb : GC_FMT_CSV);
    if (fmt < 0)
        return -fmt;
    struct gc_matrix m = { 0 };
    double t0 = now_ms();
    int rc = io_read_operand(o, 0, o->operands[0], NULL, &m);
    double t1 = now_ms();
    if (!rc)
        rc = io_to_c_order(&m, o->out_dtype >= 0 ? (enum gc_dtype)o->out_dtype : m.dtype, NULL);
    struct gc_output out = { 0 };
    if (!rc && !(rc = output_begin(&out, o->output, io_format_is_binary(fmt))) &&
        !(rc = io_write_matrix(&out, o, fmt, &m)) && !o->quiet)
        fprintf(stderr, "gemmcli convert: %zux%zu %s -> %s: read %.3f ms, write %.3f ms\n",
                m.rows, m.cols, gc_dtypes[m.dtype].name, gc_formats[fmt].name, t1 - t0,
                now_ms() - t1);
    if (!rc)
        rc = output_commit(&out);
    output_abort(&out);
    gc_matrix_free(&m);
    return rc;
}

static int info_one(const struct gc_opts *o, const char *path, int first)
{
    struct gc_input in;
    int rc = input_open(&in, path);
    if (rc)
        return rc;
    int fmt = o->in_format >= 0 ? o->in_format : format_detect(&in, 0);
    struct gc_read_opts ro = o->read;
    if (o->n_shapes) {
        ro.has_shape = 1;
        ro.rows = o->shapes[0][0];
        ro.cols = o->shapes[0][1];
    }
    struct gc_info info;
    memset(&info, 0, sizeof info);
    info.file_bytes = -1;
    /* format_detect has reported why when it finds no format. */
    rc = fmt < 0 ? GC_EXIT_INPUT : gc_formats[fmt].info(&in, &ro, &info);
    if (!rc) {
        info.format = fmt;
        const char *order = info.fortran_order ? "F" : "C";
        if (o->json) {
            fputs(first ? "" : ",\n", stdout);
            fputs("  {\"file\": ", stdout);
            json_string(stdout, path);
            fprintf(stdout, ", \"format\": \"%s\", \"dtype\": \"%s\", \"shape\": [%zu, %zu], "
                    "\"order\": \"%s\", \"big_endian\": %s", gc_formats[fmt].name,
                    gc_dtypes[info.dtype].name, info.rows, info.cols, order,
                    info.big_endian ? "true" : "false");
            if (fmt == GC_FMT_NPY)
                fprintf(stdout, ", \"npy_version\": \"%u.%u\", \"header_bytes\": %zu",
                        info.version_major, info.version_minor, info.header_bytes);
            if (info.file_bytes >= 0)
                fprintf(stdout, ", \"file_bytes\": %lld", (long long)info.file_bytes);
            fputs("}", stdout);
        } else {
            printf("%s: %s", path, gc_formats[fmt].name);
            if (fmt == GC_FMT_NPY)
                printf(" v%u.%u", info.version_major, info.version_minor);
            printf(", %s%s, %zux%zu, %s order", gc_dtypes[info.dtype].name,
                   info.big_endian ? " big-endian" : "", info.rows, info.cols, order);
            if (info.file_bytes >= 0)
                printf(", %lld bytes", (long long)info.file_bytes);
            putchar('\n');
        }
    }
    input_close(&in);
    return rc;
}

int cmd_info(const struct gc_opts *o)
{
    if (o->n_operands < 1)
        return gc_fail(GC_EXIT_USAGE, "info takes one or more files (see 'gemmcli info --help')");
    int worst = 0, first = 1;
    if (o->json)
        fputs("[\n", stdout);
    for (int i = 0; i < o->n_operands; i++) {
        int rc = info_one(o, o->operands[i], first);
        if (!rc)
            first = 0;
        else if (!worst)
            worst = rc;
    }
    if (o->json)
        fputs("\n]\n", stdout);
    if (fflush(stdout) != 0 || ferror(stdout))
        return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return worst;
}

struct kernel_row {
    const char *name, *op, *idea, *source, *file;
    unsigned flags;
    kernel_attr_fn attr;
};

static struct kernel_row gemm_row(size_t i)
{
    const struct gemm_kernel *k = &gemm_kernels[i];
    return (struct kernel_row){ k->name, "mul", k->idea, k->source, k->file, k->flags, k->attr };
}

static struct kernel_row transpose_row(size_t i)
{
    const struct transpose_kernel *k = &transpose_kernels[i];
    return (struct kernel_row){ k->name, k->flags & KERNEL_BENCH_ONLY ? "copy" : "transpose",
                                k->idea, k->source, k->file, k->flags, k->attr };
}

static void print_row(const struct gc_opts *o, const struct kernel_row *r, int dev_ok, int first)
{
    struct kernel_attr a;
    int have_attr = o->details && dev_ok && r->attr && r->attr(&a) == cudaSuccess;
    if (o->details && dev_ok && r->attr && !have_attr)
        cudaGetLastError();
    if (o->json) {
        printf("%s  {\"name\": ", first ? "" : ",\n");
        json_string(stdout, r->name);
        printf(", \"operation\": \"%s\", \"idea\": ", r->op);
        json_string(stdout, r->idea);
        fputs(", \"source\": ", stdout);
        json_string(stdout, r->source);
        fputs(", \"file\": ", stdout);
        json_string(stdout, r->file);
        printf(", \"runs_on\": \"%s\"", r->flags & KERNEL_HOST ? "cpu" : "gpu");
        if (have_attr)
            printf(", \"registers\": %d, \"smem_bytes\": %zu, \"local_bytes\": %zu, "
                   "\"threads\": %d, \"blocks_per_sm\": %d", a.regs,
                   a.smem_static + a.smem_dynamic, a.local_bytes, a.threads, a.blocks_per_sm);
        fputs("}", stdout);
        return;
    }
    printf("%-16s %-9s %-52s %s", r->name, r->op, r->idea, r->source);
    if (have_attr)
        printf("\n%16s regs %d, smem %zu B, local %zu B, %d threads, %d blocks/SM", "", a.regs,
               a.smem_static + a.smem_dynamic, a.local_bytes, a.threads, a.blocks_per_sm);
    putchar('\n');
}

int cmd_kernels(const struct gc_opts *o)
{
    if (o->n_operands)
        return gc_fail(GC_EXIT_USAGE, "kernels takes no operands");
    int dev_ok = 0;
    struct gc_device dev;
    if (o->details) {
        if (device_present() && device_open(&dev, o->device, 0) == 0)
            dev_ok = 1;
        else
            gc_warn("no CUDA device: --details shows no per-device figures");
    }
    if (o->json)
        fputs("[\n", stdout);
    else
        printf("%-16s %-9s %-52s %s\n", "NAME", "OP", "IDEA", "SOURCE");
    int first = 1;
    for (size_t i = 0; i < gemm_kernel_count; i++, first = 0) {
        struct kernel_row r = gemm_row(i);
        print_row(o, &r, dev_ok, first);
    }
    for (size_t i = 0; i < transpose_kernel_count; i++, first = 0) {
        struct kernel_row r = transpose_row(i);
        print_row(o, &r, dev_ok, first);
    }
    if (o->json)
        fputs("\n]\n", stdout);
    else if (o->details && dev_ok)
        printf("\n(on %s, %d SMs)\n", dev.name, dev.sm_count);
    if (dev_ok)
        device_close(&dev);
    if (fflush(stdout) != 0 || ferror(stdout))
        return gc_fail(GC_EXIT_OUTPUT, "<stdout>: write error");
    return 0;
}
