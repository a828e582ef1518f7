#include "core/parallel.h"

#include <pthread.h>
#include <unistd.h>

#define MAX_THREADS 256

struct slice {
    parallel_fn fn;
    void *ctx;
    size_t begin, end;
};

static void *run_slice(void *arg)
{
    const struct slice *s = arg;
    s->fn(s->ctx, s->begin, s->end);
    return NULL;
}

int parallel_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

void parallel_for(int threads, size_t n, size_t grain, parallel_fn fn, void *ctx)
{
    if (threads <= 0)
        threads = parallel_default_threads();
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (grain < 1)
        grain = 1;
    if ((size_t)threads > (n + grain - 1) / grain)
        threads = (int)((n + grain - 1) / grain);
    if (threads <= 1) {
        if (n)
            fn(ctx, 0, n);
        return;
    }
    struct slice slices[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    int started[MAX_THREADS] = { 0 };
    for (int t = 0; t < threads; t++)
        slices[t] = (struct slice){ fn, ctx, n * t / threads, n * (t + 1) / threads };
    for (int t = 1; t < threads; t++)
        started[t] = pthread_create(&tids[t], NULL, run_slice, &slices[t]) == 0;
    run_slice(&slices[0]);
    for (int t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        else
            run_slice(&slices[t]);
    }
}
