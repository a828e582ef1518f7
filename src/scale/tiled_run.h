/* Running a tiled product (the tiles of a product's plan, src/plan/product.h)
 * on one or more GPUs.  Each
 * GPU has a host thread that copies in and computes, a second that copies
 * out, a compute stream, copy streams and double buffers; it takes the
 * next tile of the stack's products when it is ready for one, so a faster
 * or less loaded GPU takes more tiles.  For each tile the A and B blocks
 * of a step are copied in while the step before runs, and the finished
 * tile is copied out to the host's C while the next tile runs, then handed
 * to a sink (a file written at offsets) by a third thread, so that writing
 * the result overlaps the tiles too.
 *
 * Host memory page-locked in place (the caller's device_pin) is copied
 * to and from directly; any other goes through a few page-locked slots of
 * each GPU's own, the rows of a block gathered into a slot by host threads
 * while the slot before crosses the link (and scattered from one on the
 * way out).
 *
 * With a reference, each step also runs in FP64 (cuBLAS DGEMM) into a
 * reference tile, for --verify. */
#ifndef GC_TILED_RUN_H
#define GC_TILED_RUN_H

#include "src/plan/matmul.h"
#include "src/plan/product.h"
#include "src/plan/tiled.h"

struct tiled_device_stats {
    int ordinal;
    char name[256];
    int64_t tiles;             /* tiles this GPU computed */
    double ms;                 /* from its first copy to its last tile in host memory */
    double sink_ms;            /* then waiting for the sink to take its last tiles */
};

/* Where each finished tile goes once its rows are in tiled_job's c: rows
 * `rows` rows of `cols` elements of the signature's C type, the first at
 * element `first` of the whole stack's C (C order) and each next `ld`
 * elements further, in host memory at `data` alike.  Called from a thread
 * of each GPU's own, while that GPU runs its next tiles; returns 0 or a
 * status after saying why. */
struct tiled_sink {
    int (*put)(void *arg, size_t first, int64_t rows, int64_t cols, size_t ld, const void *data);
    void *arg;
};

/* Host memory that is page-locked already (device_pin) and so is copied
 * from directly, not gathered into the slots. */
#define TILED_PINNED_A 1u
#define TILED_PINNED_B 2u
#define TILED_PINNED_C 4u

struct tiled_job {
    const struct matmul_plan *plan;   /* the whole product */
    const struct product_tiles *tiles;   /* the tile plan and each tile shape's kernel */
    enum gemm_sig sig;                /* the arithmetic of every tile */
    double alpha, beta;               /* C = alpha A @ B (+ beta C, with c_in) */
    int c_in;                         /* c (and ref) hold C0 on entry: each tile starts from it */
    const void *a, *b;                /* host, C order, the signature's operand type */
    void *c;                          /* host, the signature's C type, the whole result */
    unsigned pinned;                  /* TILED_PINNED_*: page-locked, copied straight from */
    const struct tiled_sink *sink;    /* also given each finished tile; NULL: none */
    double *ref;                      /* host, the FP64 reference of the result; NULL: none */
    int n_devices;
    int devices[TILED_MAX_DEVICES];
    int host_threads;
    /* Filled in: */
    struct tiled_plan tp;             /* tiles->tp */
    double traffic;                   /* bytes copied between host and devices */
    char kernels[192];                /* the kernels the tiles ran, "a, b" */
    struct tiled_device_stats stats[TILED_MAX_DEVICES];
};

/* Runs the planned tiles; 0, or a status after saying why (GC_EXIT_GPU: a
 * CUDA failure; a sink's status).  With c_in, a tile's C0 is copied in
 * from c (and its reference's from ref) before its first step, and the
 * tile's result copied back over it: c may be summed into, panel after
 * panel. */
int tiled_run(struct tiled_job *tj);

#endif
