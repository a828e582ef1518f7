/* An operand read straight into device memory.  The reader's threads
 * (formats/input.c) fill page-locked slots with slices of the payload,
 * and each full slot is copied to its place on the device at once, so the
 * upload runs under the read and no host copy of the operand is made.
 * Offered to the reader as its sink (formats/format.h) for a large
 * operand that the device will use as it is stored; anything else is read
 * into host memory and uploaded afterwards, as before. */
#ifndef GC_UPLOAD_H
#define GC_UPLOAD_H

#include <pthread.h>

#include "src/job/job.h"

/* Smaller payloads are read into host memory: the slots' set-up would
 * cost more than the overlap saves.  On the H200 (2026-11-23, bench_e2e),
 * two 256 MiB inputs copied while read made an 8192^2 mul 0.44 s against
 * 0.51 s read first and copied after; at 64 MiB the two were even. */
#define UPLOAD_MIN ((size_t)32 << 20)
#define UPLOAD_SLOTS 16
#define UPLOAD_SLOT_BYTES ((size_t)4 << 20)

enum upload_accepts {
    UPLOAD_ANY = 0,
    UPLOAD_FLOATS = 1,        /* float dtypes only (integers are checked on the host) */
    UPLOAD_FORTRAN_2D = 2,    /* a Fortran-order matrix too (the device reorders it) */
};

struct upload_slot {
    void *host;               /* UPLOAD_SLOT_BYTES, page-locked */
    cudaEvent_t copied;
    int state;                /* free, being filled, being copied */
    unsigned long seq;        /* when its copy was issued */
};

struct upload {
    struct job *job;
    int accepts;              /* enum upload_accepts */
    struct gc_sink sink;
    void *d;                  /* the payload on the device; NULL: not taken */
    cudaStream_t stream;
    pthread_mutex_t lock;
    pthread_cond_t freed;
    struct upload_slot slots[UPLOAD_SLOTS];
    int n_slots;
    unsigned long issued;
    int status;               /* the first failure, already reported */
    double wait_ms;           /* waiting for the last copies after the read */
};

/* Sets up `u` for one operand of job `j`; u->sink goes into that operand's
 * read options. */
void upload_init(struct upload *u, struct job *j, int accepts);

/* The operand's device copy, now the caller's to cudaFree; NULL when it
 * was read into host memory instead.  Adds the wait for its last copies
 * to the job's host->device time. */
void *upload_take(struct upload *u);

/* Frees what was not taken. */
void upload_release(struct upload *u);

#endif
