/* The host's own floors for writing a large result: N GiB from memory to a
 * new file in DIR, through the page cache, by
 *   pwrite   T threads, each a 4 MiB slice at a time (the buffered write
 *            holds the file's inode lock for its copy);
 *   mapped   the range reserved (fallocate), mapped shared and copied into
 *            by T threads (page faults take no inode lock);
 *   populate the same, each slice's pages made first in one call
 *            (madvise MADV_POPULATE_WRITE) rather than a fault a page;
 *   disk     pwrite on 4 threads, then fsync: the bytes on the disk.
 * Each line: the way, the threads, the seconds and GB/s; the file is
 * removed after each.  A benchmark, not a test (make bench-scale).
 *
 * usage: write_floor DIR [GiB] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SLICE ((size_t)4 << 20)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

struct job {
    int fd;
    unsigned char *dst;         /* the mapping, or NULL for pwrite */
    int populate;
    const unsigned char *src;
    size_t n;
    atomic_size_t next;
    atomic_int err;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    size_t s;
    while ((s = atomic_fetch_add(&j->next, 1)) * SLICE < j->n) {
        size_t at = s * SLICE, len = j->n - at < SLICE ? j->n - at : SLICE;
        if (j->dst) {
#ifdef MADV_POPULATE_WRITE
            if (j->populate)
                madvise(j->dst + at, len, MADV_POPULATE_WRITE);
#endif
            memcpy(j->dst + at, j->src + at, len);
            continue;
        }
        while (len) {
            ssize_t w = pwrite(j->fd, j->src + at, len, (off_t)at);
            if (w <= 0) {
                atomic_store(&j->err, w < 0 ? errno : EIO);
                return NULL;
            }
            at += (size_t)w;
            len -= (size_t)w;
        }
    }
    return NULL;
}

static int run(struct job *j, int threads)
{
    pthread_t t[64];
    int made = 0;
    atomic_init(&j->next, 0);
    atomic_init(&j->err, 0);
    for (; made < threads - 1 && made < 64; made++)
        if (pthread_create(&t[made], NULL, worker, j))
            break;
    worker(j);
    for (int i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    return atomic_load(&j->err);
}

/* One write of n bytes of src to a new file at path; seconds, < 0 on error. */
static double one(const char *path, const char *way, int threads, const unsigned char *src,
                  size_t n)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    sync();   /* no earlier run's pages still going to the disk */
    double t0 = now();
    struct job j = { .fd = fd, .src = src, .n = n };
    int err = 0;
    j.populate = strcmp(way, "populate") == 0;
    if (strcmp(way, "mapped") == 0 || j.populate) {
        if ((err = posix_fallocate(fd, 0, (off_t)n)) == 0) {
            void *m = mmap(NULL, n, PROT_WRITE, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED)
                err = errno;
            else {
                j.dst = m;
                err = run(&j, threads);
                munmap(m, n);
            }
        }
    } else {
        err = run(&j, threads);
        if (!err && strcmp(way, "disk") == 0 && fsync(fd) != 0)
            err = errno;
    }
    double t = now() - t0;
    close(fd);
    unlink(path);
    if (err) {
        fprintf(stderr, "%s %s: %s\n", path, way, strerror(err));
        return -1;
    }
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: write_floor DIR [GiB]\n");
        return 2;
    }
    size_t n = (size_t)((argc > 2 ? atof(argv[2]) : 4.0) * (double)((size_t)1 << 30));
    char path[4096];
    snprintf(path, sizeof path, "%s/write_floor.%d", argv[1], (int)getpid());
    unsigned char *src = malloc(n);
    if (!src) {
        fprintf(stderr, "write_floor: no memory for %zu bytes\n", n);
        return 1;
    }
    for (size_t i = 0; i < n; i += 8)
        *(unsigned long long *)(src + i) = i * 0x9E3779B97F4A7C15ull;
    static const struct { const char *way; int threads; } runs[] = {
        { "pwrite", 1 }, { "pwrite", 4 }, { "pwrite", 16 },
        { "mapped", 1 }, { "mapped", 4 }, { "mapped", 8 }, { "mapped", 16 }, { "mapped", 32 },
        { "populate", 4 }, { "populate", 8 }, { "populate", 16 }, { "populate", 32 },
        { "pwrite", 4 }, { "mapped", 16 }, { "populate", 16 }, { "disk", 4 },
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        double t = one(path, runs[r].way, runs[r].threads, src, n);
        if (t > 0)
            printf("%-8s %2d threads: %.3f s, %.2f GB/s\n", runs[r].way, runs[r].threads, t,
                   n / t / 1e9);
        fflush(stdout);
    }
    free(src);
    return 0;
}
