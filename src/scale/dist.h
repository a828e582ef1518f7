/* mul as one job of several processes started by an MPI launcher
 * (`mpirun -np N gemmcli mul A B -o C`).
 *
 * The ranks form a grid (src/scale/dist_plan.h); each computes one block of C
 * with the usual pipeline (its own GPU, or --kernel cpu) from A's rows and
 * B's columns of that block.  A regular .npy or raw input is read by every
 * rank, each reading only its part, by offset; any other input (CSV,
 * gzip, a pipe) is read whole by rank 0 and each rank's part sent to it.
 * A .npy or raw output that is a file is written by every rank at its
 * block's offsets into one temporary file, whose header rank 0 writes;
 * other outputs (text, stdout) are gathered on rank 0 and written there.
 * Every phase ends in an agreement among the ranks, and the temporary file
 * is renamed into place once, by rank 0, after every rank has succeeded:
 * a failure on any rank leaves no output and no temporary file.
 *
 * cmd_mul calls these in order; dist_end always, with the status so far. */
#ifndef GC_DIST_H
#define GC_DIST_H

#include "src/scale/cluster.h"
#include "src/scale/dist_plan.h"
#include "src/job/job.h"
#include "src/plan/matmul.h"

struct dist {
    struct gc_cluster cl;
    struct dist_grid grid;
    struct dist_block blk;         /* this rank's block of C */
    struct gc_tensor whole[2];     /* A and B: the whole shapes, no data */
    struct matmul_plan plan;       /* the whole product */
    int read_as;                   /* the format A was read as */
    int joined;                    /* MPI is initialised */
    int settled;                   /* the outcome is agreed: no collective is left */
    int failed_rank;               /* the first rank that failed, once settled; -1: none */
    int64_t *all;                  /* room for what every rank tells every other */
    /* K in panels (src/scale/summa.h), when some rank's parts do not fit the
     * host memory it may use: */
    int panels;
    int64_t kb, n_panels;          /* the panels' width and number */
    int by_offset[2];              /* A's, B's panels read by offset (else sent by rank 0) */
    void *row, *col;               /* this rank's grid row and grid column, as groups */
    struct dist_operand *sources;  /* A and B as found, for reading their panels */
};

/* 1 when this process is one of several that an MPI launcher started. */
int dist_wanted(void);

/* Refuses what is not split among ranks (operands from stdin, C0, --tune,
 * --devices, stacks are refused later, by shape), joins the job and
 * gives this rank its GPU (the local rank's, modulo the GPUs there,
 * unless --device names one) in `local`, a copy of `o` to use from now
 * on.  Only rank 0 reports what every rank finds alike. */
int dist_begin(struct dist *d, const struct gc_opts *o, int on_host, struct gc_opts *local);

/* Reads this rank's parts of A and B into in[0] and in[1] (as stored: a
 * Fortran-order file gives a Fortran-order part); *read_as is the format
 * A was read as.  When some rank's parts and block do not fit the host
 * memory it may use (--host-memory, else its share of its host's), every
 * rank sets d->panels alike and in[0] and in[1] get the parts' shapes
 * alone: dist_panel reads them a panel at a time. */
int dist_read(struct dist *d, const struct gc_opts *o, const char *const *paths,
              struct gc_tensor *in, int *read_as);

/* With d->panels: the bytes, as read, of this rank's part of the widest
 * panel of A (which 0) or B (1). */
size_t dist_panel_room(const struct dist *d, int which);

/* With d->panels: this rank's parts of panel q, of A into `a` and of B
 * into `b` (as read: dtype and order), in the room given (at least
 * dist_panel_room's bytes).  A part read by offset is read by the panel's
 * owner in this rank's grid row (A) or column (B) and broadcast there; a
 * part of an operand rank 0 parsed whole is sent by rank 0.  Collective
 * over all ranks.  A status goes before every part, so that an owner that
 * fails stops the others instead of leaving them waiting: returns this
 * rank's own failure (said), or rank 0's where it could not send a part;
 * else 0, also when a broadcast part did not come because its owner
 * failed, which the next dist_agree tells every rank. */
int dist_panel(struct dist *d, const struct gc_opts *o, int64_t q, void *room_a, void *room_b,
               struct gc_tensor *a, struct gc_tensor *b);

/* Every rank's status `rc` exchanged: the first failing rank's (which
 * settles the job), or 0 when all succeeded. */
int dist_agree(struct dist *d, int rc);

/* In place of result_finish: the verifications of every block agreed into
 * one, the blocks written to the one output, one summary (rank 0's, with
 * the whole product's figures), the output committed only when every
 * rank succeeded.  `result` is this rank's block (the result's dtype,
 * shape rows x cols, or a vector's). */
int dist_finish(struct dist *d, struct job *j, struct gc_tensor *result, enum gc_dtype dtype);

/* The last step of every rank: a rank that failed before dist_finish
 * tells the others; leaves the job.  Returns the status this process
 * exits with: its own failure, else the first failing rank's. */
int dist_end(struct dist *d, int rc);

#endif
