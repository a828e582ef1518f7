/* The kept slabs and tickets of the memory-bound stages (slab_space.h). */
#include "kernels/memory_bound/slab_space.h"

#include <pthread.h>

enum { SLAB_SPACES = 16 };

struct slab_entry {
    int used, device;
    cudaStream_t stream;
    void *slabs;
    size_t bytes;
    unsigned *tickets;
};

static struct slab_entry spaces[SLAB_SPACES];
static pthread_mutex_t spaces_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry for (device, stream), a new one with its tickets zeroed where
 * there is room; NULL where there is none. */
static struct slab_entry *entry_for(int device, cudaStream_t stream, cudaError_t *err)
{
    struct slab_entry *free_one = NULL;
    for (int i = 0; i < SLAB_SPACES; i++) {
        if (spaces[i].used && spaces[i].device == device && spaces[i].stream == stream)
            return &spaces[i];
        if (!spaces[i].used && !free_one)
            free_one = &spaces[i];
    }
    if (!free_one)
        return NULL;
    size_t ticket_bytes = (size_t)SLAB_TICKETS * sizeof(unsigned);
    void *t = NULL;
    *err = cudaMallocAsync(&t, ticket_bytes, stream);
    if (*err != cudaSuccess)
        return NULL;
    *err = cudaMemsetAsync(t, 0, ticket_bytes, stream);
    if (*err != cudaSuccess) {
        cudaFreeAsync(t, stream);
        return NULL;
    }
    free_one->used = 1;
    free_one->device = device;
    free_one->stream = stream;
    free_one->slabs = NULL;
    free_one->bytes = 0;
    free_one->tickets = (unsigned *)t;
    return free_one;
}

cudaError_t slab_space_get(cudaStream_t stream, size_t bytes, size_t tickets,
                           struct slab_space *out)
{
    out->slabs = NULL;
    out->tickets = NULL;
    if (tickets > SLAB_TICKETS)
        return cudaSuccess;
    int device;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    pthread_mutex_lock(&spaces_lock);
    err = cudaSuccess;
    struct slab_entry *e = entry_for(device, stream, &err);
    if (e && bytes <= SLAB_KEEP_BYTES && bytes > e->bytes) {
        /* Grown in the stream's order: the launches before still read the
         * old slabs, the pool hands the new ones out after them. */
        size_t want = e->bytes * 2 > bytes ? e->bytes * 2 : bytes;
        want = want < SLAB_KEEP_BYTES ? want : SLAB_KEEP_BYTES;
        void *grown = NULL;
        err = cudaMallocAsync(&grown, want, stream);
        if (err == cudaSuccess) {
            if (e->slabs)
                cudaFreeAsync(e->slabs, stream);
            e->slabs = grown;
            e->bytes = want;
        }
    }
    if (e) {
        out->slabs = bytes <= e->bytes ? e->slabs : NULL;
        out->tickets = e->tickets;
    }
    pthread_mutex_unlock(&spaces_lock);
    /* A space that could not be had is no error: the caller takes the
     * pool and a second launch, and its launch check must not see this. */
    if (err != cudaSuccess)
        (void)cudaGetLastError();
    return cudaSuccess;
}

void slab_space_forget(cudaStream_t stream)
{
    int device;
    if (cudaGetDevice(&device) != cudaSuccess)
        return;
    pthread_mutex_lock(&spaces_lock);
    for (int i = 0; i < SLAB_SPACES; i++) {
        struct slab_entry *e = &spaces[i];
        if (e->used && e->device == device && e->stream == stream) {
            if (e->slabs)
                cudaFreeAsync(e->slabs, stream);
            cudaFreeAsync(e->tickets, stream);
            e->used = 0;
        }
    }
    pthread_mutex_unlock(&spaces_lock);
}
