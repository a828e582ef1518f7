/* A parallel for over [0, n) on host threads: the range is cut into one
 * contiguous slice per thread, and the calling thread works on one too. */
#ifndef GC_PARALLEL_H
#define GC_PARALLEL_H

#include <stddef.h>

typedef void (*parallel_fn)(void *ctx, size_t begin, size_t end);

/* threads <= 0 means one per online core.  Slices smaller than `grain`
 * are not split further.  Falls back to fewer threads if pthread_create
 * fails, so the work is always done. */
void parallel_for(int threads, size_t n, size_t grain, parallel_fn fn, void *ctx);

int parallel_default_threads(void);

#endif
