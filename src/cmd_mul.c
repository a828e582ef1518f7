/* gemmcli mul: C = alpha*A*B + beta*C0. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "device.h"
#include "../kernels/convert.h"
#include "error.h"
#include "io.h"
#include "progress.h"
#include "report.h"
#include "select.h"
#include "stream.h"
#include "verify.h"

struct mul_job {
    const struct gc_opts *o;
    const struct gemm_kernel *kern;
    struct gc_matrix a, b, c0, c;
    size_t m, n, k;
    struct gc_report rep;
    char device_name[256];
    int out_format;
    enum gc_dtype out_dtype;
    int streamed;        /* the result went from the device to the output */
    struct gc_output out;
    struct gc_progress progress;
};

struct launch_arg {
    const struct gemm_kernel *kern;
    struct sgemm_problem p;
    struct launch_env env;
    const float *c0;     /* device copy of C0 to restore before each run */
    size_t c_bytes;
};

static cudaError_t run_gemm(void *arg)
{
    const struct launch_arg *l = arg;
    return l->kern->launch(&l->p, &l->env);
}

static cudaError_t restore_c(void *arg)
{
    const struct launch_arg *l = arg;
    return cudaMemcpyAsync(l->p.c, l->c0, l->c_bytes, cudaMemcpyDeviceToDevice, l->env.stream);
}

/* Times l->kern on the device buffers in `l` (C restored from C0 before
 * each run when beta != 0); the result is left in l->p.c. */
static int time_kernel(struct gc_device *dev, struct launch_arg *l, int repeat, double *ms)
{
    return device_time_runs(dev, run_gemm, l->p.beta != 0 ? restore_c : NULL, l, repeat, ms);
}

static int alloc_result(struct mul_job *j)
{
    j->c = (struct gc_matrix){ .rows = j->m, .cols = j->n, .dtype = GC_F32 };
    if (gc_matrix_alloc(&j->c, NULL))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for a %zux%zu result", j->m, j->n);
    return 0;
}

static int needs_conversion(const struct gc_matrix *m)
{
    return m->data && (m->dtype != GC_F32 || (m->fortran_order && m->rows > 1 && m->cols > 1));
}

/* Device memory for the largest operand that must be converted there. */
static size_t staging_bytes(const struct gc_matrix *a, const struct gc_matrix *b,
                            const struct gc_matrix *c0)
{
    const struct gc_matrix *ms[3] = { a, b, c0 };
    size_t most = 0;
    for (int i = 0; i < 3; i++)
        if (needs_conversion(ms[i])) {
            size_t bytes = ms[i]->rows * ms[i]->cols * gc_dtypes[ms[i]->dtype].size;
            most = bytes > most ? bytes : most;
        }
    return most;
}

/* Copies operand `m` to `dst` as row-major float32: directly when it is
 * that already, else as it was read, converted on the device. */
static int upload(struct gc_device *dev, const struct gc_matrix *m, float *dst)
{
    size_t bytes = m->rows * m->cols * gc_dtypes[m->dtype].size;
    if (!needs_conversion(m))
        return CUDA_CALL(cudaMemcpyAsync(dst, m->data, bytes, cudaMemcpyHostToDevice,
                                         dev->stream));
    void *raw = NULL;
    int rc;
    rc = CUDA_CALL(cudaMallocAsync(&raw, bytes, dev->stream));
    if (!rc)
        rc = CUDA_CALL(cudaMemcpyAsync(raw, m->data, bytes, cudaMemcpyHostToDevice,
                                       dev->stream));
    if (!rc)
        rc = CUDA_CALL(convert_to_f32_launch(raw, m->dtype, m->fortran_order, m->rows, m->cols,
                                             dst, dev->stream));
    if (raw)
        cudaFreeAsync(raw, dev->stream);
    return rc;
}

static int mul_device(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    struct gc_device dev;
    progress_phase(&j->progress, "starting the GPU");
    int rc = device_open(&dev, o->device, 1);
    if (rc)
        return rc;
    snprintf(j->device_name, sizeof j->device_name, "%s", dev.name);
    j->rep.device = j->device_name;

    size_t a_bytes = j->m * j->k * sizeof(float), b_bytes = j->k * j->n * sizeof(float);
    size_t c_bytes = j->m * j->n * sizeof(float);
    int with_c0 = o->beta != 0;
    size_t need = a_bytes + b_bytes + c_bytes + (with_c0 ? c_bytes : 0) +
                  (o->verify ? c_bytes : 0) + staging_bytes(&j->a, &j->b, &j->c0);
    float *d_a = NULL, *d_b = NULL, *d_c = NULL, *d_c0 = NULL, *d_ref = NULL;
    float *ref = NULL;
    if ((rc = device_check_memory(&dev, need, "this product")))
        goto out;
    if ((rc = CUDA_CALL(cudaMalloc((void **)&d_a, a_bytes))) ||
        (rc = CUDA_CALL(cudaMalloc((void **)&d_b, b_bytes))) ||
        (rc = CUDA_CALL(cudaMalloc((void **)&d_c, c_bytes))) ||
        (with_c0 && (rc = CUDA_CALL(cudaMalloc((void **)&d_c0, c_bytes)))) ||
        (o->verify && (rc = CUDA_CALL(cudaMalloc((void **)&d_ref, c_bytes)))))
        goto out;

    progress_phase(&j->progress, "copying A and B to the GPU");
    double t = now_ms();
    if ((rc = upload(&dev, &j->a, d_a)) || (rc = upload(&dev, &j->b, d_b)) ||
        (with_c0 && (rc = upload(&dev, &j->c0, d_c0))) ||
        (rc = CUDA_CALL(cudaStreamSynchronize(dev.stream))))
        goto out;
    j->rep.h2d_ms = now_ms() - t;
    /* The host copies of the inputs are not needed again: freeing them
     * before the result is allocated keeps the peak at inputs or output,
     * not both. */
    gc_matrix_free(&j->a);
    gc_matrix_free(&j->b);
    gc_matrix_free(&j->c0);
    int stream = !o->verify && stream_can_write(j->out_format, GC_F32, j->out_dtype);
    if (!stream && (rc = alloc_result(j)))
        goto out;

    if ((j->kern->flags & KERNEL_REFERENCE) || o->verify)
        if ((rc = device_cublas(&dev)))
            goto out;
    struct launch_arg l = {
        j->kern, { (int)j->m, (int)j->n, (int)j->k, (float)o->alpha, (float)o->beta, d_a, d_b,
                   d_c },
        device_launch_env(&dev), d_c0, c_bytes,
    };
    progress_phase(&j->progress, "running %s", j->kern->name);
    if ((rc = time_kernel(&dev, &l, o->repeat, &j->rep.kernel_ms)))
        goto out;

    progress_phase(&j->progress, "writing %s", gc_display_name(o->output, 1));
    if (stream) {
        if (!(rc = output_begin(&j->out, o->output, 1)))
            rc = stream_write_result(&j->out, j->out_format, &dev, d_c, j->m, j->n, GC_F32,
                                     &j->rep.d2h_ms, &j->rep.write_ms);
        j->streamed = rc == 0;
        goto out;
    }
    t = now_ms();
    if ((rc = CUDA_CALL(cudaMemcpyAsync(j->c.data, d_c, c_bytes, cudaMemcpyDeviceToHost,
                                        dev.stream))) ||
        (rc = CUDA_CALL(cudaStreamSynchronize(dev.stream))))
        goto out;
    j->rep.d2h_ms = now_ms() - t;

    if (o->verify) {
        struct launch_arg r = l;
        r.kern = gemm_kernel_find("cublas");
        r.p.c = d_ref;
        if (!r.kern) {
            rc = gc_fail(GC_EXIT_GPU, "the cublas reference kernel is not registered");
            goto out;
        }
        ref = malloc(c_bytes);
        if (!ref) {
            rc = gc_fail(GC_EXIT_GPU, "out of host memory for the reference result");
            goto out;
        }
        progress_phase(&j->progress, "checking against cuBLAS");
        if ((rc = time_kernel(&dev, &r, o->repeat, &j->rep.verify.ref_ms)) ||
            (rc = CUDA_CALL(cudaMemcpy(ref, d_ref, c_bytes, cudaMemcpyDeviceToHost))))
            goto out;
        j->rep.verify.reference = "cublas";
        verify_compare_f32(j->c.data, ref, j->m * j->n, &j->rep.verify);
    }
out:
    free(ref);
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    cudaFree(d_c0);
    cudaFree(d_ref);
    device_close(&dev);
    return rc;
}

/* Empty products follow NumPy: (m,0)@(0,n) is an m x n matrix of zeros,
 * to which beta*C0 is added. */
static void mul_empty(struct mul_job *j)
{
    float *c = j->c.data;
    const float *c0 = j->c0.data;
    for (size_t i = 0; i < j->m * j->n; i++)
        c[i] = j->o->beta != 0 ? (float)j->o->beta * c0[i] : 0.0f;
}

struct host_arg {
    const struct mul_job *j;
    struct sgemm_problem p;
};

static int run_host_gemm(void *arg)
{
    const struct host_arg *h = arg;
    h->j->kern->host(&h->p, h->j->o->threads);
    return 0;
}

static int restore_host_c(void *arg)
{
    const struct host_arg *h = arg;
    memcpy(h->p.c, h->j->c0.data, h->j->m * h->j->n * sizeof(float));
    return 0;
}

static int mul_host(struct mul_job *j)
{
    int rc = alloc_result(j);
    if (rc)
        return rc;
    struct host_arg h = { j, { (int)j->m, (int)j->n, (int)j->k, (float)j->o->alpha,
                               (float)j->o->beta, j->a.data, j->b.data, j->c.data } };
    progress_phase(&j->progress, "running %s", j->kern->name);
    return host_time_runs(run_host_gemm, j->o->beta != 0 ? restore_host_c : NULL, &h,
                          j->o->repeat, &j->rep.kernel_ms);
}

/* --verify without a GPU: an FP64 product on the CPU. */
static int verify_on_host(struct mul_job *j)
{
    size_t count = j->m * j->n;
    double *ref = malloc((count ? count : 1) * sizeof *ref);
    if (!ref)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the FP64 reference");
    progress_phase(&j->progress, "checking against an FP64 product");
    verify_host_dgemm(j->m, j->n, j->k, (float)j->o->alpha, j->a.data, j->b.data,
                      (float)j->o->beta, j->c0.data, ref, j->o->threads);
    j->rep.verify.reference = "cpu-fp64";
    verify_compare_f32_f64(j->c.data, ref, count, &j->rep.verify);
    free(ref);
    return 0;
}

static int check_shapes(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    if (j->a.cols != j->b.rows)
        return gc_fail(GC_EXIT_INPUT, "%s, %s: inner dimensions differ: A is %zux%zu, "
                       "B is %zux%zu", gc_display_name(o->operands[0], 0),
                       gc_display_name(o->operands[1], 0), j->a.rows, j->a.cols, j->b.rows,
                       j->b.cols);
    j->m = j->a.rows;
    j->k = j->a.cols;
    j->n = j->b.cols;
    if (j->m > INT_MAX || j->n > INT_MAX || j->k > INT_MAX)
        return gc_fail(GC_EXIT_INPUT, "%zux%zux%zu: dimensions above %d are not supported",
                       j->m, j->n, j->k, INT_MAX);
    if (o->c0_path && (j->c0.rows != j->m || j->c0.cols != j->n))
        return gc_fail(GC_EXIT_INPUT, "%s: C0 is %zux%zu but A*B is %zux%zu",
                       gc_display_name(o->c0_path, 0), j->c0.rows, j->c0.cols, j->m, j->n);
    return 0;
}

int cmd_mul(const struct gc_opts *o)
{
    if (o->n_operands != 2)
        return gc_fail(GC_EXIT_USAGE, "mul takes two operands, A and B (see 'gemmcli mul --help')");
    if (!o->output)
        return gc_fail(GC_EXIT_USAGE, "mul needs an output: -o FILE ('-' for stdout)");
    if (o->beta != 0 && !o->c0_path)
        return gc_fail(GC_EXIT_USAGE, "--beta needs C0: -c FILE");
    /* The scalars must be finite in the arithmetic of the product, FP32. */
    if (isinf((float)o->alpha))
        return gc_fail(GC_EXIT_USAGE, "--alpha %g is not finite in float32, the compute "
                       "precision (largest %g)", o->alpha, FLT_MAX);
    if (isinf((float)o->beta))
        return gc_fail(GC_EXIT_USAGE, "--beta %g is not finite in float32, the compute "
                       "precision (largest %g)", o->beta, FLT_MAX);
    int nstdin = (strcmp(o->operands[0], "-") == 0) + (strcmp(o->operands[1], "-") == 0) +
                 (o->c0_path && strcmp(o->c0_path, "-") == 0);
    if (nstdin > 1)
        return gc_fail(GC_EXIT_USAGE, "only one operand can be read from stdin");

    int fmt = io_output_format(o, format_by_extension(o->operands[0]) >= 0
                                      ? format_by_extension(o->operands[0]) : GC_FMT_CSV);
    if (fmt < 0)
        return -fmt;

    struct mul_job j = { .o = o, .out_format = fmt };
    const struct gemm_kernel *named = gemm_kernel_find(o->kernel);
    struct gc_device_warm warm = { 0 };
    if (!named || !(named->flags & KERNEL_HOST))
        device_warm_start(&warm, o->device);
    j.rep.command = "mul";
    j.rep.repeat = o->repeat;
    j.rep.verify.tol = o->tol;
    j.rep.device = "cpu";
    enum gc_dtype out_dtype = o->out_dtype >= 0 ? (enum gc_dtype)o->out_dtype : GC_F32;
    j.out_dtype = out_dtype;
    j.rep.dtype = gc_dtypes[out_dtype].name;
    progress_begin(&j.progress, o->quiet || o->json);
    progress_phase(&j.progress, "reading the operands");
    double t0 = now_ms();
    const char *paths[3] = { o->operands[0], o->operands[1], o->c0_path };
    struct gc_matrix in[3] = { { 0 } };
    /* For the GPU the operands go up as they were read and are converted
     * there (kernels/convert.cu); the host kernels take them as float32. */
    int on_host = named && (named->flags & KERNEL_HOST);
    /* A C0 that is named is read, and must fit, even when beta is 0. */
    int rc = io_read_operands(o, o->c0_path ? 3 : 2, paths, on_host ? GC_F32 : -1, in);
    j.a = in[0];
    j.b = in[1];
    j.c0 = in[2];
    if (!rc)
        rc = check_shapes(&j);
    if (rc)
        goto out;
    j.rep.read_ms = now_ms() - t0;
    j.rep.m = j.m;
    j.rep.n = j.n;
    j.rep.k = j.k;
    j.rep.work = 2.0 * j.m * j.n * j.k;

    if (j.m == 0 || j.n == 0 || j.k == 0) {
        j.rep.kernel = "none (empty product)";
        if ((rc = alloc_result(&j)) || (rc = io_to_c_order(&j.c0, GC_F32, NULL)))
            goto out;
        mul_empty(&j);
    } else {
        j.kern = select_gemm(o->kernel, j.m, j.n, j.k, &j.rep.kernel_auto, &rc);
        if (!j.kern)
            goto out;
        j.rep.kernel = j.kern->name;
        if (j.kern->flags & KERNEL_HOST) {
            rc = mul_host(&j);
            if (!rc && o->verify)
                rc = verify_on_host(&j);
        } else {
            device_warm_wait(&warm);
            rc = mul_device(&j);
        }
        if (rc)
            goto out;
    }
    if (o->verify && !j.rep.verify.done) {
        j.rep.verify.reference = "none";
        j.rep.verify.done = 1;
        j.rep.verify.ok = 1;
    }

    /* A result that failed verification is not written: it is not what was
     * asked for, and it must not replace an earlier good file. */
    if (o->verify && !j.rep.verify.ok) {
        progress_end(&j.progress);
        char why[512];
        verify_describe_failure(&j.rep.verify, why, sizeof why);
        if (!(rc = cmd_emit_report(o, &j.rep)))
            rc = gc_fail(GC_EXIT_VERIFY, "verification failed: %s; %s not written", why,
                         gc_display_name(o->output, 1));
        goto out;
    }

    rc = cmd_finish(o, fmt, &j.out, j.streamed, &j.c, out_dtype, &j.rep, t0, &j.progress);
out:
    output_abort(&j.out);
    progress_end(&j.progress);
    device_warm_wait(&warm);
    gc_matrix_free(&j.a);
    gc_matrix_free(&j.b);
    gc_matrix_free(&j.c0);
    gc_matrix_free(&j.c);
    return rc;
}
