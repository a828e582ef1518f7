/* Running a tiled product (src/tiled.h's plan) on one or more GPUs.  Each
 * GPU has a host thread, a copy stream, a compute stream and double
 * buffers; it takes the next tile of the stack's products when it is
 * ready for one, so a faster or less loaded GPU takes more tiles.  For
 * each tile the A and B blocks of a step are copied in while the step
 * before runs, and the finished tile is copied out to its place in the
 * host's C while the next tile begins (a C0 that the tile starts from is
 * copied in on a third stream).  With a reference, each step also
 * runs in FP64 (cuBLAS DGEMM) into a reference tile, for --verify. */
#ifndef GC_TILED_RUN_H
#define GC_TILED_RUN_H

#include "matmul.h"
#include "tiled.h"

#define TILED_MAX_DEVICES 64

struct tiled_device_stats {
    int ordinal;
    char name[256];
    int64_t tiles;             /* tiles this GPU computed */
    double ms;                 /* from its first copy to its last */
};

struct tiled_job {
    const struct matmul_plan *plan;   /* the whole product */
    enum gemm_sig sig;                /* the arithmetic of every tile */
    const char *kernel;               /* --kernel: a name, or "auto" for each tile shape */
    double alpha, beta;               /* C = alpha A @ B (+ beta C, with c_in) */
    int c_in;                         /* c (and ref) hold C0 on entry: each tile starts from it */
    const void *a, *b;                /* host, C order, the signature's operand type */
    void *c;                          /* host, the signature's C type, the whole result */
    double *ref;                      /* host, the FP64 reference of the result; NULL: none */
    size_t budget;                    /* device memory per GPU */
    double flops;                     /* the kernel's expected rate, FLOP/s; 0: unknown */
    int n_devices;
    int devices[TILED_MAX_DEVICES];
    int host_threads;
    /* Filled in: */
    struct tiled_plan tp;
    double traffic;                   /* bytes copied between host and devices */
    char kernels[192];                /* the kernels the tiles ran, "a, b" */
    struct tiled_device_stats stats[TILED_MAX_DEVICES];
};

/* Plans the tiles for the budget and the GPUs (reserving room for the
 * reference's buffers when there is one) and runs them; 0, or a status
 * after saying why (GC_EXIT_GPU: too little memory for the smallest
 * tiles, a CUDA failure).  With c_in, a tile's C0 is copied in from c (and
 * its reference's from ref) before its first step, and the tile's result
 * copied back over it: c may be summed into, panel after panel. */
int tiled_run(struct tiled_job *tj);

#endif
