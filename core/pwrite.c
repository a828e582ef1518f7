#include "core/pwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/parallel.h"

#define SLICE ((size_t)4 << 20)
#define AHEAD_STEP ((size_t)32 << 20)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14 */
#endif

/* The file systems whose fallocate reserves the blocks a shared mapping's
 * stores will need, so that a store cannot fail for want of space (which
 * a mapping reports by SIGBUS): ext2/3/4, XFS and tmpfs. */
#define FS_EXT 0xEF53
#define FS_XFS 0x58465342
#define FS_TMPFS 0x01021994

struct pwrite_job {
    int fd;
    unsigned char *dst;       /* the mapped range, or NULL: pwrite */
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
        if (j->dst) {
            memcpy(j->dst + at, j->src + at, len);
            continue;
        }
        int err = pwrite_range(j->fd, j->src + at, len, j->start + (off_t)at);
        if (err) {
            int none = 0;
            atomic_compare_exchange_strong(&j->err, &none, err);
            atomic_store(&j->next, j->slices);
        }
    }
}

void *file_map_range(int fd, size_t n, off_t at, struct file_map *m)
{
    struct stat st;
    struct statfs fs;
    m->base = NULL;
    m->len = 0;
    m->ahead = NULL;
    int flags = fcntl(fd, F_GETFL);
    if (!n || flags == -1 || (flags & O_APPEND) || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        fstatfs(fd, &fs) != 0)
        return NULL;
    if (fs.f_type != FS_EXT && fs.f_type != FS_XFS && fs.f_type != FS_TMPFS)
        return NULL;
    /* fallocate, not posix_fallocate: the latter writes zeros where the
     * call is missing, which is the cost this path is to save. */
    if (fallocate(fd, 0, at, (off_t)n) != 0)
        return NULL;
    off_t page = sysconf(_SC_PAGESIZE), lead = at % page;
    void *base = mmap(NULL, n + (size_t)lead, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at - lead);
    if (base == MAP_FAILED)
        return NULL;
    m->base = base;
    m->len = n + (size_t)lead;
    return (unsigned char *)base + lead;
}

struct file_ahead {
    unsigned char *base;
    size_t len;
    atomic_size_t next;       /* the next step's offset */
    pthread_t threads[FILE_AHEAD_THREADS];
    int started;
};

static void *ahead_run(void *arg)
{
    struct file_ahead *a = arg;
    size_t at;
    while ((at = atomic_fetch_add(&a->next, AHEAD_STEP)) < a->len) {
        size_t len = a->len - at < AHEAD_STEP ? a->len - at : AHEAD_STEP;
        if (madvise(a->base + at, len, MADV_POPULATE_WRITE) != 0) {
            atomic_store(&a->next, a->len);   /* unsupported, or out of memory: stop */
            break;
        }
    }
    return NULL;
}

int file_map_ahead(struct file_map *m, int threads)
{
    if (!m->base || m->ahead)
        return 0;
    struct file_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return ENOMEM;
    a->base = m->base;
    a->len = m->len;
    atomic_init(&a->next, 0);
    if (threads > FILE_AHEAD_THREADS)
        threads = FILE_AHEAD_THREADS;
    int err = 0;
    for (int i = 0; i < threads && !err; i++)
        if (!(err = pthread_create(&a->threads[i], NULL, ahead_run, a)))
            a->started++;
    if (!a->started) {
        free(a);
        return err ? err : EINVAL;
    }
    m->ahead = a;
    return 0;
}

void file_unmap(struct file_map *m)
{
    if (m->ahead) {
        atomic_store(&m->ahead->next, m->ahead->len);
        for (int i = 0; i < m->ahead->started; i++)
            pthread_join(m->ahead->threads[i], NULL);
        free(m->ahead);
        m->ahead = NULL;
    }
    if (m->base)
        munmap(m->base, m->len);
    m->base = NULL;
    m->len = 0;
}

int pwrite_parallel(int fd, const void *p, size_t n, off_t at, int threads)
{
    /* A descriptor that appends puts every pwrite at the end, whatever
     * the offset: slices written side by side would land out of order. */
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1)
        return errno;
    if (flags & O_APPEND)
        return EINVAL;
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
    struct file_map map = { NULL, 0, NULL };
    if (n >= PWRITE_MAP_MIN)
        j.dst = file_map_range(fd, n, at, &map);
    atomic_init(&j.next, 0);
    atomic_init(&j.err, 0);
    parallel_for(threads, (size_t)threads, 1, pwrite_slices, &j);
    file_unmap(&map);
    return atomic_load(&j.err);
}
