/* How the ranks of an MPI job share one product C = A @ B: a grid of
 * pr x pc ranks, rank r holding C's block (r / pc, r % pc), which needs A's
 * rows of that block (all of K) and B's columns of it.  Arithmetic only,
 * so the host tests check it (tests/test_tiled.c). */
#ifndef GC_DIST_PLAN_H
#define GC_DIST_PLAN_H

#include <stdint.h>

struct dist_grid {
    int pr, pc;               /* ranks down and across; pr * pc = ranks */
};

struct dist_block {
    int64_t r0, rows;         /* C's rows [r0, r0 + rows) */
    int64_t c0, cols;         /* C's columns [c0, c0 + cols) */
};

/* The grid for `ranks` ranks and an m x n x k product that reads the
 * fewest bytes of A and B per rank: rows of A (m / pr) * k and columns of
 * B k * (n / pc), with no more ranks along a side than it has rows or
 * columns while another factorisation allows it. */
struct dist_grid dist_grid_make(int ranks, int64_t m, int64_t n);

/* Part `i` of `parts` of [0, total): the first total % parts parts one
 * longer. */
void dist_split(int64_t total, int parts, int i, int64_t *start, int64_t *len);

/* Rank r's block of C. */
struct dist_block dist_block_of(const struct dist_grid *g, int64_t m, int64_t n, int r);

#endif
