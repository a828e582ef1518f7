/* A product too large for device memory, computed in tiles: C is cut into
 * tm x tn tiles, and each tile is the sum over K, in steps of tk, of an A
 * block (tm x tk) times a B block (tk x tn), both streamed from host
 * memory.  This is the plan's arithmetic only: the tile and step sizes for
 * a memory budget, and where each tile and step lies (src/tiled_run.c runs
 * it).  Nothing here touches a device, so the host tests check it. */
#ifndef GC_TILED_H
#define GC_TILED_H

#include <stddef.h>
#include <stdint.h>

/* Tile sides are multiples of this (or the whole side), so that the tiled
 * kernels' own tiles divide them. */
#define TILED_ALIGN 256

struct tiled_plan {
    int64_t m, n, k;           /* one product */
    int64_t tm, tn, tk;        /* tile and step sizes */
    int64_t tiles_m, tiles_n;  /* tiles down and across */
    int64_t steps;             /* steps along K */
    size_t bytes;              /* device memory the buffers take */
};

/* Device memory for double buffers: two A blocks and two B blocks of
 * `in_es` bytes an element, two C tiles of `out_es` (the C being summed and
 * the one being copied out). */
size_t tiled_bytes(int64_t tm, int64_t tn, int64_t tk, size_t in_es, size_t out_es);

/* The plan for an m x n x k product whose buffers fit `budget` bytes: the
 * tile sizes that move the fewest bytes from host to device (each tile
 * reads its rows of A and its columns of B once), larger steps first when
 * equal.  Returns 0, or -1 when even TILED_ALIGN-sided tiles do not fit. */
int tiled_plan_make(int64_t m, int64_t n, int64_t k, size_t in_es, size_t out_es, size_t budget,
                    struct tiled_plan *tp);

struct tiled_rect {
    int64_t r0, rows;          /* C's rows [r0, r0 + rows) */
    int64_t c0, cols;          /* C's columns [c0, c0 + cols) */
};

/* Tile number t < tiles_m * tiles_n, row by row. */
struct tiled_rect tiled_tile(const struct tiled_plan *tp, int64_t t);

/* Step s < steps: K's [*k0, *k0 + *kk). */
void tiled_step(const struct tiled_plan *tp, int64_t s, int64_t *k0, int64_t *kk);

/* Bytes copied from host to device for the whole product. */
double tiled_traffic(const struct tiled_plan *tp, size_t in_es, size_t out_es);

#endif
