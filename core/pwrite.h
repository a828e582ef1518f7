/* Bytes placed at an offset of a regular file by several threads: pwrite
 * of slices of a few MiB, handed out in turn. */
#ifndef GC_PWRITE_H
#define GC_PWRITE_H

#include <stddef.h>
#include <sys/types.h>

/* Below this many bytes one thread writes. */
#define PWRITE_PARALLEL_MIN ((size_t)16 << 20)

/* A buffered write holds the file's inode lock for its copy in ext4, XFS
 * and tmpfs: past a few writers, more only queue there. */
#define PWRITE_THREADS_MAX 4

/* n bytes at p to file offset `at` of fd, on up to `threads` threads
 * (<= 0: one per core, at most PWRITE_THREADS_MAX).  0, or the errno of
 * the first failure (EIO when a write made no progress). */
int pwrite_parallel(int fd, const void *p, size_t n, off_t at, int threads);

#endif
