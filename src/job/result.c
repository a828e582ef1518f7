#include "src/job/result.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "src/job/io.h"
#include "src/job/stream.h"

static int begin_output(struct job *j, int flags)
{
    if (j->begun)
        return 0;
    int rc = output_begin(&j->out, j->o->output, io_output_flags(j->o, j->fmt) | flags);
    j->begun = rc == 0;
    return rc;
}

int result_from_device(struct job *j, const void *d, const struct gc_tensor *shape,
                       int may_stream, struct gc_tensor *host)
{
    int rc;
    progress_phase(&j->progress, "writing %s", gc_display_name(j->o->output, 1));
    if (may_stream && !j->no_stream && stream_can_write(j->fmt, shape->dtype, shape->dtype)) {
        if (!(rc = begin_output(j, 0)))
            rc = stream_write_result(&j->out, j->fmt, &j->dev, d, shape, &j->rep.d2h_ms,
                                     &j->rep.write_ms);
        j->written = rc == 0;
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

int result_open_rows(struct job *j, const struct gc_tensor *whole, int flags, int *at_offsets)
{
    *at_offsets = 0;
    int rc = begin_output(j, flags);
    if (rc)
        return rc;
    if ((rc = io_offsets_start(&j->out, j->fmt, whole, &j->at, at_offsets)))
        return rc;
    j->at.threads = j->o->threads;
    return 0;
}

int result_put_rows(void *job, size_t first, int64_t rows, int64_t cols, size_t ld,
                    const void *data)
{
    const struct job *j = job;
    return io_offsets_write(&j->at, first, rows, cols, ld, data);
}

int result_refused(struct job *j)
{
    const struct gc_opts *o = j->o;
    if (!o->verify || !j->rep.verify.done || j->rep.verify.ok)
        return 0;
    /* A result that failed verification is not written: it is not what was
     * asked for, and it must not replace an earlier good file. */
    progress_end(&j->progress);
    char why[512];
    verify_describe_failure(&j->rep.verify, why, sizeof why);
    int rc = job_emit_report(o, &j->rep);
    if (rc)
        return rc;
    return gc_fail(GC_EXIT_VERIFY, "verification failed: %s; %s not written", why,
                   gc_display_name(o->output, 1));
}

int result_write(struct job *j, struct gc_tensor *t, enum gc_dtype dtype)
{
    progress_phase(&j->progress, "writing %s", gc_display_name(j->o->output, 1));
    int rc = io_to_c_order(t, dtype);
    if (rc)
        return rc;
    double t0 = now_ms();
    if (!(rc = begin_output(j, 0)))
        rc = io_write_tensor(&j->out, j->o, j->fmt, t);
    j->rep.write_ms += now_ms() - t0;
    return rc;
}

int result_commit(struct job *j)
{
    j->rep.total_ms = now_ms() - j->t0;
    progress_end(&j->progress);
    int rc = job_emit_report(j->o, &j->rep);
    return rc ? rc : output_commit(&j->out);
}

int result_finish(struct job *j, struct gc_tensor *result, enum gc_dtype dtype)
{
    int rc = result_refused(j);
    if (rc)
        return rc;
    if (!j->written && (rc = result_write(j, result, dtype)))
        return rc;
    return result_commit(j);
}
