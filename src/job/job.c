#include "src/job/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/job/io.h"
#include "src/job/stream.h"

int job_begin(struct job *j, const struct gc_opts *o, const char *command, int on_host,
              int fallback_format)
{
    memset(j, 0, sizeof *j);
    j->o = o;
    j->t0 = now_ms();
    j->rep.command = command;
    j->rep.repeat = o->repeat;
    j->rep.device = "cpu";
    j->rep.batch = 1;
    pthread_mutex_init(&j->open_lock, NULL);
    j->fmt = io_output_format(o, fallback_format);
    if (j->fmt < 0)
        return -j->fmt;
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
            rc = 1;
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
        rc = 1;
    }
    return rc;
}

int job_upload(struct job *j, const void *host, size_t bytes, void **d)
{
    double t = now_ms();
    int rc;
    if ((rc = CUDA_CALL(cudaMalloc(d, bytes ? bytes : 1))) ||
        (bytes && (rc = CUDA_CALL(cudaMemcpyAsync(*d, host, bytes, cudaMemcpyHostToDevice,
                                                   j->dev.stream)))) ||
        (rc = CUDA_CALL(cudaStreamSynchronize(j->dev.stream))))
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

int job_take_result(struct job *j, const void *d, const struct gc_tensor *shape, int stream,
                    struct gc_tensor *host)
{
    const struct gc_opts *o = j->o;
    int rc;
    progress_phase(&j->progress, "writing %s", gc_display_name(o->output, 1));
    if (stream && !j->no_stream && stream_can_write(j->fmt, shape->dtype, shape->dtype)) {
        if (!(rc = output_begin(&j->out, o->output, io_output_flags(o, j->fmt))))
            rc = stream_write_result(&j->out, j->fmt, &j->dev, d, shape, &j->rep.d2h_ms,
                                     &j->rep.write_ms);
        j->streamed = rc == 0;
        return rc;
    }
    *host = *shape;
    host->data = NULL;
    host->alloc = NULL;
    host->fortran_order = 0;
    size_t bytes;
    if (!gc_tensor_bytes(host, &bytes) || gc_tensor_alloc(host, NULL))
        return gc_fail(GC_EXIT_INPUT, "out of host memory for the result");
    double t = now_ms();
    if (bytes && ((rc = CUDA_CALL(cudaMemcpyAsync(host->data, d, bytes, cudaMemcpyDeviceToHost,
                                                  j->dev.stream))) ||
                  (rc = CUDA_CALL(cudaStreamSynchronize(j->dev.stream)))))
        return rc;
    j->rep.d2h_ms += now_ms() - t;
    return 0;
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

int job_finish(struct job *j, struct gc_tensor *result, enum gc_dtype dtype)
{
    const struct gc_opts *o = j->o;
    int rc;
    /* A result that failed verification is not written: it is not what was
     * asked for, and it must not replace an earlier good file. */
    if (o->verify && j->rep.verify.done && !j->rep.verify.ok) {
        progress_end(&j->progress);
        char why[512];
        verify_describe_failure(&j->rep.verify, why, sizeof why);
        if ((rc = job_emit_report(o, &j->rep)))
            return rc;
        return gc_fail(GC_EXIT_VERIFY, "verification failed: %s; %s not written", why,
                       gc_display_name(o->output, 1));
    }
    if (!j->streamed) {
        progress_phase(&j->progress, "writing %s", gc_display_name(o->output, 1));
        if ((rc = io_to_c_order(result, dtype)))
            return rc;
        double t = now_ms();
        if ((rc = output_begin(&j->out, o->output, io_output_flags(o, j->fmt))) ||
            (rc = io_write_tensor(&j->out, o, j->fmt, result)))
            return rc;
        j->rep.write_ms = now_ms() - t;
    }
    j->rep.total_ms = now_ms() - j->t0;
    progress_end(&j->progress);
    if ((rc = job_emit_report(o, &j->rep)))
        return rc;
    return output_commit(&j->out);
}

void job_end(struct job *j)
{
    output_abort(&j->out);
    progress_end(&j->progress);
    device_warm_wait(&j->warm);
    device_close(&j->dev);
    pthread_mutex_destroy(&j->open_lock);
}
