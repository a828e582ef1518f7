/* The device context: the CUDA device, one stream, the cuBLAS handle and
 * timing events, created only when a command needs the GPU, and the one
 * path through which CUDA and cuBLAS errors are reported. */
#ifndef GC_DEVICE_H
#define GC_DEVICE_H

#include <pthread.h>
#include <stddef.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#include "kernels/registry.h"
#include "kernels/timer.h"

struct gc_device {
    int ordinal;
    int open;
    char name[256];
    int sm_count, cc_major, cc_minor;
    size_t l2_bytes, smem_optin;
    double clock_ghz;            /* boost clock, for the FP32 peak */
    double mem_gbps;             /* 2 x memory clock x bus width; 0: unknown */
    int driver;                  /* cudaDriverGetVersion's; 0: unknown */
    cudaStream_t stream;
    cublasHandle_t cublas;       /* created on first use: see device_cublas */
    struct device_timer timer;
};

/* Reports a failed CUDA call and returns GC_EXIT_GPU. */
int device_cuda_fail(cudaError_t err, const char *what, const char *file, int line);
int device_cublas_fail(cublasStatus_t st, const char *what, const char *file, int line);

#define CUDA_TRY(call)                                                        \
    do {                                                                      \
        cudaError_t err_ = (call);                                            \
        if (err_ != cudaSuccess)                                              \
            return device_cuda_fail(err_, #call, __FILE__, __LINE__);         \
    } while (0)

#define CUBLAS_TRY(call)                                                      \
    do {                                                                      \
        cublasStatus_t st_ = (call);                                          \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                     \
            return device_cublas_fail(st_, #call, __FILE__, __LINE__);        \
    } while (0)

/* The same check as an expression for code that cleans up on the way out:
 * `if ((rc = CUDA_CALL(cudaMalloc(&p, n)))) goto out;` */
#define CUDA_CALL(call)                                                       \
    device_cuda_status((call), #call, __FILE__, __LINE__)

static inline int device_cuda_status(cudaError_t err, const char *what, const char *file,
                                     int line)
{
    return err == cudaSuccess ? 0 : device_cuda_fail(err, what, file, line);
}

/* A single timed run (repeat 1) is not repeated after a warm-up that took
 * this long: the warm-up's time is reported. */
#define DEVICE_OWN_WARMUP_MS 20.0

/* Times `repeat` runs of run(arg, i) on the device's stream after one
 * warm-up run (core/clock.h's loop with CUDA events); `before`, if not
 * NULL, runs untimed ahead of each (to restore C when beta != 0).  The
 * callbacks return 0 or a status they have reported.  Stores the median. */
int device_time_runs(struct gc_device *d, int (*run)(void *arg, int i),
                     int (*before)(void *arg, int i), void *arg, int repeat,
                     double *median_ms);

/* Creating a CUDA context takes a large share of a short run, so commands
 * start it on a thread of its own while they read their inputs.
 * device_warm_wait() only joins that thread: errors are reported by the
 * device_open() that follows, which finds the context already made. */
struct gc_device_warm {
    int started;
    int ordinal;
    pthread_t thread;
};
void device_warm_start(struct gc_device_warm *w, int ordinal);
void device_warm_wait(struct gc_device_warm *w);

/* Host memory page-locked in place, so that copies to and from a GPU run
 * at the link's rate straight from it (over huge pages, core/tensor.c,
 * tens of GB/s).  One range a buffer: a copy may not span two.  Returns 1
 * when it is locked, else 0 (the caller copies another way); unlock with
 * cudaHostUnregister. */
int device_pin(void *p, size_t bytes);

/* Sets the CUDA environment gemmcli runs best with; call before any CUDA
 * call and before any thread starts. */
void device_configure(void);

/* 1 if at least one CUDA device can be used, without reporting anything. */
int device_present(void);

/* 1 where this machine shows CUDA no GPU, known without starting CUDA
 * (which takes tens of ms where there is one): no NVIDIA driver's device
 * nodes (/dev/nvidiactl, or /dev/dxg under WSL), or CUDA_VISIBLE_DEVICES
 * set and empty.  0 does not promise a device: device_open says. */
int device_none_here(void);

/* Opens device `ordinal`: a clear error when there is none, suggesting
 * --kernel cpu when `suggest_cpu` (the command has a CPU kernel).  Returns
 * 0 or GC_EXIT_GPU. */
int device_open(struct gc_device *d, int ordinal, int suggest_cpu);
/* The cuBLAS handle, created (bound to the stream) on first call. */
int device_cublas(struct gc_device *d);
void device_close(struct gc_device *d);

/* Fails with a clear message when `bytes` exceed the free device memory. */
int device_check_memory(struct gc_device *d, size_t bytes, const char *what);

/* Copies `bytes` from device memory to the host once the device's stream
 * has done its work (a plain cudaMemcpy does not wait for a non-blocking
 * stream). */
int device_download(struct gc_device *d, void *host, const void *dev, size_t bytes);

/* The environment a kernel launcher gets. */
struct launch_env device_launch_env(const struct gc_device *d);

/* FP32 FFMA peak in GFLOP/s: SMs x 128 lanes x 2 x clock. */
double device_fp32_peak_gflops(const struct gc_device *d);

/* n values in [-1, 1) from `seed`, made as float32 on the host and
 * converted on the device into `to`, in a new device buffer *dst.
 * Returns 0 or an exit status it has reported. */
int device_random_operand(struct gc_device *dev, size_t n, unsigned long long seed,
                         enum gc_dtype to, void **dst);

/* The device's copy bandwidth, bytes read and written per second (GB/s):
 * a device-to-device copy of `bytes`, the median of 5; 0 when it could
 * not be timed. */
double device_copy_gbps(struct gc_device *dev, size_t bytes);

#endif
