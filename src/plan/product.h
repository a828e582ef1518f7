/* A product planned once, then run.
 *
 * Everything mul decides about C = alpha*A@B + beta*C0 is decided here,
 * before the product runs, from three things: NumPy's semantics of the
 * operands (src/plan/matmul.h), what the command line asks (struct
 * product_ask) and what the device can do (struct device_facts, gathered
 * in one query: the device's name, compute capability, SMs and free
 * memory, and those of the GPUs that share tiles).  The plan names the
 * executor (the host, one GPU, tiles over GPUs, or panels of an MPI
 * rank's block), the kernel and its signature, whether and how the product
 * is cut into tiles and which kernel each tile shape runs, and the output
 * format.  An executor runs the plan and never chooses again; `kernels
 * --for` and `mul --dry-run` print it.
 *
 * Two things are left to the run, each as a rule fixed here:
 *   - An integer product is exact in FP64 only while
 *     max|A| * max|B| * k < 2^53 (product_f64_exact), which is known once
 *     the operands are read (on the device, for one GPU).  The plan holds
 *     both routes: route 0 for operands within the bound (FP64 kernels may
 *     run), route 1 for operands beyond it (int64 kernels); the executor
 *     measures and takes one with product_settle.
 *   - auto with --tune on a miss in the tune cache: the route says
 *     tune_now, and the one-GPU executor times auto's candidates on the
 *     operands and runs the fastest. */
#ifndef GC_PRODUCT_H
#define GC_PRODUCT_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "src/plan/matmul.h"
#include "src/plan/tiled.h"
#include "src/plan/whole.h"

/* What the device can do, gathered once before the plan. */
struct device_facts {
    int present;               /* a CUDA device answered; 0: planned for the model's device */
    char name[256];            /* empty without a device */
    int cc, sm_count;          /* compute capability (90 for 9.0) and SMs */
    size_t free_bytes;         /* free device memory, counting what the operands uploaded
                                  as they were read hold; 0: unknown */
    int n_devices;             /* the GPUs that take tiles, in --devices' order */
    struct device_fact {
        int ordinal, cc, sm_count;   /* cc 0: did not answer (it fails when opened) */
    } devices[TILED_MAX_DEVICES];
    /* Without --devices: every GPU of the host, which auto may share a
     * product among (the job's own first); 1 or 0: its own alone. */
    int host_gpus;
    struct device_fact host[TILED_MAX_DEVICES];
};

/* What the command line asks of the product. */
struct product_ask {
    const char *kernel;        /* a kernel's name, or "auto" */
    int verify, tune;
    double alpha, beta;
    int with_c0;               /* C0 is read and beta != 0 */
    size_t a_count, b_count;   /* elements of A and B as read */
    size_t device_memory;      /* per GPU; 0: 95% of what is free */
    int share;                 /* --devices: the tiles go to facts.devices */
    int out_format;            /* the output's format, decided when the inputs were read */
    int out_dtype;             /* the dtype written */
    int rows_out;              /* the output may take rows at their offsets (.npy or raw, no
                                  --verify): tiles are written as they land */
    int stream_tiles;          /* the operands come to the host: tiles may be taken for the
                                  whole job's sake, where its model finds them faster */
    /* An MPI rank whose parts of A and B come in panels of K (src/scale/summa.h):
     * the panels' width and number; 0: none. */
    int64_t panel_k, n_panels;
};

enum product_exec {
    PRODUCT_EMPTY,             /* nothing to multiply: zeros (and C0) on the host */
    PRODUCT_HOST,              /* --kernel cpu */
    PRODUCT_GPU,               /* one GPU, the product in its memory */
    PRODUCT_TILES,             /* tiles streamed from host memory, over one GPU or several */
    PRODUCT_PANELS,            /* an MPI rank's block, K in panels */
    PRODUCT_EXEC_COUNT
};

/* The executors' names as the plan prints them: "empty", "host", ... */
extern const char *const product_exec_names[PRODUCT_EXEC_COUNT];

struct product_pick {
    const struct gemm_kernel *kern;
    enum gemm_sig sig;
};

/* The kernel of one tile shape on one kind of GPU. */
struct product_tile_kernel {
    int cc, sm_count;
    int64_t m, n, k;
    const struct gemm_kernel *kern;
};

/* Tile shapes of a plan: two sizes a side and two step lengths at most. */
#define PRODUCT_TILE_SHAPES 8
#define PRODUCT_TILE_KERNELS (PRODUCT_TILE_SHAPES * 8)

struct product_tiles {
    struct tiled_plan tp;
    double traffic;            /* bytes copied between host and devices */
    double flops;              /* the kernel's modelled rate the plan weighed */
    int n_kernels;
    struct product_tile_kernel kernels[PRODUCT_TILE_KERNELS];
};

/* One way the product runs, for one outcome of the FP64 bound. */
struct product_route {
    int status;                /* 0, or why it cannot run: said when it is settled */
    struct gc_capture why;
    struct product_pick pick;  /* the product's (a panel's, for PRODUCT_PANELS) */
    const char *auto_source;   /* auto: NULL the model's choice, "cache" the tune cache's */
    int tune_now;              /* auto, --tune and a cache miss: the GPU's tuner picks */
    struct product_tiles tiles;          /* PRODUCT_TILES */
    /* PRODUCT_PANELS on a GPU: the block's sum kept in device memory
     * (resident) with a kernel for the full panel width and the last;
     * else each panel in tiles: the first, one between, the last. */
    int resident;
    struct product_pick panel_pick[2];
    struct product_tiles panel_tiles[3];
};

struct product_plan {
    struct matmul_plan mm;     /* NumPy's semantics */
    struct device_facts facts;
    const char *kernel;        /* as asked */
    enum product_exec exec;
    int on_host;               /* the host's kernel (PRODUCT_HOST; PANELS on the host) */
    int is_auto;
    int shared;                /* auto shares the tiles among the host's GPUs (host_gpus) */
    size_t budget;             /* device memory a GPU may use (PRODUCT_TILES, PANELS) */
    size_t need;               /* what the product needs in one GPU's memory */
    int n_routes;              /* 2: an integer product, route 0 within the FP64 bound */
    struct product_route route[2];
    int64_t panel_k, n_panels;
    int out_format, out_dtype;
    int verify;
    int has_job;               /* job: on a GPU, in core or in tiles (route 0) */
    struct whole_job job;      /* the whole job as the model sees it (src/plan/whole.h) */
};

/* Checks a named kernel against the product before any device is asked:
 * 0, or GC_EXIT_USAGE after saying why it cannot compute it on any GPU. */
int product_check_kernel(const char *kernel, const struct matmul_plan *mm);

/* 1 when the plan takes the facts of a device: a product on a GPU with
 * something to multiply (an MPI rank's block in panels: a block that is
 * not empty). */
int product_needs_device(const struct product_ask *ask, const struct matmul_plan *mm);

/* The plan.  Returns 0, or a status after saying why the product cannot
 * run as asked (no kernel for it, a scalar its arithmetic cannot hold, too
 * little device memory for the smallest tiles). */
int product_plan_make(const struct product_ask *ask, const struct matmul_plan *mm,
                      const struct device_facts *facts, struct product_plan *pp);

/* The FP64 bound: 1 when FP64 sums of products of integers no larger
 * than max_a and max_b are exact (k of them stay below 2^53). */
int product_f64_exact(const struct matmul_plan *mm, uint64_t max_a, uint64_t max_b);

/* The route for operands within the FP64 bound (`f64_exact`) or beyond:
 * 0 with *route set, or the status of a route that cannot run, saying
 * why now. */
int product_settle(const struct product_plan *pp, int f64_exact,
                   const struct product_route **route);

/* The kernel planned for a tile of m x n x k on a GPU of compute
 * capability cc and sm_count SMs: 0 with *kern set, or GC_EXIT_GPU after
 * saying that the plan has none (a GPU that did not answer the query). */
int product_tile_kernel(const struct product_tiles *t, int cc, int sm_count, int64_t m,
                        int64_t n, int64_t k, const struct gemm_kernel **kern);

/* The arithmetic as the summary names it ("FP32", "exact: int64 modulo
 * 2^64"). */
const char *product_compute_words(const struct matmul_plan *mm, enum gemm_sig sig);

/* The facts of no device: the model's (its SMs, compute capability 9.0),
 * with no memory figure. */
void product_facts_model(struct device_facts *f);

#endif
