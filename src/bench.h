/* What the bench's modes share (src/bench.c, src/sweep.c). */
#ifndef GC_BENCH_H
#define GC_BENCH_H

#include <stddef.h>

#include "device.h"

/* n values in [-1, 1) from `seed`, made as float32 on the host and
 * converted on the device into `to`, in a new device buffer *dst.
 * Returns 0 or an exit status it has reported. */
int bench_random_operand(struct gc_device *dev, size_t n, unsigned long long seed,
                         enum gc_dtype to, void **dst);

#endif
