/* Bytes placed at an offset of a regular file by several threads, in
 * slices of a few MiB handed out in turn: copied into the range mapped
 * shared where the file system reserves its blocks first (ext2/3/4, XFS,
 * tmpfs), else by pwrite. */
#ifndef GC_PWRITE_H
#define GC_PWRITE_H

#include <stddef.h>
#include <sys/types.h>

/* Below this many bytes one thread writes. */
#define PWRITE_PARALLEL_MIN ((size_t)16 << 20)

/* A buffered write holds the file's inode lock for its copy in ext4, XFS
 * and tmpfs: past a few writers, more only queue there.  Copies into a
 * mapping take no such lock, but past a few they too slowed by half or
 * more, unevenly, on a 32-core host (tests/write_floor.c, the two-H200
 * host's ext4 disk, 2026-11-28: 4 GiB mapped on 4 threads 7.1-8.5 GB/s,
 * on 16 or 32 threads 1.9-11.8 GB/s, through pwrite on 4 threads 3.7-4.6
 * GB/s). */
#define PWRITE_THREADS_MAX 4

/* From this many bytes the range is mapped, where it can be. */
#define PWRITE_MAP_MIN ((size_t)64 << 20)

/* n bytes at p to file offset `at` of fd, on up to `threads` threads
 * (<= 0: one per core; at most PWRITE_THREADS_MAX).  The file grows to
 * at + n if shorter.  0, or the errno of the first failure (EIO when a
 * write made no progress; EINVAL for a descriptor that appends, whose
 * writes go to the end whatever the offset). */
int pwrite_parallel(int fd, const void *p, size_t n, off_t at, int threads);

/* A range of a file mapped for stores. */
struct file_map {
    void *base;
    size_t len;
    struct file_ahead *ahead;  /* its pages being made ahead, or NULL */
};

/* Threads that make a mapping's pages ahead of its stores: past four,
 * faults into one file's mapping slowed to a quarter on the two-H200
 * host (above). */
#define FILE_AHEAD_THREADS 4

/* The n bytes at offset `at` of fd (open for reading and writing) mapped
 * shared, their blocks reserved first so that no store can fail for want
 * of space; the file grows to at + n if shorter.  NULL where the file or
 * its file system does not allow it: write it with pwrite_parallel then.
 * Stores land in the page cache as a write's bytes would; file_unmap
 * ends the mapping (a no-op on one that failed). */
void *file_map_range(int fd, size_t n, off_t at, struct file_map *m);

/* Starts `threads` threads (at most FILE_AHEAD_THREADS) that make the
 * mapping's pages writable ahead of the stores that will fill them,
 * 32 MiB at a time from its start (madvise MADV_POPULATE_WRITE: a page's
 * fault without touching its bytes, so stores may land beside them), so
 * that a store finds its page made rather than taking the fault itself.
 * Stores into a new file's pages are a page fault each, and faults that
 * many threads take at once slow them all (tests/write_floor.c); made
 * while the GPUs start and compute, they are off the path.  A kernel
 * without MADV_POPULATE_WRITE (before Linux 5.14) stops the threads at
 * their first call: the stores fault as before.  0, or an errno when no
 * thread could start (nothing is lost then either). */
int file_map_ahead(struct file_map *m, int threads);

/* Stops the threads making pages ahead (between two of their calls) and
 * ends the mapping (a no-op on one that failed). */
void file_unmap(struct file_map *m);

#endif
