#include "src/job/device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "kernels/convert.h"
#include "kernels/memory_bound/slab_space.h"

int device_cuda_fail(cudaError_t err, const char *what, const char *file, int line)
{
    if (err == cudaErrorMemoryAllocation)
        return gc_fail(GC_EXIT_GPU, "out of device memory (%s at %s:%d)", what, file, line);
    return gc_fail(GC_EXIT_GPU, "CUDA error: %s (%s at %s:%d)", cudaGetErrorString(err),
                   what, file, line);
}

int device_cublas_fail(cublasStatus_t st, const char *what, const char *file, int line)
{
    return gc_fail(GC_EXIT_GPU, "cuBLAS error: %s (%s at %s:%d)", cublasGetStatusString(st),
                   what, file, line);
}

void device_configure(void)
{
    /* All of gemmcli's GPU work goes through one stream, which needs one
     * hardware work queue; the driver's default of 8 made creating the
     * context take about 90 ms instead of 45 (H200, 2026-11-21).  A value
     * the user set is kept. */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0);
}

int device_present(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

int device_none_here(void)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible && !*visible)
        return 1;
    return access("/dev/nvidiactl", F_OK) != 0 && access("/dev/dxg", F_OK) != 0;
}

int device_open(struct gc_device *d, int ordinal, int suggest_cpu)
{
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        cudaGetLastError();
        return gc_fail(GC_EXIT_GPU, "no CUDA device available (%s)%s",
                       err != cudaSuccess ? cudaGetErrorString(err) : "no device found",
                       suggest_cpu ? "; use --kernel cpu to run on the CPU" : "");
    }
    if (ordinal >= n)
        return gc_fail(GC_EXIT_GPU, "no CUDA device %d (this machine has %d)", ordinal, n);
    CUDA_TRY(cudaSetDevice(ordinal));
    CUDA_TRY(kernels_prepare_device());

    struct cudaDeviceProp p;
    CUDA_TRY(cudaGetDeviceProperties(&p, ordinal));
    snprintf(d->name, sizeof d->name, "%s", p.name);
    d->sm_count = p.multiProcessorCount;
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->l2_bytes = (size_t)p.l2CacheSize;
    d->smem_optin = p.sharedMemPerBlockOptin;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ordinal) != cudaSuccess)
        khz = 0;
    d->clock_ghz = khz / 1e6;
    int mem_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ordinal) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal) !=
            cudaSuccess)
        mem_khz = bus_bits = 0;
    d->mem_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    if (cudaDriverGetVersion(&d->driver) != cudaSuccess)
        d->driver = 0;
    cudaGetLastError();

    CUDA_TRY(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    CUDA_TRY(device_timer_init(&d->timer, d->stream));
    d->open = 1;
    return 0;
}

int device_cublas(struct gc_device *d)
{
    if (d->cublas)
        return 0;
    CUBLAS_TRY(cublasCreate(&d->cublas));
    CUBLAS_TRY(cublasSetStream(d->cublas, d->stream));
    /* Default math keeps FP32 GEMMs on FP32 arithmetic (no TF32 tensor cores
     * unless asked for); the reference launchers also name CUBLAS_COMPUTE_32F. */
    CUBLAS_TRY(cublasSetMathMode(d->cublas, CUBLAS_DEFAULT_MATH));
    return 0;
}

void device_close(struct gc_device *d)
{
    if (!d->open)
        return;
    if (d->cublas)
        cublasDestroy(d->cublas);
    device_timer_destroy(&d->timer);
    slab_space_forget(d->stream);
    cudaStreamDestroy(d->stream);
    d->open = 0;
}

int device_check_memory(struct gc_device *d, size_t bytes, const char *what)
{
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    (void)d;
    if (bytes > free_b)
        return gc_fail(GC_EXIT_GPU, "%s needs %.2f GiB of device memory, but only %.2f GiB "
                       "of %.2f GiB is free", what, bytes / 1073741824.0,
                       free_b / 1073741824.0, total_b / 1073741824.0);
    return 0;
}

int device_download(struct gc_device *d, void *host, const void *dev, size_t bytes)
{
    if (!bytes)
        return 0;
    CUDA_TRY(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, d->stream));
    CUDA_TRY(cudaStreamSynchronize(d->stream));
    return 0;
}

struct launch_env device_launch_env(const struct gc_device *d)
{
    struct launch_env env = { d->stream, d->cublas, d->sm_count, d->cc_major * 10 + d->cc_minor };
    return env;
}

double device_fp32_peak_gflops(const struct gc_device *d)
{
    return d->sm_count * 128.0 * 2.0 * d->clock_ghz;
}

int device_time_runs(struct gc_device *d, int (*run)(void *arg, int i),
                     int (*before)(void *arg, int i), void *arg, int repeat,
                     double *median_ms)
{
    struct clock_timer timer = device_timer_clock(&d->timer);
    struct clock_plan plan = { .repeat = repeat, .warmup = 1,
                               .own_warmup_ms = DEVICE_OWN_WARMUP_MS };
    d->timer.err = cudaSuccess;
    int rc = clock_time_runs(&timer, run, before, arg, &plan, median_ms, NULL);
    if (rc == -1 && d->timer.err != cudaSuccess)
        return device_cuda_fail(d->timer.err, "timing a kernel", __FILE__, __LINE__);
    if (rc == -1)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    return rc;
}

static void *warm_device(void *arg)
{
    const struct gc_device_warm *w = arg;
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && w->ordinal < n &&
        cudaSetDevice(w->ordinal) == cudaSuccess)
        cudaFree(NULL);   /* creates the primary context */
    return NULL;
}

void device_warm_start(struct gc_device_warm *w, int ordinal)
{
    w->ordinal = ordinal;
    w->started = pthread_create(&w->thread, NULL, warm_device, w) == 0;
}

void device_warm_wait(struct gc_device_warm *w)
{
    if (w->started)
        pthread_join(w->thread, NULL);
    w->started = 0;
}

int device_pin(void *p, size_t bytes)
{
    if (!p || !bytes || cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return 1;
}

static void fill_random(float *x, size_t n, unsigned long long seed)
{
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)((s >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

int device_random_operand(struct gc_device *dev, size_t n, unsigned long long seed,
                         enum gc_dtype to, void **dst)
{
    float *host = malloc((n ? n : 1) * sizeof *host);
    void *staging = NULL;
    int rc;
    *dst = NULL;
    if (!host)
        return gc_fail(GC_EXIT_INPUT, "out of host memory");
    fill_random(host, n, seed);
    if (!(rc = CUDA_CALL(cudaMalloc(dst, (n ? n : 1) * gc_dtypes[to].size))) &&
        !(rc = CUDA_CALL(cudaMalloc(&staging, (n ? n : 1) * sizeof(float)))) &&
        !(rc = CUDA_CALL(cudaMemcpy(staging, host, n * sizeof(float), cudaMemcpyHostToDevice))))
        rc = CUDA_CALL(convert_operand_launch(staging, GC_F32, 0, 0, 0, n, *dst, to,
                                              dev->stream));
    if (!rc)
        rc = CUDA_CALL(cudaStreamSynchronize(dev->stream));
    cudaFree(staging);
    free(host);
    return rc;
}

double device_copy_gbps(struct gc_device *dev, size_t bytes)
{
    void *x = NULL, *y = NULL;
    double v[5], out = 0;
    cudaEvent_t e0, e1;
    if (cudaMalloc(&x, bytes) != cudaSuccess || cudaMalloc(&y, bytes) != cudaSuccess ||
        cudaEventCreate(&e0) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(x);
        cudaFree(y);
        return 0;
    }
    if (cudaEventCreate(&e1) == cudaSuccess) {
        int ok = cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, dev->stream) ==
                 cudaSuccess;
        for (int i = 0; i < 5 && ok; i++) {
            float ms = 0;
            ok = cudaEventRecord(e0, dev->stream) == cudaSuccess &&
                 cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, dev->stream) ==
                     cudaSuccess &&
                 cudaEventRecord(e1, dev->stream) == cudaSuccess &&
                 cudaEventSynchronize(e1) == cudaSuccess &&
                 cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms > 0;
            v[i] = ok ? 2.0 * bytes / (ms / 1e3) / 1e9 : 0;
        }
        out = ok ? clock_median(v, 5) : 0;
        cudaEventDestroy(e1);
    }
    cudaEventDestroy(e0);
    cudaFree(x);
    cudaFree(y);
    return out;
}
