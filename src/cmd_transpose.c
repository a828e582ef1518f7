/* gemmcli transpose: out = in^T, elements moved bit for bit. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "device.h"
#include "../kernels/transpose.h"
#include "error.h"
#include "io.h"
#include "progress.h"
#include "report.h"
#include "select.h"
#include "stream.h"

struct transpose_job {
    const struct gc_opts *o;
    const struct transpose_kernel *kern;
    struct gc_matrix in, result;
    struct gc_report rep;
    char device_name[256];
    int out_format;
    enum gc_dtype out_dtype;
    int streamed;        /* the result went from the device to the output */
    struct gc_output out;
    struct gc_progress progress;
};

static int alloc_result(struct transpose_job *j)
{
    j->result = (struct gc_matrix){ .rows = j->in.cols, .cols = j->in.rows, .dtype = j->in.dtype };
    if (gc_matrix_alloc(&j->result, NULL))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for a %zux%zu result", j->result.rows,
                       j->result.cols);
    return 0;
}

struct transpose_arg {
    const struct transpose_kernel *kern;
    struct transpose_problem p;
    struct launch_env env;
};

struct host_transpose {
    const struct transpose_kernel *kern;
    struct transpose_problem p;
};

static int run_host_transpose(void *arg)
{
    const struct host_transpose *h = arg;
    h->kern->host(&h->p);
    return 0;
}

static cudaError_t run_transpose(void *arg)
{
    const struct transpose_arg *l = arg;
    return l->kern->launch(&l->p, &l->env);
}

/* One element of `got` against the reference: bit for bit, except that any
 * NaN matches any NaN (cuBLAS geam computes 1*x + 0*y, which may rewrite a
 * NaN's payload). */
static int same_element(const struct gc_matrix *got, const void *ref, size_t i)
{
    size_t es = gc_dtypes[got->dtype].size;
    const unsigned char *a = (const unsigned char *)got->data + i * es;
    const unsigned char *b = (const unsigned char *)ref + i * es;
    if (memcmp(a, b, es) == 0)
        return 1;
    if (got->dtype == GC_F32) {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return isnan(x) && isnan(y);
    }
    if (got->dtype == GC_F64) {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return isnan(x) && isnan(y);
    }
    return 0;
}

/* Exact comparison: a transpose moves elements, so anything but the same
 * output is wrong.  The error figures are computed through doubles. */
static void compare_exact(const struct gc_matrix *got, const void *ref,
                          struct gc_verify_result *v)
{
    size_t count = got->rows * got->cols;
    struct gc_matrix r = *got;
    r.data = (void *)ref;
    double diff2 = 0, ref2 = 0;
    v->done = 1;
    v->ok = 1;
    v->max_abs = v->max_rel = v->rel_fro = 0;
    for (size_t i = 0; i < count; i++) {
        if (same_element(got, ref, i))
            continue;
        v->ok = 0;
        double g = gc_matrix_get(got, i / got->cols, i % got->cols);
        double e = gc_matrix_get(&r, i / got->cols, i % got->cols);
        double d = isnan(g - e) ? INFINITY : fabs(g - e);
        diff2 += d * d;
        ref2 += e * e;
        if (d > v->max_abs)
            v->max_abs = d;
        if (e != 0 && d / fabs(e) > v->max_rel)
            v->max_rel = d / fabs(e);
    }
    if (!v->ok)
        v->rel_fro = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
}

/* The reference for --verify: cuBLAS geam where it moves this element size,
 * else the host transpose. */
static const struct transpose_kernel *reference_kernel(size_t elem, int on_device)
{
    const struct transpose_kernel *geam = transpose_kernel_find("geam");
    if (on_device && geam && (geam->elem_sizes & (1u << elem)))
        return geam;
    return transpose_kernel_find("cpu");
}

struct in_place_arg {
    void *data;
    int n;
    size_t elem;
    struct launch_env env;
};

static cudaError_t run_in_place(void *arg)
{
    const struct in_place_arg *l = arg;
    return transpose_inplace_square_launch(l->data, l->n, l->elem, &l->env);
}

/* A square matrix too large to hold twice on the device is transposed in
 * place, by swapping tiles across the diagonal.  Each run transposes the
 * result of the run before, so the number of timed runs is rounded up to
 * an even one: with the warm-up, an odd number of runs leaves the transpose.
 * --verify checks it against the host transpose. */
static int transpose_in_place(struct transpose_job *j, struct gc_device *dev, size_t elem,
                              size_t bytes)
{
    void *d = NULL;
    int rc;
    int repeat = j->o->repeat % 2 ? j->o->repeat + 1 : j->o->repeat;
    j->rep.kernel = "inplace (too large to hold twice)";
    j->rep.repeat = repeat;
    if ((rc = alloc_result(j)) || (rc = CUDA_CALL(cudaMalloc(&d, bytes))))
        return rc;
    double t = now_ms();
    if ((rc = CUDA_CALL(cudaMemcpy(d, j->in.data, bytes, cudaMemcpyHostToDevice))))
        goto out;
    j->rep.h2d_ms = now_ms() - t;
    struct in_place_arg l = { d, (int)j->in.rows, elem, device_launch_env(dev) };
    if ((rc = device_time_runs(dev, run_in_place, NULL, &l, repeat, &j->rep.kernel_ms)))
        goto out;
    t = now_ms();
    if ((rc = CUDA_CALL(cudaMemcpy(j->result.data, d, bytes, cudaMemcpyDeviceToHost))))
        goto out;
    j->rep.d2h_ms = now_ms() - t;
    if (j->o->verify) {
        const struct transpose_kernel *cpu = transpose_kernel_find("cpu");
        void *ref = malloc(bytes);
        if (!ref || !cpu) {
            free(ref);
            rc = gc_fail(GC_EXIT_GPU, "out of host memory for the reference result");
            goto out;
        }
        struct transpose_problem p = { (int)j->in.rows, (int)j->in.cols, elem, j->in.data, ref };
        cpu->host(&p);
        j->rep.verify.reference = "cpu";
        compare_exact(&j->result, ref, &j->rep.verify);
        free(ref);
    }
out:
    cudaFree(d);
    return rc;
}

static int transpose_device(struct transpose_job *j, size_t elem, size_t bytes)
{
    const struct gc_opts *o = j->o;
    struct gc_device dev;
    progress_phase(&j->progress, "starting the GPU");
    int rc = device_open(&dev, o->device, 1);
    if (rc)
        return rc;
    snprintf(j->device_name, sizeof j->device_name, "%s", dev.name);
    j->rep.device = j->device_name;

    const struct transpose_kernel *ref_kern = o->verify ? reference_kernel(elem, 1) : NULL;
    int ref_on_device = ref_kern && !(ref_kern->flags & KERNEL_HOST);
    void *d_in = NULL, *d_out = NULL, *d_ref = NULL, *ref = NULL;
    size_t free_b = 0, total_b = 0;
    if ((rc = CUDA_CALL(cudaMemGetInfo(&free_b, &total_b))))
        goto out;
    if (j->in.rows == j->in.cols && bytes * (2 + ref_on_device) > free_b && bytes <= free_b) {
        rc = transpose_in_place(j, &dev, elem, bytes);
        goto out;
    }
    if ((rc = device_check_memory(&dev, bytes * (2 + ref_on_device), "this transpose")) ||
        (rc = CUDA_CALL(cudaMalloc(&d_in, bytes))) ||
        (rc = CUDA_CALL(cudaMalloc(&d_out, bytes))) ||
        (ref_on_device && (rc = CUDA_CALL(cudaMalloc(&d_ref, bytes)))))
        goto out;

    progress_phase(&j->progress, "copying to the GPU");
    double t = now_ms();
    if ((rc = CUDA_CALL(cudaMemcpyAsync(d_in, j->in.data, bytes, cudaMemcpyHostToDevice,
                                        dev.stream))) ||
        (rc = CUDA_CALL(cudaStreamSynchronize(dev.stream))))
        goto out;
    j->rep.h2d_ms = now_ms() - t;
    int stream = !o->verify && stream_can_write(j->out_format, j->in.dtype, j->out_dtype);
    if (!stream && (rc = alloc_result(j)))
        goto out;

    if (((j->kern->flags & KERNEL_REFERENCE) || ref_on_device) && (rc = device_cublas(&dev)))
        goto out;
    struct transpose_arg l = { j->kern, { (int)j->in.rows, (int)j->in.cols, elem, d_in, d_out },
                               device_launch_env(&dev) };
    progress_phase(&j->progress, "running %s", j->kern->name);
    if ((rc = device_time_runs(&dev, run_transpose, NULL, &l, o->repeat, &j->rep.kernel_ms)))
        goto out;
    progress_phase(&j->progress, "writing %s", gc_display_name(o->output, 1));

    if (stream) {
        if (!(rc = output_begin(&j->out, o->output, 1)))
            rc = stream_write_result(&j->out, j->out_format, &dev, d_out, j->in.cols,
                                     j->in.rows, j->in.dtype, &j->rep.d2h_ms,
                                     &j->rep.write_ms);
        j->streamed = rc == 0;
        goto out;
    }
    t = now_ms();
    if ((rc = CUDA_CALL(cudaMemcpyAsync(j->result.data, d_out, bytes, cudaMemcpyDeviceToHost,
                                        dev.stream))) ||
        (rc = CUDA_CALL(cudaStreamSynchronize(dev.stream))))
        goto out;
    j->rep.d2h_ms = now_ms() - t;

    if (ref_kern) {
        if (!(ref = malloc(bytes))) {
            rc = gc_fail(GC_EXIT_GPU, "out of host memory for the reference result");
            goto out;
        }
        j->rep.verify.reference = ref_kern->name;
        if (ref_on_device) {
            struct transpose_arg r = l;
            r.kern = ref_kern;
            r.p.out = d_ref;
            if ((rc = device_time_runs(&dev, run_transpose, NULL, &r, o->repeat,
                                       &j->rep.verify.ref_ms)) ||
                (rc = CUDA_CALL(cudaMemcpy(ref, d_ref, bytes, cudaMemcpyDeviceToHost))))
                goto out;
        } else {
            struct transpose_problem p = { (int)j->in.rows, (int)j->in.cols, elem,
                                           j->in.data, ref };
            ref_kern->host(&p);
        }
        compare_exact(&j->result, ref, &j->rep.verify);
    }
out:
    free(ref);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_ref);
    device_close(&dev);
    return rc;
}

int cmd_transpose(const struct gc_opts *o)
{
    /* Both "transpose IN OUT" and "transpose IN -o OUT". */
    struct gc_opts oo = *o;
    if (oo.n_operands == 2 && !oo.output) {
        oo.output = oo.operands[1];
        oo.n_operands = 1;
    }
    if (oo.n_operands != 1)
        return gc_fail(GC_EXIT_USAGE, "transpose takes one input and one output "
                       "(see 'gemmcli transpose --help')");
    if (!oo.output)
        return gc_fail(GC_EXIT_USAGE, "transpose needs an output: OUT or -o FILE");
    o = &oo;
    int fb = format_by_extension(o->operands[0]);
    int fmt = io_output_format(o, fb >= 0 ? fb : GC_FMT_CSV);
    if (fmt < 0)
        return -fmt;

    struct transpose_job j = { .o = o, .out_format = fmt };
    const struct transpose_kernel *named = transpose_kernel_find(o->kernel);
    struct gc_device_warm warm = { 0 };
    if (!named || !(named->flags & KERNEL_HOST))
        device_warm_start(&warm, o->device);
    j.rep.command = "transpose";
    j.rep.repeat = o->repeat;
    j.rep.device = "cpu";
    j.rep.verify.tol = 0;
    progress_begin(&j.progress, o->quiet || o->json);
    progress_phase(&j.progress, "reading %s", gc_display_name(o->operands[0], 0));
    double t0 = now_ms();
    int rc = io_read_operand(o, 0, o->operands[0], NULL, &j.in);
    if (!rc)
        rc = io_to_c_order(&j.in, j.in.dtype, NULL);
    if (rc)
        goto out;
    if (j.in.rows > INT_MAX || j.in.cols > INT_MAX) {
        rc = gc_fail(GC_EXIT_INPUT, "%s: %zux%zu: dimensions above %d are not supported",
                     gc_display_name(o->operands[0], 0), j.in.rows, j.in.cols, INT_MAX);
        goto out;
    }
    j.rep.read_ms = now_ms() - t0;
    j.rep.m = j.in.rows;
    j.rep.n = j.in.cols;
    size_t elem = gc_dtypes[j.in.dtype].size;
    size_t bytes = j.in.rows * j.in.cols * elem;
    j.rep.work = 2.0 * (double)bytes;
    enum gc_dtype out_dtype = o->out_dtype >= 0 ? (enum gc_dtype)o->out_dtype : j.in.dtype;
    j.out_dtype = out_dtype;
    j.rep.dtype = gc_dtypes[out_dtype].name;

    if (bytes == 0) {
        j.rep.kernel = "none (empty matrix)";
        if ((rc = alloc_result(&j)))
            goto out;
    } else {
        j.kern = select_transpose(o->kernel, j.in.rows, j.in.cols, elem, &j.rep.kernel_auto,
                                  &rc);
        if (!j.kern)
            goto out;
        j.rep.kernel = j.kern->name;
        if (j.kern->flags & KERNEL_HOST) {
            if ((rc = alloc_result(&j)))
                goto out;
            struct host_transpose h = { j.kern, { (int)j.in.rows, (int)j.in.cols, elem,
                                                  j.in.data, j.result.data } };
            if ((rc = host_time_runs(run_host_transpose, NULL, &h, o->repeat,
                                     &j.rep.kernel_ms)))
                goto out;
            if (o->verify) {
                /* The host kernel is its own reference; check it against the
                 * definition element by element. */
                void *ref = malloc(bytes);
                if (!ref) {
                    rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
                    goto out;
                }
                for (size_t r = 0; r < j.in.rows; r++)
                    for (size_t c = 0; c < j.in.cols; c++)
                        memcpy((char *)ref + (c * j.in.rows + r) * elem,
                               (const char *)j.in.data + (r * j.in.cols + c) * elem, elem);
                j.rep.verify.reference = "definition";
                compare_exact(&j.result, ref, &j.rep.verify);
                free(ref);
            }
        } else {
            device_warm_wait(&warm);
            if ((rc = transpose_device(&j, elem, bytes)))
                goto out;
        }
    }
    if (o->verify && !j.rep.verify.done) {
        j.rep.verify.reference = "none";
        j.rep.verify.done = j.rep.verify.ok = 1;
    }
    if (o->verify && !j.rep.verify.ok) {
        progress_end(&j.progress);
        if (!(rc = cmd_emit_report(o, &j.rep)))
            rc = gc_fail(GC_EXIT_VERIFY, "verification failed: the transpose differs from %s; "
                         "%s not written", j.rep.verify.reference,
                         gc_display_name(o->output, 1));
        goto out;
    }

    rc = cmd_finish(o, fmt, &j.out, j.streamed, &j.result, out_dtype, &j.rep, t0, &j.progress);
out:
    output_abort(&j.out);
    progress_end(&j.progress);
    device_warm_wait(&warm);
    gc_matrix_free(&j.in);
    gc_matrix_free(&j.result);
    return rc;
}
