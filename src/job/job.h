/* The one job pipeline that mul and transpose share: read -> upload -> run
 * -> download (or stream) -> write, with the progress line, the device
 * started on a thread while the inputs are read, and timing through the
 * one timing loop (device events or the host's clock).  The result goes
 * out through the one result writer (src/job/result.h). */
#ifndef GC_JOB_H
#define GC_JOB_H

#include <pthread.h>

#include "src/job/device.h"
#include "src/job/io.h"
#include "src/job/options.h"
#include "src/job/output.h"
#include "src/job/progress.h"
#include "src/job/report.h"

struct job {
    const struct gc_opts *o;
    int fmt;                   /* the output format, once the inputs are read */
    struct gc_report rep;
    char device_name[256];
    struct gc_device dev;
    struct gc_device_warm warm;
    struct gc_output out;
    int begun;                 /* `out` is begun */
    int written;               /* the whole result is in `out` (streamed, or rows at offsets) */
    struct io_offsets at;      /* where rows go at their offsets (result_open_rows) */
    int no_stream;             /* the result must come to host memory (MPI ranks write it) */
    struct gc_progress progress;
    double t0;
    pthread_mutex_t open_lock;   /* the device is opened once, by whichever comes first */
    int open_tried;              /* job_open_device_early tried already */
};

/* Checks that the output's format can be told (io_output_check), sets up
 * the report and the progress line; starts the device on a thread unless
 * `on_host`. */
int job_begin(struct job *j, const struct gc_opts *o, const char *command, int on_host);

/* The options a command runs with where the machine shows CUDA no GPU
 * (device_none_here) and `o` leaves the kernel to auto and names no
 * device (--device, --devices): a copy in *local whose kernel is the
 * host's own ("cpu"; mul then takes "blas" where it has the product's
 * type), said on stderr where `say` (not with --quiet).  Otherwise `o`
 * itself. */
const struct gc_opts *job_without_gpu(const struct gc_opts *o, struct gc_opts *local,
                                      const char *command, int say);

/* Whether job_without_gpu turns `o` to the host's kernel. */
int job_runs_without_gpu(const struct gc_opts *o);

/* Opens the device (the warm thread joined first) and, when `cublas`, its
 * cuBLAS handle. */
int job_open_device(struct job *j, int cublas);

/* Opens the device ahead of the main thread, from a reading thread that
 * wants to upload as it reads: at most one try, silent when it fails (the
 * main thread's job_open_device then says why).  0 when it is open, else
 * GC_EXIT_GPU, unsaid. */
int job_open_device_early(struct job *j);

/* cudaMalloc + copy of `bytes` at `host`, timed into the report's h2d. */
int job_upload(struct job *j, const void *host, size_t bytes, void **d);

/* Times `repeat` runs of run(arg, i) (warm-up first) on the device, or on
 * the host's clock when the device is not open; the median goes to *ms. */
int job_time(struct job *j, int (*run)(void *arg, int i), int (*before)(void *arg, int i),
             void *arg, int repeat, double *ms);

/* Releases everything; an uncommitted output is removed. */
void job_end(struct job *j);

/* Prints the run's report as --quiet/--json ask (JSON to stdout unless the
 * matrix goes there).  Returns 0, or GC_EXIT_OUTPUT when it could not be
 * written (then the output must not be committed). */
int job_emit_report(const struct gc_opts *o, const struct gc_report *r);

#endif
