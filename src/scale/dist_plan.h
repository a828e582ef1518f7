/* How the ranks of an MPI job share one product C = A @ B: a grid of
 * pr x pc ranks, rank r holding C's block (r / pc, r % pc), which needs A's
 * rows of that block (all of K) and B's columns of it; or, when those do
 * not fit the host memory a rank may use, the same parts a panel of K at
 * a time (SUMMA).  Arithmetic only, so the host tests check it
 * (tests/test_tiled.c). */
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
 * columns while another factorisation allows it; of grids that read
 * alike, the one with more rows (its blocks are runs of whole rows of A
 * and C in the files). */
struct dist_grid dist_grid_make(int ranks, int64_t m, int64_t n);

/* Part `i` of `parts` of [0, total): the first total % parts parts one
 * longer. */
void dist_split(int64_t total, int parts, int i, int64_t *start, int64_t *len);

/* Rank r's block of C. */
struct dist_block dist_block_of(const struct dist_grid *g, int64_t m, int64_t n, int r);

/* ---- K in panels ----
 * Panel q of A for a grid row (its rows, the panel's columns of K) is read
 * by one rank of that row and broadcast along it; panel q of B for a grid
 * column is read by one rank of that column and broadcast down it.  The
 * owners take turns, so that reading is shared out and every panel is
 * read from storage once. */

/* Panel widths are multiples of this, or K itself when K is smaller. */
#define DIST_PANEL_ALIGN 256

/* The host memory a rank needs: `fixed` bytes whatever K (its block of C
 * and the blocks summed beside it), and `per_k` bytes for each column of
 * K of its rows of A and columns of B. */
struct dist_need {
    uint64_t fixed, per_k;
};

/* The need of `a_rows` rows of A, `b_cols` columns of B and a block of
 * `c_elems` elements with `sums` more blocks beside it (a reference and
 * a panel's), each element of the parts held in
 * `copies` copies (as read, converted for the kernel, widened for a
 * reference): 8 bytes an element throughout, the widest dtype's, so that
 * the decision does not depend on the dtypes. */
struct dist_need dist_need_of(int64_t a_rows, int64_t b_cols, int64_t c_elems, int sums,
                              int copies);

/* 1 when the parts, all of K read at once, fit in `budget` bytes. */
int dist_fits_whole(const struct dist_need *need, int64_t k, uint64_t budget);

/* The widest panel that fits in `budget` bytes with two panels held at
 * once (one read while the other is multiplied): k itself, or a multiple
 * of DIST_PANEL_ALIGN below it; 0 when not even the narrowest fits. */
int64_t dist_panel_width(const struct dist_need *need, int64_t k, uint64_t budget);

/* K in panels of `kb`: how many, and panel q's columns [*k0, *k0 + *kn)
 * (the last one shorter when kb does not divide k). */
int64_t dist_panel_count(int64_t k, int64_t kb);
void dist_panel_range(int64_t k, int64_t kb, int64_t q, int64_t *k0, int64_t *kn);

/* The rank that reads panel q for rank r: of A (which 0), the rank in r's
 * grid row and grid column q mod pc; of B (which 1), the rank in r's grid
 * column and grid row q mod pr. */
int dist_panel_owner(const struct dist_grid *g, int which, int64_t q, int r);

#endif
