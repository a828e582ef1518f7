/* auto's rates measured on the GPU that runs the product (calibrate.h). */
#include "src/job/calibrate.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "kernels/convert.h"
#include "src/job/options.h"
#include "src/plan/fit.h"
#include "src/plan/model.h"
#include "src/plan/select.h"
#include "src/plan/tune_cache.h"

#define CELL_BUDGET_MS 12.0      /* timed runs per kernel and shape, about */
#define CELL_MOST_MS 40.0        /* a cell the rates in hand put above this is skipped */
#define POOL_ELEMS ((size_t)32 << 20)   /* the largest A or B of the shapes below */
#define C_ELEMS ((size_t)64 << 20)      /* the largest C */
#define COPY_BYTES ((size_t)256 << 20)
#define SAMPLES_MOST 32         /* shapes a signature's list holds at most */

/* Each signature's shapes (BATCHxMxNxK or MxNxK): the full rate, a short K,
 * a long K over few tiles, a longer one over fewer where the operands'
 * bytes bind a tiled kernel (how fast it streams them: src/plan/fit.c,
 * stream_eff; float64 128 x 128 x 500000 took 0.69 ms on `f64_dmma_128x64`,
 * 0.40 on `f64_dmma`, NVIDIA H100, 2026-11-27), then the memory-bound
 * kernels' thin and short shapes of each of the thin stages' paths (M <= 32
 * and N <= 32; 8 columns, where the N path is bound by its bytes, and 32,
 * where the thin stages are bound by their multiply-adds), a K of 16 bytes
 * over a large C (a tiled kernel's stores of C), tiny products (each
 * kernel's floor: its launches and first wave; src/plan/fit.c keeps them
 * out of the rates), then rows of A and B that are not whole 16-byte units
 * (RAGGED: a tiled product, a tall thin one, a short K, a few rows over a
 * wide B: the thin stages' two paths load otherwise), and the tiny ones
 * again, last: the floor is the least of their times, and one pass alone
 * let a stall of some tens of ms set it (float thin 26.4 us and
 * swizzle_64x128 28.0 in one calibration, 6.0 to 7.8 and 7.0 to 9.1 in five
 * others; NVIDIA H100 and H200, 2026-11-26); each product's A, B and C
 * within the pools above. */
#define COMMON "256x256x65536 128x128x262144 1x8192x4096 8192x1x4096 32768x8x1024 " \
               "32768x16x1024 16x8192x4096 32x8192x4096 32768x32x1024 8192x8192x8 " \
               "4096x32x32x32 "
#define TINY "64x64x64 64x64x8 1x64x64 "
#define RAGGED "3001x2999x1003 13001x7x2003 8191x8193x5 7x13001x2003"
/* (16-bit rows of an even number of values: 4-byte loads, not 2-byte ones;
 * and an odd K over whole units of B: the 2-byte path for A alone, which
 * `mma_sync_128x128` takes where odd rows on both sides it does not) */
#define EVEN " 3002x2998x1002 13002x6x2002 8190x8194x6 6x13002x2002 3001x3000x1003"
static const struct {
    enum gemm_sig sig;
    const char *sizes;
} lists[] = {
    { GEMM_F32, "4096x4096x2048 8192x8192x32 8192x8192x4 " COMMON TINY RAGGED " " TINY },
    { GEMM_F16, "8192x8192x2048 8192x8192x32 " COMMON TINY RAGGED EVEN " " TINY },
    { GEMM_BF16, "8192x8192x2048 8192x8192x32 256x256x65536 64x64x64 3001x2999x1003 "
                 "3002x2998x1002" },
    { GEMM_F64, "2048x2048x2048 8192x8192x32 8192x8192x2 " COMMON TINY RAGGED " " TINY },
    { GEMM_TF32, "4096x4096x4096 8192x8192x32 256x256x65536 64x64x64 3001x2999x1003" },
    { GEMM_TF32X3, "4096x4096x2048 256x256x65536 64x64x64 3001x2999x1003" },
    { GEMM_I64, "1024x1024x1024 64x64x64" },
    { GEMM_I8, "8192x8192x2048 8192x8192x32 256x256x65536 64x64x64 3001x2999x1003 64x64x64" },
    { GEMM_I16, "4096x4096x2048 256x256x16384 64x64x64 3001x2999x1003" },
    { GEMM_I32, "4096x4096x1024 64x64x64 3001x2999x1003" },
};

void calibrate_device_of(const struct gc_device *dev, struct rates_device *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", dev->name);
    d->cc = dev->cc_major * 10 + dev->cc_minor;
    d->sm_count = dev->sm_count;
    d->clock_mhz = (int)(dev->clock_ghz * 1e3 + 0.5);
    d->mem_gbps = round(dev->mem_gbps);
    d->driver = dev->driver;
}

/* The operands every cell reads: random values in each signature's input
 * type, made once as floats and converted. */
struct pools {
    void *f32_a, *f32_b;
    void *a, *b, *c;
    enum gc_dtype in;
};

static int pools_for(struct gc_device *dev, struct pools *pl, enum gemm_sig sig)
{
    enum gc_dtype in = gemm_sigs[sig].in;
    if (pl->a && pl->in == in)
        return 0;
    if (pl->a != pl->f32_a) {
        cudaFree(pl->a);
        cudaFree(pl->b);
    }
    pl->a = pl->b = NULL;
    if (in == GC_F32) {
        pl->a = pl->f32_a;
        pl->b = pl->f32_b;
    } else if (gc_dtype_is_integral(in)) {
        /* (integer kernels' time does not depend on the values) */
        size_t bytes = POOL_ELEMS * gc_dtypes[in].size;
        CUDA_TRY(cudaMalloc(&pl->a, bytes));
        CUDA_TRY(cudaMalloc(&pl->b, bytes));
        CUDA_TRY(cudaMemsetAsync(pl->a, 3, bytes, dev->stream));
        CUDA_TRY(cudaMemsetAsync(pl->b, 5, bytes, dev->stream));
    } else {
        size_t bytes = POOL_ELEMS * gc_dtypes[in].size;
        CUDA_TRY(cudaMalloc(&pl->a, bytes));
        CUDA_TRY(cudaMalloc(&pl->b, bytes));
        CUDA_TRY(convert_operand_launch(pl->f32_a, GC_F32, 0, 0, 0, POOL_ELEMS, pl->a, in,
                                        dev->stream));
        CUDA_TRY(convert_operand_launch(pl->f32_b, GC_F32, 0, 0, 0, POOL_ELEMS, pl->b, in,
                                        dev->stream));
    }
    pl->in = in;
    return 0;
}

static void pools_free(struct pools *pl)
{
    if (pl->a != pl->f32_a) {
        cudaFree(pl->a);
        cudaFree(pl->b);
    }
    cudaFree(pl->f32_a);
    cudaFree(pl->f32_b);
    cudaFree(pl->c);
    memset(pl, 0, sizeof *pl);
}

struct cell {
    const struct gemm_kernel *k;
    struct gemm_problem p;
    struct launch_env env;
};

static int run_cell(void *arg, int i)
{
    (void)i;
    struct cell *c = arg;
    cudaError_t err = gemm_run(c->k, &c->p, &c->env, 0);
    return err == cudaSuccess ? 0 : device_cuda_fail(err, c->k->name, __FILE__, __LINE__);
}

static int parse_problem(const char *tok, enum gemm_sig sig, int cc, struct gemm_problem *p)
{
    struct gc_shape_opt sh;
    if (options_parse_shape(tok, &sh) != 0 || (sh.ndim != 3 && sh.ndim != 4))
        return -1;
    const size_t *d = sh.dims;
    int n = sh.ndim;
    memset(p, 0, sizeof *p);
    p->sig = sig;
    p->batch = n == 4 ? (int64_t)d[0] : 1;
    p->m = (int64_t)d[n - 3];
    p->n = (int64_t)d[n - 2];
    p->k = (int64_t)d[n - 1];
    gemm_problem_dense(p);
    p->stride_a = p->m * p->k;
    p->stride_b = p->k * p->n;
    p->alpha = 1;
    p->cc = cc;
    return 0;
}

/* Times kernel k on each of the signature's shapes it can compute into s;
 * the count in *n. */
static int time_kernel(struct gc_device *dev, const struct gemm_kernel *k, enum gemm_sig sig,
                       const char *sizes, const struct pools *pl, struct rate_sample *s, int *n)
{
    char buf[512], why[256];
    snprintf(buf, sizeof buf, "%s", sizes);
    char *save = NULL;
    struct clock_timer timer = device_timer_clock(&dev->timer);
    struct clock_plan plan = { 0, 1, CELL_BUDGET_MS, CELL_MOST_MS, 3, 12, 0 };
    *n = 0;
    for (char *tok = strtok_r(buf, " ", &save); tok && *n < SAMPLES_MOST;
         tok = strtok_r(NULL, " ", &save)) {
        struct cell c = { k, { 0 }, device_launch_env(dev) };
        if (parse_problem(tok, sig, dev->cc_major * 10 + dev->cc_minor, &c.p) != 0 ||
            (size_t)(c.p.batch * c.p.m * c.p.k) > POOL_ELEMS ||
            (size_t)(c.p.batch * c.p.k * c.p.n) > POOL_ELEMS ||
            (size_t)(c.p.batch * c.p.m * c.p.n) > C_ELEMS ||
            !gemm_can_implement(k, &c.p, why, sizeof why))
            continue;
        /* (the rates in hand say how slow a cell would be; a kernel they
         * lack is measured at every shape) */
        double guess = model_estimate(k, &c.p, dev->sm_count).ms;
        if (isfinite(guess) && guess > CELL_MOST_MS)
            continue;
        c.p.a = pl->a;
        c.p.b = pl->b;
        c.p.c = pl->c;
        double ms = NAN;
        int rc = clock_time_runs(&timer, run_cell, NULL, &c, &plan, &ms, NULL);
        if (rc == -1 && dev->timer.err != cudaSuccess)
            return device_cuda_fail(dev->timer.err, "timing", __FILE__, __LINE__);
        if (rc)
            return rc == -1 ? gc_fail(GC_EXIT_INPUT, "out of host memory") : rc;
        s[*n] = (struct rate_sample){ c.p, ms };
        s[*n].p.a = s[*n].p.b = NULL;
        s[*n].p.c = NULL;
        (*n)++;
    }
    return 0;
}

/* One kernel's samples, kept until its signature's are all measured. */
struct kernel_samples {
    const struct gemm_kernel *k;
    struct rate_sample s[SAMPLES_MOST];
    int n;
    double floor_ms;            /* the least of their times */
};

/* Times the kernels of signature l's list, each on every shape; then
 * again those whose least time is out of line with the others'
 * (rates_stalled), each shape keeping the faster of its two times.  A
 * kernel whose every run was slowed by something else on the GPU would
 * misplace its every estimate until the next calibration: float16
 * `f16_gemv` measured 680 GB/s with a 43.7 us floor in one calibration,
 * 1862-2891 GB/s and 5.0-7.5 us in the four others of one `make
 * check-gpu`, and auto sent float16 64 x 1 x 1000000 to `f16_thin`, 40%
 * of cuBLAS (NVIDIA H100, 2026-11-27). */
static int measure_list(struct gc_device *dev, struct pools *pl, size_t l,
                        struct kernel_samples *ks, int *count)
{
    enum gemm_sig sig = lists[l].sig;
    double floors[64];
    int nk = 0, nf = 0;
    for (size_t i = 0; i < gemm_kernel_count && nk < 64; i++) {
        const struct gemm_kernel *k = &gemm_kernels[i];
        if (!k->geometry || !select_auto_candidate(k->flags) || !(k->sigs & (1u << sig)))
            continue;
        struct kernel_samples *t = &ks[nk++];
        t->k = k;
        t->n = 0;
        t->floor_ms = 0;
        int rc = pools_for(dev, pl, sig);
        if (!rc)
            rc = time_kernel(dev, k, sig, lists[l].sizes, pl, t->s, &t->n);
        if (rc)
            return rc;
        for (int j = 0; j < t->n; j++)
            if (t->floor_ms == 0 || t->s[j].ms < t->floor_ms)
                t->floor_ms = t->s[j].ms;
        if (t->floor_ms > 0)
            floors[nf++] = t->floor_ms;
    }
    *count = nk;
    for (int i = 0; i < nk; i++) {
        struct kernel_samples *t = &ks[i];
        if (!rates_stalled(floors, nf, t->floor_ms))
            continue;
        struct rate_sample again[SAMPLES_MOST];
        int n = 0, rc = pools_for(dev, pl, sig);
        if (!rc)
            rc = time_kernel(dev, t->k, sig, lists[l].sizes, pl, again, &n);
        if (rc)
            return rc;
        for (int j = 0; j < n && j < t->n; j++)
            if (again[j].ms < t->s[j].ms)
                t->s[j].ms = again[j].ms;
    }
    return 0;
}

static int measure_all(struct gc_device *dev, struct pools *pl, struct model_rates *out)
{
    struct kernel_samples *ks = malloc(64 * sizeof *ks);
    if (!ks)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    int rc = 0;
    for (size_t l = 0; l < sizeof lists / sizeof lists[0] && !rc; l++) {
        int nk = 0;
        rc = measure_list(dev, pl, l, ks, &nk);
        for (int i = 0; i < nk && !rc; i++)
            if (out->count < RATES_MAX &&
                rates_fit(ks[i].k, lists[l].sig, ks[i].s, ks[i].n, dev->sm_count,
                          out->copy_gbps, &out->e[out->count]) == 0)
                out->count++;
    }
    free(ks);
    return rc;
}

int calibrate_measure(struct gc_device *dev, int quiet, struct model_rates *out)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(out, 0, sizeof *out);
    out->source = RATES_MEASURED;
    calibrate_device_of(dev, &out->device);
    snprintf(out->measured_on, sizeof out->measured_on, "%s", dev->name);
    out->sm_count = dev->sm_count;
    out->compute_scale = out->memory_scale = 1;
    time_t now = time(NULL);
    struct tm tm;
    strftime(out->date, sizeof out->date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    if (!quiet)
        gc_note("measuring this GPU's kernel rates for auto (once per GPU model, driver and "
                "build of gemmcli; a few seconds)");
    out->copy_gbps = device_copy_gbps(dev, COPY_BYTES);
    if (!(out->copy_gbps > 0))
        return gc_fail(GC_EXIT_GPU, "calibration: could not time a device copy");
    struct pools pl = { 0 };
    int rc = device_random_operand(dev, POOL_ELEMS, 11, GC_F32, &pl.f32_a);
    if (!rc)
        rc = device_random_operand(dev, POOL_ELEMS, 12, GC_F32, &pl.f32_b);
    if (!rc)
        rc = CUDA_CALL(cudaMalloc(&pl.c, C_ELEMS * sizeof(double)));
    if (!rc)
        rc = measure_all(dev, &pl, out);
    pools_free(&pl);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}

/* An exclusive lock beside d's file, so that the processes of one host
 * (MPI ranks, a parallel test run) measure one at a time and the later
 * ones read what the first stored.  -1: no lock (no cache directory). */
static int lock_rates(const struct rates_device *d)
{
    char path[TUNE_PATH_MAX + 8], dir[TUNE_PATH_MAX], why[256];
    if (rates_path(d, path, sizeof path - 8) != 0 || tune_cache_dir(dir, sizeof dir) != 0 ||
        tune_cache_make_dirs(dir, why, sizeof why) != 0)
        return -1;
    strcat(path, ".lock");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0)
        return -1;
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
        ;
    return fd;
}

int calibrate_ready(struct gc_device *dev, enum calibrate_when when, int quiet)
{
    struct rates_device d;
    struct model_rates *r = malloc(sizeof *r);
    char why[512] = "";
    if (!r)
        return 0;
    calibrate_device_of(dev, &d);
    enum rates_state st = rates_load(&d, time(NULL), r, why, sizeof why);
    if ((st == RATES_LOADED && when != CALIBRATE_NOW) || when == CALIBRATE_NEVER) {
        if (st != RATES_LOADED)
            rates_scaled(&d, r);
        rates_use(r);
        free(r);
        return 0;
    }
    int lock = lock_rates(&d);
    /* Another process may have measured while this one waited; and where
     * nothing measured could be kept, measuring at every run would cost
     * more than it saves. */
    if (when != CALIBRATE_NOW &&
        (lock < 0 || rates_load(&d, time(NULL), r, why, sizeof why) == RATES_LOADED)) {
        if (lock < 0)
            rates_scaled(&d, r);
        rates_use(r);
        if (lock >= 0)
            close(lock);
        free(r);
        return 0;
    }
    if (!quiet && st == RATES_STALE)
        gc_note("this GPU's kernel rates are out of date (%s)", why);
    int rc = calibrate_measure(dev, quiet, r);
    if (!rc) {
        rates_use(r);
        if (rates_store(r, why, sizeof why) != 0) {
            if (!quiet)
                gc_warn("this GPU's kernel rates were measured but not kept: %s", why);
        } else if (!quiet) {
            gc_note("kernel rates measured in %.1f s", r->seconds);
        }
    } else {
        rates_scaled(&d, r);
        rates_use(r);
        if (!quiet && when != CALIBRATE_NOW)
            gc_warn("going on with the table's rates scaled to this GPU");
    }
    if (lock >= 0)
        close(lock);
    free(r);
    return when == CALIBRATE_NOW ? rc : 0;
}
