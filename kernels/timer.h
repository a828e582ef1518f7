/* CUDA events as a core/clock.h timer, so that the CLI, the bench and the
 * kernel tests time device work with the one timing loop. */
#ifndef GC_TIMER_H
#define GC_TIMER_H

#include <cuda_runtime_api.h>

#include "core/clock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct device_timer {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    cudaError_t err;          /* the first CUDA error, when a callback failed */
};

cudaError_t device_timer_init(struct device_timer *t, cudaStream_t stream);
void device_timer_destroy(struct device_timer *t);

/* begin() records the start event on the stream, end() the stop event,
 * waits for it and gives the time between; a failure returns -1 with the
 * error in t->err. */
struct clock_timer device_timer_clock(struct device_timer *t);

#ifdef __cplusplus
}
#endif

#endif
