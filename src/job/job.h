/* The one job pipeline that mul and transpose share: read -> upload -> run
 * -> download (or stream) -> write, with the progress line, the device
 * started on a thread while the inputs are read, timing through the one
 * timing loop (device events or the host's clock), verification's last
 * word, the summary, and the commit of the output only once everything
 * else has succeeded. */
#ifndef GC_JOB_H
#define GC_JOB_H

#include <pthread.h>

#include "src/job/device.h"
#include "src/job/options.h"
#include "src/job/output.h"
#include "src/job/progress.h"
#include "src/job/report.h"

struct job {
    const struct gc_opts *o;
    int fmt;                   /* the output format */
    struct gc_report rep;
    char device_name[256];
    struct gc_device dev;
    struct gc_device_warm warm;
    struct gc_output out;
    int streamed;              /* the result went from the device into `out` */
    int no_stream;             /* the result must come to host memory (MPI ranks write it) */
    struct gc_progress progress;
    double t0;
    pthread_mutex_t open_lock;   /* the device is opened once, by whichever comes first */
    int open_tried;              /* job_open_device_early tried already */
};

/* Sets up the report and the progress line; starts the device on a thread
 * unless `on_host`.  `fallback` is the output format for stdout. */
int job_begin(struct job *j, const struct gc_opts *o, const char *command, int on_host,
              int fallback_format);

/* Opens the device (the warm thread joined first) and, when `cublas`, its
 * cuBLAS handle. */
int job_open_device(struct job *j, int cublas);

/* Opens the device ahead of the main thread, from a reading thread that
 * wants to upload as it reads: at most one try, silent when it fails (the
 * main thread's job_open_device then says why).  0 when it is open. */
int job_open_device_early(struct job *j);

/* cudaMalloc + copy of `bytes` at `host`, timed into the report's h2d. */
int job_upload(struct job *j, const void *host, size_t bytes, void **d);

/* Times `repeat` runs of run(arg, i) (warm-up first) on the device, or on
 * the host's clock when the device is not open; the median goes to *ms. */
int job_time(struct job *j, int (*run)(void *arg, int i), int (*before)(void *arg, int i),
             void *arg, int repeat, double *ms);

/* The device result `d` (C order, `shape`'s dtype and shape) to the
 * output: streamed into the output when the format allows and `stream`,
 * else copied into `host` (allocated here). */
int job_take_result(struct job *j, const void *d, const struct gc_tensor *shape, int stream,
                    struct gc_tensor *host);

/* The end of a successful run: a failed verification is reported and not
 * written (GC_EXIT_VERIFY); otherwise `result` (unless streamed) is written
 * as `dtype`, the summary printed, and the output committed. */
int job_finish(struct job *j, struct gc_tensor *result, enum gc_dtype dtype);

/* Releases everything; an uncommitted output is removed. */
void job_end(struct job *j);

/* Prints the run's report as --quiet/--json ask (JSON to stdout unless the
 * matrix goes there).  Returns 0, or GC_EXIT_OUTPUT when it could not be
 * written (then the output must not be committed). */
int job_emit_report(const struct gc_opts *o, const struct gc_report *r);

#endif
