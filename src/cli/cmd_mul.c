/* gemmcli mul: C = alpha * A @ B + beta * C0, with NumPy's matmul rules
 * (src/plan/matmul.h) for dtypes, vectors and stacks.
 *
 * The command reads the operands (as one process, or as an MPI rank its
 * parts: src/scale/dist.h), plans the product once (src/plan/product.h:
 * the executor, the kernel, the tiles, the output format), hands the plan
 * to its executor (src/exec/exec.h), and writes the result through the one
 * result writer (src/job/result.h).  --dry-run prints the plan instead,
 * from the operands' headers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "src/cli/commands.h"
#include "src/exec/exec.h"
#include "src/job/facts.h"
#include "src/job/io.h"
#include "src/job/job.h"
#include "src/job/result.h"
#include "src/job/upload.h"
#include "src/plan/matmul.h"
#include "src/plan/product.h"
#include "src/scale/dist.h"

struct mul_job {
    struct job job;
    const struct gc_opts *o;
    struct gc_tensor in[3];         /* A, B and C0 as read */
    struct gc_tensor c0;            /* C0 as the result's dtype and shape (beta != 0) */
    struct matmul_plan mm;
    struct product_plan plan;
    struct upload up[2];            /* A and B uploaded as they are read */
    /* --devices: the other GPUs that will take tiles, started while the
     * operands are read. */
    struct gc_device_warm others[TILED_MAX_DEVICES];
    int n_others;
    int distributed;
    struct dist dist;
    struct gc_opts local;           /* an MPI rank's options (its GPU) */
    struct gc_opts host;            /* the options without a GPU (job_without_gpu) */
    int no_gpu;                     /* whether o is host: auto turned to the host */
    int stream_tiles;               /* A and B read to the host: tiles may pay (stream_wanted) */
};

/* Every GPU that --devices names (all: the first 16 there are) creates its
 * context on a thread of its own while the operands are read, as the
 * job's own GPU does, instead of when its first tile is due; so does
 * every other GPU of the host (the first 8) for a product that may be
 * streamed in tiles, which auto may share among them
 * (src/plan/product.c, shares_pay). */
static void warm_tile_devices(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    int all = o->n_devices < 0 || (o->n_devices == 0 && j->stream_tiles);
    int n = o->n_devices < 0 ? 16 : o->n_devices == 0 ? 8 : o->n_devices;
    for (int i = 0; i < n && j->n_others < TILED_MAX_DEVICES; i++) {
        int ordinal = all ? i : o->devices[i];
        if (ordinal != o->device)
            device_warm_start(&j->others[j->n_others++], ordinal);
    }
}

static void warm_tile_devices_wait(struct mul_job *j)
{
    for (int i = 0; i < j->n_others; i++)
        device_warm_wait(&j->others[i]);
    j->n_others = 0;
}

static int on_host_kernel(const struct gc_opts *o)
{
    const struct gemm_kernel *named = gemm_kernel_find(o->kernel);
    return named && (named->flags & KERNEL_HOST);
}

static int out_dtype(const struct gc_opts *o, const struct matmul_plan *mm)
{
    return o->out_dtype >= 0 ? o->out_dtype : (int)mm->result;
}

/* NumPy's semantics of A @ B (and C0's fit), the exact scalars of an
 * integer result, the output's format, decided once (the format A was
 * read as for standard output), and a named kernel checked against the
 * product before any device is asked. */
static int mul_semantics(const struct gc_opts *o, const struct gc_tensor *in, int read_as,
                         struct matmul_plan *mm, int *format)
{
    int fb = format_by_extension(o->operands[0]);
    int rc = matmul_plan(&in[0], &in[1], o->compute, gc_display_name(o->operands[0], 0),
                         gc_display_name(o->operands[1], 0), mm);
    if (rc || (rc = matmul_integer_scalars(mm, o->alpha_text, o->beta_text)) ||
        (rc = io_output_format(o, read_as, fb >= 0 ? fb : GC_FMT_CSV, format)) ||
        (rc = io_check_ndim(o, *format, mm->out_ndim, mm->out_shape, out_dtype(o, mm))) ||
        (rc = product_check_kernel(o->kernel, mm)))
        return rc;
    /* A C0 that is named is read, and must fit, even when beta is 0. */
    if (o->c0_path)
        return matmul_c0_check(mm, &in[2], gc_display_name(o->c0_path, 0));
    return 0;
}

/* The first n operands' headers (shape, dtype, order; no data), and the
 * format the first was read as. */
static int read_headers(const struct gc_opts *o, int n, const char *const *paths,
                        struct gc_tensor *in, int *first_as)
{
    int read_as = -1, rc = 0;
    for (int i = 0; i < n && !rc; i++)
        if (!(rc = io_read_header(o, i, paths[i], &in[i], &read_as)) && i == 0)
            *first_as = read_as;
    return rc;
}

/* A result this large, bound for a .npy or raw file, may run in tiles
 * whose bands the file takes as they land, where the whole job's model
 * finds that faster than the product in core and the file after it
 * (src/plan/product.c, tiles_pay): its operands then come to the host as
 * they are read. */
#define STREAM_TILES_FROM ((double)(1u << 30))

static int stream_tiles_may(const struct gc_opts *o, const struct matmul_plan *mm, int format,
                            int distributed)
{
    double c = (double)mm->batch * (double)mm->m * (double)mm->n *
               (double)gc_dtypes[out_dtype(o, mm)].size;
    return !on_host_kernel(o) && !o->device_memory && !o->n_devices && !distributed &&
           !o->verify && !mm->exact && !(o->c0_path && o->beta != 0) && !o->tune &&
           (format == GC_FMT_NPY || format == GC_FMT_RAW) && !output_is_stdout(o->output) &&
           c >= STREAM_TILES_FROM;
}

/* Before reading: whether the result may be streamed in tiles, from the
 * operands' .npy headers (nothing else is peeked at; anything amiss is
 * left for the reading to say). */
static int stream_wanted(const struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    const char *paths[2] = { o->operands[0], o->operands[1] };
    for (int i = 0; i < 2; i++) {
        size_t len = paths[i] ? strlen(paths[i]) : 0;
        struct stat st;
        /* Regular files only: a pipe's header peeked at is gone. */
        if (len < 5 || strcmp(paths[i] + len - 4, ".npy") != 0 || input_is_stdin(paths[i]) ||
            stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
    }
    struct gc_tensor in[2];
    struct matmul_plan mm;
    memset(in, 0, sizeof in);
    int first_as = -1, format = -1, want = 0;
    struct gc_capture quiet = { .len = 0 };
    gc_capture_set(&quiet);
    int rc = read_headers(o, 2, paths, in, &first_as);
    if (!rc && matmul_plan(&in[0], &in[1], o->compute, paths[0], paths[1], &mm) == 0 &&
        io_output_format(o, first_as, first_as >= 0 ? first_as : GC_FMT_NPY, &format) == 0)
        want = stream_tiles_may(o, &mm, format, j->distributed);
    gc_capture_set(NULL);
    for (int i = 0; i < 2; i++)
        gc_tensor_free(&in[i]);
    return want;
}

/* What the command line asks of the product. */
static struct product_ask mul_ask(const struct gc_opts *o, const struct gc_tensor *in,
                                  const struct dist *d, int format, const struct matmul_plan *mm,
                                  int stream)
{
    return (struct product_ask){
        .kernel = o->kernel, .verify = o->verify, .tune = o->tune, .alpha = o->alpha,
        .beta = o->beta, .with_c0 = o->beta != 0 && o->c0_path,
        .a_count = gc_tensor_count(&in[0]), .b_count = gc_tensor_count(&in[1]),
        .device_memory = o->device_memory, .share = o->n_devices != 0, .out_format = format,
        .out_dtype = out_dtype(o, mm),
        .rows_out = !o->verify && (format == GC_FMT_NPY || format == GC_FMT_RAW) &&
                    !output_is_stdout(o->output),
        .stream_tiles = stream,
        .panel_k = d && d->panels ? d->kb : 0,
        .n_panels = d && d->panels ? d->n_panels : 0,
    };
}

/* The operands as stored: A and B go straight to the device as they are
 * read, when they are large float operands and nothing on the host reads
 * them again: not for a product that is to run in tiles from host memory
 * (a budget, several GPUs), nor for a rank's part of one. */
static int mul_read(struct mul_job *j, int *read_as)
{
    const struct gc_opts *o = j->o;
    const struct gc_sink *sinks[3] = { NULL, NULL, NULL };
    int on_host = on_host_kernel(o);
    int read_to_host = o->device_memory || o->n_devices || j->distributed || j->stream_tiles;
    for (int i = 0; i < 2; i++) {
        upload_init(&j->up[i], &j->job, UPLOAD_FLOATS | UPLOAD_FORTRAN_2D);
        if (!on_host && !read_to_host)
            sinks[i] = &j->up[i].sink;
    }
    int rc = job_begin(&j->job, o, "mul", on_host);
    if (rc)
        return rc;
    j->job.no_stream = j->distributed;
    if ((o->n_devices || j->stream_tiles) && !on_host)
        warm_tile_devices(j);
    progress_phase(&j->job.progress, "reading the operands");
    const char *paths[3] = { o->operands[0], o->operands[1], o->c0_path };
    /* A C0 that is named is read, and must fit, even when beta is 0. */
    rc = j->distributed ? dist_read(&j->dist, o, paths, j->in, read_as)
                        : io_read_operands(o, o->c0_path ? 3 : 2, paths, sinks, j->in, read_as);
    /* Only 2-D Fortran order converts on the device; more axes here. */
    if (!rc && j->in[0].ndim > 2)
        rc = io_to_c_order(&j->in[0], -1);
    if (!rc && j->in[1].ndim > 2)
        rc = io_to_c_order(&j->in[1], -1);
    return rc;
}

static void mul_report(struct mul_job *j)
{
    struct gc_report *rep = &j->job.rep;
    const struct matmul_plan *mm = &j->mm;
    rep->read_ms = now_ms() - j->job.t0;
    rep->dtype = gc_dtypes[out_dtype(j->o, mm)].name;
    report_shape(&rep->shape_a, j->in[0].ndim, j->in[0].shape);
    report_shape(&rep->shape_b, j->in[1].ndim, j->in[1].shape);
    report_shape(&rep->shape_out, mm->out_ndim, mm->out_shape);
    rep->m = (size_t)mm->m;
    rep->n = (size_t)mm->n;
    rep->k = (size_t)mm->k;
    rep->batch = (size_t)mm->batch;
    rep->work = 2.0 * (double)mm->batch * (double)mm->m * (double)mm->n * (double)mm->k;
}

/* The device facts (the job's GPU opened, the memory the uploads hold
 * counted as free) and the plan. */
static int mul_plan(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    struct product_ask ask = mul_ask(o, j->in, j->distributed ? &j->dist : NULL, j->job.fmt,
                                     &j->mm, j->stream_tiles);
    struct device_facts facts;
    product_facts_model(&facts);
    if (product_needs_device(&ask, &j->mm)) {
        size_t held = 0;
        for (int i = 0; i < 2; i++)
            if (j->up[i].d)
                held += gc_tensor_count(&j->in[i]) * gc_dtypes[j->in[i].dtype].size;
        int rc = facts_of_job(&j->job, o, held, &facts);
        if (rc)
            return rc;
    }
    return product_plan_make(&ask, &j->mm, &facts, &j->plan);
}

/* Read, plan, run, write. */
static int mul_run_job(struct mul_job *j)
{
    const struct gc_opts *o = j->o;
    int read_as = -1;
    j->stream_tiles = stream_wanted(j);
    int rc = mul_read(j, &read_as);
    if (rc || (rc = mul_semantics(o, j->in, read_as, &j->mm, &j->job.fmt)))
        return rc;
    /* Without a GPU, OpenBLAS for float32 and float64 products (operands
     * and result) where it is installed, else gemmcli's cpu kernel (as
     * job_without_gpu set): not integers, whose exact routes it cannot
     * all take, nor 16-bit floats. */
    const struct matmul_plan *mm = &j->mm;
    int floats = !mm->exact && (mm->result == GC_F32 || mm->result == GC_F64) &&
                 (mm->a_dtype == GC_F32 || mm->a_dtype == GC_F64) &&
                 (mm->b_dtype == GC_F32 || mm->b_dtype == GC_F64);
    if (j->no_gpu && floats) {
        struct gc_capture quiet = { .len = 0 };
        gc_capture_set(&quiet);
        int blas = product_check_kernel("blas", &j->mm) == 0;
        gc_capture_set(NULL);
        if (blas)
            j->host.kernel = "blas";
    }
    if (o->c0_path && o->beta != 0 && (rc = matmul_c0_expand(&j->mm, &j->in[2], &j->c0)))
        return rc;
    mul_report(j);
    /* The ranks of a block in panels agree once every one is ready to
     * multiply (src/scale/summa.h): a rank whose plan fails (its GPU, a
     * kernel) says so in that agreement. */
    if ((rc = mul_plan(j)))
        return j->distributed && j->dist.panels ? dist_agree(&j->dist, rc) : rc;
    warm_tile_devices_wait(j);
    struct mul_run run = { o, &j->job, &j->plan, &j->in[0], &j->in[1], &j->c0, j->up,
                           j->distributed ? &j->dist : NULL, { 0 } };
    rc = exec_run(&run);
    if (!rc && o->verify && !j->job.rep.verify.done) {
        j->job.rep.verify.reference = "none (empty product)";
        j->job.rep.verify.done = j->job.rep.verify.ok = 1;
    }
    enum gc_dtype dtype = (enum gc_dtype)out_dtype(o, &j->mm);
    if (!rc)
        rc = j->distributed ? dist_finish(&j->dist, &j->job, &run.result, dtype)
                            : result_finish(&j->job, &run.result, dtype);
    gc_tensor_free(&run.result);
    return rc;
}

/* mul --dry-run: the plan for these operands, from their headers (CSV's
 * text is read to find its shape), printed; nothing runs or is written. */
static int mul_dry_run(const struct gc_opts *o)
{
    struct gc_tensor in[3];
    struct matmul_plan mm;
    struct product_plan *plan = malloc(sizeof *plan);
    const char *paths[3] = { o->operands[0], o->operands[1], o->c0_path };
    int first_as = -1, format = -1;
    memset(in, 0, sizeof in);
    int rc = plan ? io_output_check(o) : gc_fail(GC_EXIT_INPUT, "out of host memory");
    if (!rc)
        rc = read_headers(o, o->c0_path ? 3 : 2, paths, in, &first_as);
    if (!rc && !(rc = mul_semantics(o, in, first_as, &mm, &format))) {
        struct product_ask ask = mul_ask(o, in, NULL, format, &mm,
                                         stream_tiles_may(o, &mm, format, 0));
        struct device_facts facts;
        product_facts_model(&facts);
        if (product_needs_device(&ask, &mm))
            facts_of_device(o, &facts);
        if (!(rc = product_plan_make(&ask, &mm, &facts, plan)))
            rc = exec_print_plan(o, plan, &in[0], &in[1]);
    }
    free(plan);
    return rc;
}

int mul_check_usage(const struct gc_opts *o)
{
    if (o->n_operands != 2)
        return gc_fail(GC_EXIT_USAGE, "mul takes two operands, A and B (see 'gemmcli mul --help')");
    if (!o->output)
        return gc_fail(GC_EXIT_USAGE, "mul needs an output: -o FILE ('-' for stdout)");
    if (o->beta != 0 && !o->c0_path)
        return gc_fail(GC_EXIT_USAGE, "--beta needs C0: -c FILE");
    int nstdin = input_is_stdin(o->operands[0]) + input_is_stdin(o->operands[1]) +
                 (o->c0_path && input_is_stdin(o->c0_path));
    if (nstdin > 1)
        return gc_fail(GC_EXIT_USAGE, "only one operand can be read from stdin");
    if (o->tune && strcmp(o->kernel, "auto") != 0)
        return gc_fail(GC_EXIT_USAGE, "--tune tunes auto's choice: it does not go with "
                       "--kernel %s", o->kernel);
    if (o->host_memory && !dist_wanted())
        return gc_fail(GC_EXIT_USAGE, "--host-memory applies to mul under an MPI launcher of "
                       "several processes: it bounds what each rank holds");
    if (o->dry_run && dist_wanted())
        return gc_fail(GC_EXIT_USAGE, "--dry-run plans the product as one process: run it "
                       "without the MPI launcher");
    if (!gemm_kernel_find(o->kernel) && strcmp(o->kernel, "auto") != 0)
        return gemm_kernel_unknown(o->kernel);
    return 0;
}

int cmd_mul(const struct gc_opts *o)
{
    /* (a dry run without a GPU plans for the model's device, and says
     * where mul runs instead: src/exec/dry_run.c) */
    if (o->dry_run)
        return mul_dry_run(o);
    struct mul_job *j = calloc(1, sizeof *j);
    if (!j)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    /* (no GPU here: the host's kernels; said by one process, not by each
     * of several ranks, whose summaries say it) */
    j->o = o = job_without_gpu(o, &j->host, "mul", !dist_wanted());
    j->no_gpu = o == &j->host && !dist_wanted();
    /* One of several processes an MPI launcher started: this one computes
     * its block of C (src/scale/dist.h), with the options it gives. */
    j->distributed = dist_wanted();
    int rc = j->distributed ? dist_begin(&j->dist, o, on_host_kernel(o), &j->local) : 0;
    if (rc) {
        rc = dist_end(&j->dist, rc);
        free(j);
        return rc;
    }
    if (j->distributed)
        j->o = &j->local;
    rc = mul_run_job(j);
    warm_tile_devices_wait(j);
    upload_release(&j->up[0]);
    upload_release(&j->up[1]);
    job_end(&j->job);
    for (int i = 0; i < 3; i++)
        gc_tensor_free(&j->in[i]);
    gc_tensor_free(&j->c0);
    rc = j->distributed ? dist_end(&j->dist, rc) : rc;
    free(j);
    return rc;
}
