/* The kept workspace of the memory-bound stages that cut K themselves
 * (gemv.cuh, thin.cuh): slabs for the slices' partial sums and tickets by
 * which the last block (or warp) of each region of C knows that it is the
 * last, so that it sums the slices there and the product is one launch
 * (join.cuh).  A launch's own allocation from the stream's pool and a
 * second launch for the sum cost a small product about as much again as
 * its kernel (README, "Measurements behind the stages").
 *
 * One space per device and stream, taken from that stream's pool and
 * kept: the launches of one stream never overlap, so they share it, and a
 * region's last arrival puts its ticket back to 0 for the next launch. */
#ifndef GC_KERNELS_SLAB_SPACE_H
#define GC_KERNELS_SLAB_SPACE_H

#include <stddef.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SLAB_TICKETS = 1 << 14,         /* regions of one launch at most */
    SLAB_KEEP_BYTES = 16 << 20      /* slabs kept at most; more come from the pool */
};

struct slab_space {
    void *slabs;                    /* NULL: the caller takes its slabs from the pool */
    unsigned *tickets;              /* NULL: no space here; sum the slices by a second launch */
};

/* The space for `bytes` of slabs and `tickets` regions on `stream` of the
 * current device.  Gives tickets NULL (and cudaSuccess) where it keeps
 * none: more regions than SLAB_TICKETS, or more streams than it holds. */
cudaError_t slab_space_get(cudaStream_t stream, size_t bytes, size_t tickets,
                           struct slab_space *out);

/* Gives back the current device's space for `stream`, in the stream's
 * order; call it before the stream is destroyed. */
void slab_space_forget(cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
