#include "src/job/facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/error.h"
#include "src/job/calibrate.h"
#include "src/plan/rates.h"
#include "src/plan/tune_cache.h"

/* A GPU's compute capability and SMs; cc 0 where it does not answer. */
static struct device_fact fact_of(int ordinal)
{
    int major = 0, minor = 0, sms = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal) ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal) ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal)) {
        cudaGetLastError();
        major = minor = sms = 0;
    }
    return (struct device_fact){ ordinal, major * 10 + minor, sms };
}

/* Without --devices, every GPU of the host (the first TILED_MAX_DEVICES),
 * the job's own first: those auto may share a large product among.  One
 * that another process may hold alone (an exclusive compute mode) counts
 * as one that did not answer, so that auto does not share with it. */
static void host_devices(const struct gc_opts *o, int own, struct device_facts *f)
{
    int n = 0;
    f->host_gpus = 0;
    if (o->n_devices != 0 || cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    for (int i = -1; i < n && f->host_gpus < TILED_MAX_DEVICES; i++) {
        if (i == own)
            continue;
        struct device_fact d = fact_of(i < 0 ? own : i);
        int mode = cudaComputeModeDefault;
        if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d.ordinal) != cudaSuccess) {
            cudaGetLastError();
            mode = -1;
        }
        if (mode != cudaComputeModeDefault)
            d.cc = d.sm_count = 0;
        f->host[f->host_gpus++] = d;
    }
}

/* The GPUs that share the tiles, as --devices names them (all: the first
 * TILED_MAX_DEVICES there are; none: the job's own), each asked its
 * compute capability and SMs; one that does not answer is left with
 * cc 0, to fail when it is opened. */
static int tile_devices(const struct gc_opts *o, int own, struct device_facts *f)
{
    int n = 1;
    if (o->n_devices < 0) {
        int rc = CUDA_CALL(cudaGetDeviceCount(&n));
        if (rc)
            return rc;
        n = n < TILED_MAX_DEVICES ? n : TILED_MAX_DEVICES;
    } else if (o->n_devices > 0) {
        n = o->n_devices < TILED_MAX_DEVICES ? o->n_devices : TILED_MAX_DEVICES;
    }
    f->n_devices = n;
    for (int i = 0; i < n; i++)
        f->devices[i] = fact_of(o->n_devices < 0 ? i : o->n_devices > 0 ? o->devices[i] : own);
    host_devices(o, own, f);
    return 0;
}

static void from_device(const struct gc_device *dev, struct device_facts *f)
{
    memset(f, 0, sizeof *f);
    f->present = 1;
    snprintf(f->name, sizeof f->name, "%s", dev->name);
    f->cc = dev->cc_major * 10 + dev->cc_minor;
    f->sm_count = dev->sm_count;
}

int facts_of_job(struct job *j, const struct gc_opts *o, size_t held, struct device_facts *f)
{
    int rc = job_open_device(j, 0);
    if (rc)
        return rc;
    from_device(&j->dev, f);
    /* auto's rates for this GPU, measured here the first time auto
     * chooses on it (before the free memory is asked: the calibration's
     * buffers are given back). */
    if (strcmp(o->kernel, "auto") == 0)
        calibrate_ready(&j->dev, o->no_calibrate ? CALIBRATE_NEVER : CALIBRATE_IF_MISSING,
                        o->quiet);
    size_t free_b = 0, total_b = 0;
    if ((rc = CUDA_CALL(cudaMemGetInfo(&free_b, &total_b))))
        return rc;
    f->free_bytes = free_b + held;
    return tile_devices(o, j->dev.ordinal, f);
}

int facts_of_device(const struct gc_opts *o, struct device_facts *f)
{
    struct gc_device dev;
    size_t free_b = 0, total_b = 0;
    if (!device_present() || device_open(&dev, o->device, 0) != 0) {
        product_facts_model(f);
        f->n_devices = o->n_devices > 0 ? o->n_devices : 1;
        for (int i = 0; i < f->n_devices; i++)
            f->devices[i] = (struct device_fact){ o->n_devices > 0 ? o->devices[i] : o->device,
                                                  f->cc, f->sm_count };
        return 0;
    }
    from_device(&dev, f);
    /* A plan that is printed measures nothing: the rates kept, or the
     * table's scaled to this GPU. */
    calibrate_ready(&dev, CALIBRATE_NEVER, 1);
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        f->free_bytes = free_b;
    else
        cudaGetLastError();
    if (tile_devices(o, dev.ordinal, f))
        f->n_devices = 0;
    device_close(&dev);
    return 0;
}

int facts_of_rates_file(const char *path, struct device_facts *f)
{
    static struct model_rates rates;
    /* Read as the kept rates are (a regular text file within the cache's
     * bound: a FIFO or a device is refused, not waited on). */
    char *text = NULL;
    size_t len = 0;
    int st = tune_cache_read_text(path, &text, &len);
    if (st == -1)
        return gc_fail(GC_EXIT_INPUT, "%s: out of host memory", path);
    if (st == TUNE_CACHE_MISSING)
        return gc_fail(GC_EXIT_INPUT, "%s: %s", path, strerror(ENOENT));
    if (st != TUNE_CACHE_OK) {
        struct stat sb;
        int dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
        return gc_fail(GC_EXIT_INPUT, "%s: %s", path,
                       dir ? "is a directory, not a rates file"
                           : "not a rates file (not a readable regular text file of at most "
                             "the tune cache's size)");
    }
    /* The file names its GPU; its rates are checked against that GPU and
     * this build, as the ones kept for this machine's GPU are. */
    struct rates_head h;
    const char *body;
    int rc = 0;
    if (rates_read_head(text, &h, &body) != 0)
        rc = gc_fail(GC_EXIT_INPUT, "%s: not a rates file (no header, device and build "
                     "lines as 'gemmcli tune --calibrate' writes them)", path);
    else if (!(h.sm_count > 0 && h.sm_count <= 4096 && h.cc >= 10 && h.cc < 1000))
        rc = gc_fail(GC_EXIT_INPUT, "%s: its device line gives %d SMs and compute "
                     "capability %d.%d", path, h.sm_count, h.cc / 10, h.cc % 10);
    if (!rc) {
        struct rates_device d = { .cc = h.cc, .sm_count = h.sm_count, .clock_mhz = h.clock_mhz,
                                  .mem_gbps = h.mem_gbps, .driver = h.driver };
        snprintf(d.name, sizeof d.name, "%s", h.name);
        char why[512] = "";
        if (rates_parse(text, &d, time(NULL), &rates, why, sizeof why) != RATES_LOADED)
            rc = gc_fail(GC_EXIT_INPUT, "%s: rates this build cannot use: %s", path, why);
    }
    free(text);
    if (rc)
        return rc;
    rates_use(&rates);
    product_facts_model(f);
    snprintf(f->name, sizeof f->name, "%s", h.name);
    f->cc = h.cc;
    f->sm_count = h.sm_count;
    f->n_devices = 1;
    f->devices[0] = (struct device_fact){ 0, f->cc, f->sm_count };
    return 0;
}
