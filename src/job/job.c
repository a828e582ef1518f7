#include "src/job/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/job/io.h"

int job_runs_without_gpu(const struct gc_opts *o)
{
    /* (a kernel, --device or --devices named: a GPU insisted on) */
    return strcmp(o->kernel, "auto") == 0 && !o->device_given && o->n_devices == 0 &&
           device_none_here();
}

const struct gc_opts *job_without_gpu(const struct gc_opts *o, struct gc_opts *local,
                                      const char *command, int say)
{
    if (!job_runs_without_gpu(o))
        return o;
    *local = *o;
    local->kernel = "cpu";
    if (say && !o->quiet)
        gc_note("no GPU on this machine: %s runs on the CPU (name a GPU kernel with --kernel "
                "to insist on one)", command);
    return local;
}

int job_begin(struct job *j, const struct gc_opts *o, const char *command, int on_host)
{
    memset(j, 0, sizeof *j);
    j->o = o;
    j->t0 = now_ms();
    j->rep.command = command;
    j->rep.repeat = o->repeat;
    j->rep.device = "cpu";
    j->rep.batch = 1;
    pthread_mutex_init(&j->open_lock, NULL);
    j->fmt = -1;
    int rc = io_output_check(o);
    if (rc)
        return rc;
    if (!on_host)
        device_warm_start(&j->warm, o->device);
    progress_begin(&j->progress, o->quiet || o->json);
    return 0;
}

/* With open_lock held. */
static int open_locked(struct job *j)
{
    if (j->dev.open)
        return 0;
    device_warm_wait(&j->warm);
    int rc = device_open(&j->dev, j->o->device, 1);
    if (rc)
        return rc;
    snprintf(j->device_name, sizeof j->device_name, "%s", j->dev.name);
    j->rep.device = j->device_name;
    return 0;
}

int job_open_device(struct job *j, int cublas)
{
    progress_phase(&j->progress, "starting the GPU");
    double t = now_ms();
    pthread_mutex_lock(&j->open_lock);
    int rc = open_locked(j);
    pthread_mutex_unlock(&j->open_lock);
    j->rep.start_ms += now_ms() - t;
    if (rc)
        return rc;
    /* The calling thread's device, whoever opened it. */
    if ((rc = CUDA_CALL(cudaSetDevice(j->dev.ordinal))))
        return rc;
    return cublas ? device_cublas(&j->dev) : 0;
}

int job_open_device_early(struct job *j)
{
    struct gc_capture quiet = { .len = 0 };
    pthread_mutex_lock(&j->open_lock);
    int rc = 0;
    if (!j->dev.open) {
        if (j->open_tried) {
            rc = GC_EXIT_GPU;
        } else {
            j->open_tried = 1;
            gc_capture_set(&quiet);
            rc = open_locked(j);
            gc_capture_set(NULL);
        }
    }
    pthread_mutex_unlock(&j->open_lock);
    if (!rc && cudaSetDevice(j->dev.ordinal) != cudaSuccess) {
        cudaGetLastError();
        rc = GC_EXIT_GPU;
    }
    return rc;
}

/* Host operands this large are page-locked for their copy: locking pages
 * already filled and copying at the link's rate take less than the
 * driver's copy of pageable memory through its own staging. */
#define UPLOAD_PIN_FROM ((size_t)64 << 20)

int job_upload(struct job *j, const void *host, size_t bytes, void **d)
{
    double t = now_ms();
    int rc;
    int pinned = bytes >= UPLOAD_PIN_FROM && device_pin((void *)host, bytes);
    if (!(rc = CUDA_CALL(cudaMalloc(d, bytes ? bytes : 1))) && bytes &&
        !(rc = CUDA_CALL(cudaMemcpyAsync(*d, host, bytes, cudaMemcpyHostToDevice,
                                          j->dev.stream))))
        rc = CUDA_CALL(cudaStreamSynchronize(j->dev.stream));
    if (pinned)
        cudaHostUnregister((void *)host);
    if (rc)
        return rc;
    j->rep.h2d_ms += now_ms() - t;
    return 0;
}

int job_time(struct job *j, int (*run)(void *arg, int i), int (*before)(void *arg, int i),
             void *arg, int repeat, double *ms)
{
    if (j->dev.open)
        return device_time_runs(&j->dev, run, before, arg, repeat, ms);
    /* The host: a warm-up only when timing several runs, since a host
     * kernel has nothing to load first and may take seconds. */
    double state;
    struct clock_timer timer = clock_host_timer(&state);
    struct clock_plan plan = { .repeat = repeat, .warmup = repeat > 1 };
    int rc = clock_time_runs(&timer, run, before, arg, &plan, ms, NULL);
    return rc == -1 ? gc_fail(GC_EXIT_INPUT, "out of host memory") : rc;
}

int job_emit_report(const struct gc_opts *o, const struct gc_report *r)
{
    FILE *f = o->json && !output_is_stdout(o->output) ? stdout : stderr;
    if (o->quiet && !o->json)
        return 0;
    clearerr(f);
    if (o->json)
        report_json(f, r);
    else
        report_print(f, r);
    return io_summary_check(f);
}

void job_end(struct job *j)
{
    output_abort(&j->out);
    progress_end(&j->progress);
    device_warm_wait(&j->warm);
    device_close(&j->dev);
    pthread_mutex_destroy(&j->open_lock);
}
