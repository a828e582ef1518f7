#include "core/pwrite.h"

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

#include "core/parallel.h"

#define SLICE ((size_t)4 << 20)

struct pwrite_job {
    int fd;
    const unsigned char *src;
    off_t start;              /* the file offset of src[0] */
    size_t n, slices;
    atomic_size_t next;       /* the next slice to hand out */
    atomic_int err;           /* errno of the first failure, else 0 */
};

static int pwrite_range(int fd, const unsigned char *p, size_t n, off_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

static void pwrite_slices(void *arg, size_t begin, size_t end)
{
    struct pwrite_job *j = arg;
    size_t s;
    (void)begin, (void)end;
    while ((s = atomic_fetch_add(&j->next, 1)) < j->slices) {
        size_t at = s * SLICE, len = j->n - at < SLICE ? j->n - at : SLICE;
        int err = pwrite_range(j->fd, j->src + at, len, j->start + (off_t)at);
        if (err) {
            int none = 0;
            atomic_compare_exchange_strong(&j->err, &none, err);
            atomic_store(&j->next, j->slices);
        }
    }
}

int pwrite_parallel(int fd, const void *p, size_t n, off_t at, int threads)
{
    size_t slices = (n + SLICE - 1) / SLICE;
    if (threads <= 0)
        threads = parallel_default_threads();
    if (threads > PWRITE_THREADS_MAX)
        threads = PWRITE_THREADS_MAX;
    if ((size_t)threads > slices)
        threads = (int)slices;
    if (n < PWRITE_PARALLEL_MIN || threads < 2)
        return pwrite_range(fd, p, n, at);
    struct pwrite_job j = { .fd = fd, .src = p, .start = at, .n = n, .slices = slices };
    atomic_init(&j.next, 0);
    atomic_init(&j.err, 0);
    parallel_for(threads, (size_t)threads, 1, pwrite_slices, &j);
    return atomic_load(&j.err);
}
