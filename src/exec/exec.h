/* The executors of a planned product (src/plan/product.h): the host, one
 * GPU, tiles over GPUs, and an MPI rank's block in panels (its operands
 * read and its block written by src/scale/dist.h).  Each runs the plan it
 * is given, settling only what the plan leaves to the data (the FP64
 * bound of an integer product, --tune's timing), checks the result
 * through verify_product and hands it to the result writer
 * (src/job/result.h).
 *
 * The executors sit above src/scale (tiles, ranks) and src/bench (the
 * tuner that mul --tune runs on the product's own operands), and below
 * the commands. */
#ifndef GC_EXEC_H
#define GC_EXEC_H

#include "src/job/job.h"
#include "src/job/upload.h"
#include "src/plan/product.h"

struct dist;

/* One product's run: the plan and the operands as read. */
struct mul_run {
    const struct gc_opts *o;
    struct job *job;
    const struct product_plan *plan;
    struct gc_tensor *a, *b;      /* as read (more than two axes: C order); an executor
                                     frees what it no longer needs */
    const struct gc_tensor *c0;   /* the result's dtype and shape; data NULL: none */
    struct upload *up;            /* up[0], up[1]: A and B uploaded as they were read */
    struct dist *dist;            /* PRODUCT_PANELS: the MPI job */
    struct gc_tensor result;      /* the result in host memory, unless it is written */
};

/* Runs r->plan with the executor of its kind: 0 or a status after saying
 * why. */
int exec_run(struct mul_run *r);

/* The executors, one per kind of plan (exec_run's table): each 0 or a
 * status after saying why. */
int exec_empty(struct mul_run *r);
int exec_host(struct mul_run *r);
int exec_gpu(struct mul_run *r);
int exec_tiles(struct mul_run *r);
int exec_panels(struct mul_run *r);

/* Prints a plan (mul --dry-run) for operands a and b (shapes and dtypes
 * only): as text, or with o->json as one JSON object on stdout. */
int exec_print_plan(const struct gc_opts *o, const struct product_plan *pp,
                    const struct gc_tensor *a, const struct gc_tensor *b);

#endif
