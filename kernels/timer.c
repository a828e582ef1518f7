#include "kernels/timer.h"

cudaError_t device_timer_init(struct device_timer *t, cudaStream_t stream)
{
    t->stream = stream;
    t->start = t->stop = NULL;
    t->err = cudaEventCreate(&t->start);
    if (t->err == cudaSuccess)
        t->err = cudaEventCreate(&t->stop);
    return t->err;
}

void device_timer_destroy(struct device_timer *t)
{
    if (t->start)
        cudaEventDestroy(t->start);
    if (t->stop)
        cudaEventDestroy(t->stop);
    t->start = t->stop = NULL;
}

static int timer_begin(void *state)
{
    struct device_timer *t = state;
    t->err = cudaEventRecord(t->start, t->stream);
    return t->err == cudaSuccess ? 0 : -1;
}

static int timer_end(void *state, double *ms)
{
    struct device_timer *t = state;
    float f = 0;
    if ((t->err = cudaEventRecord(t->stop, t->stream)) != cudaSuccess ||
        (t->err = cudaEventSynchronize(t->stop)) != cudaSuccess ||
        (t->err = cudaEventElapsedTime(&f, t->start, t->stop)) != cudaSuccess)
        return -1;
    *ms = f;
    return 0;
}

struct clock_timer device_timer_clock(struct device_timer *t)
{
    return (struct clock_timer){ timer_begin, timer_end, t };
}
