/* gemmcli transpose: the last two axes of each matrix swapped (NumPy's
 * .mT), elements moved bit for bit.  A 1-D input is a single row and
 * comes out a column; a stack comes out a stack. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/transpose.h"
#include "src/cli/commands.h"
#include "src/job/device.h"
#include "src/job/io.h"
#include "src/job/job.h"
#include "src/job/result.h"
#include "src/plan/select.h"
#include "src/job/upload.h"

struct transpose_job {
    struct job job;
    const struct gc_opts *o;
    const struct transpose_kernel *kern;
    struct gc_tensor in, result;
    size_t rows, cols, batch, elem;
    struct upload up;               /* the input uploaded as it is read */
};

/* Element i of `got` against the reference: bit for bit, except that any
 * NaN matches any NaN (cuBLAS geam computes 1*x + 0*y, which may rewrite a
 * NaN's payload). */
static int same_element(const struct gc_tensor *got, const void *ref, size_t i)
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
 * output is wrong. */
static void compare_exact(const struct gc_tensor *got, const void *ref,
                          struct gc_verify_result *v)
{
    size_t count = gc_tensor_count(got), bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += !same_element(got, ref, i);
    v->exact = 1;
    v->count = count;
    v->mismatches = bad;
    v->ok = bad == 0;
    v->done = 1;
}

/* The definition, on the host: out[b][c][r] = in[b][r][c]. */
static void transpose_host(const struct transpose_job *j, const void *in, void *out)
{
    const struct transpose_kernel *cpu = transpose_kernel_find("cpu");
    size_t matrix = j->rows * j->cols * j->elem;
    for (size_t b = 0; b < j->batch; b++) {
        struct transpose_problem p = { (int)j->rows, (int)j->cols, j->elem,
                                       (const char *)in + b * matrix, (char *)out + b * matrix };
        cpu->host(&p);
    }
}

struct stack_arg {
    const struct transpose_job *j;
    const struct transpose_kernel *kern;
    const void *in;
    void *out;
    struct launch_env env;
};

/* One run: every matrix of the stack. */
static int run_stack(void *arg, int i)
{
    (void)i;
    const struct stack_arg *s = arg;
    const struct transpose_job *j = s->j;
    size_t matrix = j->rows * j->cols * j->elem;
    for (size_t b = 0; b < j->batch; b++) {
        struct transpose_problem p = { (int)j->rows, (int)j->cols, j->elem,
                                       (const char *)s->in + b * matrix, (char *)s->out + b * matrix };
        if (s->kern->flags & KERNEL_HOST) {
            s->kern->host(&p);
            continue;
        }
        cudaError_t err = s->kern->launch(&p, &s->env);
        if (err != cudaSuccess)
            return device_cuda_fail(err, s->kern->name, __FILE__, __LINE__);
    }
    return 0;
}

struct in_place_arg {
    void *data;
    int n;
    size_t elem;
    struct launch_env env;
};

static int run_in_place(void *arg, int i)
{
    (void)i;
    const struct in_place_arg *l = arg;
    return CUDA_CALL(transpose_inplace_square_launch(l->data, l->n, l->elem, &l->env));
}

static struct gc_tensor result_shape(const struct transpose_job *j)
{
    struct gc_tensor t = j->in;
    t.data = NULL;
    t.alloc = NULL;
    t.fortran_order = 0;
    if (t.ndim == 1) {
        gc_tensor_set_2d(&t, j->cols, 1);
        return t;
    }
    t.shape[t.ndim - 2] = j->cols;
    t.shape[t.ndim - 1] = j->rows;
    return t;
}

/* A square matrix too large to hold twice on the device is transposed in
 * place, by swapping tiles across the diagonal.  Each run transposes the
 * result of the run before, so the number of timed runs is rounded up to
 * an even one: with the warm-up, an odd number of runs leaves the
 * transpose. */
static int transpose_in_place(struct transpose_job *j, size_t bytes)
{
    struct job *jb = &j->job;
    void *d = NULL;
    int rc;
    int repeat = j->o->repeat % 2 ? j->o->repeat + 1 : j->o->repeat;
    jb->rep.kernel = "inplace (too large to hold twice)";
    jb->rep.repeat = repeat;
    if (!(d = upload_take(&j->up)) && (rc = job_upload(jb, j->in.data, bytes, &d)))
        goto out;
    struct in_place_arg l = { d, (int)j->rows, j->elem, device_launch_env(&jb->dev) };
    if ((rc = job_time(jb, run_in_place, NULL, &l, repeat, &jb->rep.kernel_ms)))
        goto out;
    struct gc_tensor shape = result_shape(j);
    if ((rc = result_from_device(jb, d, &shape, 0, &j->result)))
        goto out;
    if (j->o->verify) {
        void *ref = malloc(bytes);
        if (!ref) {
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference result");
            goto out;
        }
        transpose_host(j, j->in.data, ref);
        jb->rep.verify.reference = "cpu";
        compare_exact(&j->result, ref, &jb->rep.verify);
        free(ref);
    }
out:
    cudaFree(d);
    return rc;
}

static int transpose_device(struct transpose_job *j, size_t bytes)
{
    const struct gc_opts *o = j->o;
    struct job *jb = &j->job;
    const struct transpose_kernel *geam = transpose_kernel_find("geam");
    int ref_on_device = o->verify && geam && select_transpose_takes(geam, j->in.dtype);
    int rc;
    if ((rc = job_open_device(jb, (j->kern->flags & KERNEL_REFERENCE) || ref_on_device)))
        return rc;
    void *d_in = NULL, *d_out = NULL, *d_ref = NULL, *ref = NULL;
    size_t free_b = 0, total_b = 0;
    if ((rc = CUDA_CALL(cudaMemGetInfo(&free_b, &total_b))))
        goto out;
    /* An input uploaded as it was read already holds its share. */
    size_t held = j->up.d ? bytes : 0;
    free_b += held;
    if (j->batch == 1 && j->rows == j->cols && bytes * (2 + ref_on_device) > free_b &&
        bytes <= free_b) {
        rc = transpose_in_place(j, bytes);
        goto out;
    }
    if ((rc = device_check_memory(&jb->dev, bytes * (2 + ref_on_device) - held,
                                  "this transpose")))
        goto out;
    progress_phase(&jb->progress, "copying to the GPU");
    if ((!(d_in = upload_take(&j->up)) && (rc = job_upload(jb, j->in.data, bytes, &d_in))) ||
        (rc = CUDA_CALL(cudaMalloc(&d_out, bytes ? bytes : 1))) ||
        (ref_on_device && (rc = CUDA_CALL(cudaMalloc(&d_ref, bytes ? bytes : 1)))))
        goto out;
    struct stack_arg s = { j, j->kern, d_in, d_out, device_launch_env(&jb->dev) };
    progress_phase(&jb->progress, "running %s", j->kern->name);
    if ((rc = job_time(jb, run_stack, NULL, &s, o->repeat, &jb->rep.kernel_ms)))
        goto out;
    int out_dtype = o->out_dtype >= 0 ? o->out_dtype : (int)j->in.dtype;
    struct gc_tensor shape = result_shape(j);
    if ((rc = result_from_device(jb, d_out, &shape, !o->verify && out_dtype == (int)j->in.dtype,
                                 &j->result)))
        goto out;
    if (o->verify) {
        if (!(ref = malloc(bytes ? bytes : 1))) {
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the reference result");
            goto out;
        }
        if (ref_on_device) {
            struct stack_arg r = s;
            r.kern = geam;
            r.out = d_ref;
            jb->rep.verify.reference = "geam";
            jb->rep.verify.timed = "geam";
            if ((rc = job_time(jb, run_stack, NULL, &r, o->repeat, &jb->rep.verify.ref_ms)) ||
                (rc = device_download(&jb->dev, ref, d_ref, bytes)))
                goto out;
        } else {
            jb->rep.verify.reference = "cpu";
            transpose_host(j, j->in.data, ref);
        }
        jb->rep.verify.timed_rel_fro = -1;
        compare_exact(&j->result, ref, &jb->rep.verify);
    }
out:
    free(ref);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_ref);
    return rc;
}

/* The host's kernel, checked against the definition element by element
 * (the host kernel is its own reference). */
static int transpose_on_host(struct transpose_job *j, size_t bytes)
{
    const struct gc_opts *o = j->o;
    struct gc_report *rep = &j->job.rep;
    j->result = result_shape(j);
    if (gc_tensor_alloc(&j->result, NULL))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    struct stack_arg s = { j, j->kern, j->in.data, j->result.data, { 0 } };
    int rc = job_time(&j->job, run_stack, NULL, &s, o->repeat, &rep->kernel_ms);
    if (rc || !o->verify)
        return rc;
    char *ref = malloc(bytes);
    if (!ref)
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the reference");
    size_t matrix = j->rows * j->cols * j->elem;
    const char *in = j->in.data;
    for (size_t b = 0; b < j->batch; b++)
        for (size_t r = 0; r < j->rows; r++)
            for (size_t c = 0; c < j->cols; c++)
                memcpy(ref + b * matrix + (c * j->rows + r) * j->elem,
                       in + b * matrix + (r * j->cols + c) * j->elem, j->elem);
    rep->verify.reference = "definition";
    compare_exact(&j->result, ref, &rep->verify);
    free(ref);
    return 0;
}

/* The input's matrices: rows, columns and how many; refused when it has
 * no axes to swap or sides wider than the kernels index. */
static int transpose_shape(struct transpose_job *j)
{
    const char *name = gc_display_name(j->o->operands[0], 0);
    if (j->in.ndim < 1)
        return gc_fail(GC_EXIT_INPUT, "%s: a 0-d array (a scalar) has no axes to transpose "
                       "(NumPy's .mT: matrix transpose with ndim < 2 is undefined)", name);
    char shape_in[96];
    gc_shape_text(j->in.ndim, j->in.shape, shape_in, sizeof shape_in);
    j->rows = j->in.ndim == 1 ? 1 : j->in.shape[j->in.ndim - 2];
    j->cols = j->in.shape[j->in.ndim - 1];
    j->batch = 1;
    for (int d = 0; d < j->in.ndim - 2; d++)
        j->batch *= j->in.shape[d];
    if (j->rows > INT_MAX || j->cols > INT_MAX)
        return gc_fail(GC_EXIT_INPUT, "%s: %s: matrices wider or taller than %d are not "
                       "supported", name, shape_in, INT_MAX);
    j->elem = gc_dtypes[j->in.dtype].size;
    return 0;
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
    struct gc_opts host;
    o = job_without_gpu(&oo, &host, "transpose", 1);

    struct transpose_job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    const struct transpose_kernel *named = transpose_kernel_find(o->kernel);
    if (!named && strcmp(o->kernel, "auto") != 0)
        return transpose_kernel_unknown(o->kernel);
    int on_host = named && (named->flags & KERNEL_HOST);
    int fb = format_by_extension(o->operands[0]);
    struct gc_report *rep = &j.job.rep;
    /* The input goes straight to the device as it is read, unless the host
     * checks the result against it. */
    upload_init(&j.up, &j.job, UPLOAD_ANY);
    int rc = job_begin(&j.job, o, "transpose", on_host);
    if (rc)
        goto out;
    progress_phase(&j.job.progress, "reading %s", gc_display_name(o->operands[0], 0));
    int read_as = -1;
    const struct gc_sink *sink = on_host || o->verify ? NULL : &j.up.sink;
    if ((rc = io_read_operand(o, 0, o->operands[0], sink, &j.in, &read_as)) ||
        (rc = io_to_c_order(&j.in, -1)) ||
        (rc = io_output_format(o, read_as, fb >= 0 ? fb : GC_FMT_CSV, &j.job.fmt)))
        goto out;
    if ((rc = transpose_shape(&j)))
        goto out;
    struct gc_tensor out_shape = result_shape(&j);
    if ((rc = io_check_ndim(o, j.job.fmt, out_shape.ndim, out_shape.shape,
                            o->out_dtype >= 0 ? o->out_dtype : (int)j.in.dtype)))
        goto out;
    rep->read_ms = now_ms() - j.job.t0;
    report_shape(&rep->shape_a, j.in.ndim, j.in.shape);
    report_shape(&rep->shape_out, out_shape.ndim, out_shape.shape);
    rep->m = j.rows;
    rep->n = j.cols;
    rep->batch = j.batch;
    size_t bytes = gc_tensor_count(&j.in) * j.elem;
    rep->work = 2.0 * (double)bytes;
    int out_dtype = o->out_dtype >= 0 ? o->out_dtype : (int)j.in.dtype;
    rep->dtype = gc_dtypes[out_dtype].name;

    if (bytes == 0) {
        rep->kernel = "none (empty matrix)";
        j.result = out_shape;
        if (gc_tensor_alloc(&j.result, NULL)) {
            rc = gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
            goto out;
        }
    } else {
        int is_auto;
        if ((rc = select_transpose_kernel(o->kernel, j.rows, j.cols, j.in.dtype, &j.kern,
                                          &is_auto)))
            goto out;
        rep->kernel = j.kern->name;
        rep->kernel_auto = is_auto;
        if ((rc = (j.kern->flags & KERNEL_HOST) ? transpose_on_host(&j, bytes)
                                                : transpose_device(&j, bytes)))
            goto out;
    }
    if (o->verify && !rep->verify.done) {
        rep->verify.reference = "none";
        rep->verify.done = rep->verify.ok = 1;
    }
    rc = result_finish(&j.job, &j.result, (enum gc_dtype)out_dtype);
out:
    upload_release(&j.up);
    job_end(&j.job);
    gc_tensor_free(&j.in);
    gc_tensor_free(&j.result);
    return rc;
}
