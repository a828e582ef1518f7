/* A product too large for device memory, or shared among GPUs, computed in
 * tiles: C is cut into tm x tn tiles, and each tile is the sum over K, in
 * steps of tk, of an A block (tm x tk) times a B block (tk x tn), both
 * streamed from host memory.  Where a GPU holds the whole of B beside the
 * A blocks, the tiles may be bands of whole rows of C whose GPU copies B
 * step by step with its first band and keeps it for the others: A crosses
 * once, B once a GPU, and each tile of C is a run of whole rows of the
 * result, written as it lands.  This is the plan's arithmetic only: the
 * tile and step sizes for a memory budget and a number of GPUs, and where
 * each tile and step lies (src/scale/tiled_run.c runs it).  Nothing here touches
 * a device, so the host tests check it. */
#ifndef GC_TILED_H
#define GC_TILED_H

#include <stddef.h>
#include <stdint.h>

/* The most GPUs that share one product's tiles. */
#define TILED_MAX_DEVICES 64

/* Tile sides are multiples of this (or the whole side), so that the tiled
 * kernels' own tiles divide them. */
#define TILED_ALIGN 256

/* What a plan is weighed by: each GPU's time, from a model of the tiles'
 * arithmetic and copies.  A GPU copies a tile's bands of A and B in while
 * it computes the tile before (the one it begins with is waited for, as
 * far as its first step), and copies each tile out while it computes the
 * next (the last is waited for); each step also reads and writes its C
 * tile in device memory once. */
struct tiled_costs {
    size_t in_es, out_es;      /* device bytes an element of A and B, and of C */
    size_t copy_in_es, copy_out_es;   /* bytes an element copied in and out */
    double flops;              /* the kernel's rate, FLOP/s (0: copies alone count) */
    double h2d, d2h;           /* a GPU's page-locked copy rates, bytes/s */
    double dram;               /* device memory, bytes/s */
    double step_s;             /* a step's fixed cost: its copies' and launches' set-up */
    int devices;               /* GPUs that share the tiles, 1 or more */
    int64_t batch;             /* products in the stack, each tiled alike */
    int c_in;                  /* each tile starts from C's values (C0, or a sum to add to) */
};

/* The rates of the lent NVIDIA H200 (PCIe Gen5 x16, HBM3e), measured
 * there (README: Beyond one GPU's memory). */
#define TILED_H2D_BYTES_S 50e9
#define TILED_D2H_BYTES_S 50e9
#define TILED_DRAM_BYTES_S 4.0e12
#define TILED_STEP_S 20e-6

/* Plans within this share of the fastest modelled time count as equal, and
 * of those the one that copies the fewest bytes wins: the model's rates are
 * only roughly right, and bytes not copied cost nothing. */
#define TILED_TIME_SLACK 0.03

struct tiled_plan {
    int64_t m, n, k;           /* one product */
    int64_t tm, tn, tk;        /* tile and step sizes */
    int64_t tiles_m, tiles_n;  /* tiles down and across */
    int64_t steps;             /* steps along K */
    int keep_b;                /* rows of C whole (tn = n), B copied once a GPU and
                                  product, kept across the tiles */
    size_t bytes;              /* device memory the buffers take */
    double seconds;            /* the model's time for the whole stack */
};

/* Device memory for double buffers: two A blocks and two B blocks of
 * `in_es` bytes an element, two C tiles of `out_es` (the C being summed and
 * the one being copied out). */
size_t tiled_bytes(int64_t tm, int64_t tn, int64_t tk, size_t in_es, size_t out_es);

/* With B kept: two A blocks (tm x tk), B once (k x n), two C tiles (tm x n). */
size_t tiled_kept_bytes(int64_t tm, int64_t n, int64_t k, int64_t tk, size_t in_es,
                        size_t out_es);

/* The device memory a plan's buffers take. */
size_t tiled_plan_bytes(const struct tiled_plan *tp, size_t in_es, size_t out_es);

/* The plan for an m x n x k product whose buffers fit `budget` bytes on
 * each GPU: of the tile and step sizes that fit, those the model finds
 * fastest (within TILED_TIME_SLACK), and of those the one that copies the
 * fewest bytes, then the one of fewest steps.  Returns 0, or GC_EXIT_GPU
 * after saying so when even TILED_ALIGN-sided tiles do not fit. */
int tiled_plan_make(int64_t m, int64_t n, int64_t k, const struct tiled_costs *c, size_t budget,
                    struct tiled_plan *tp);

/* The model's time for a plan: the busiest GPU's. */
double tiled_seconds(const struct tiled_plan *tp, const struct tiled_costs *c);

struct tiled_rect {
    int64_t r0, rows;          /* C's rows [r0, r0 + rows) */
    int64_t c0, cols;          /* C's columns [c0, c0 + cols) */
};

/* Tile number t < tiles_m * tiles_n, row by row. */
struct tiled_rect tiled_tile(const struct tiled_plan *tp, int64_t t);

/* Step s < steps: K's [*k0, *k0 + *kk). */
void tiled_step(const struct tiled_plan *tp, int64_t s, int64_t *k0, int64_t *kk);

/* Bytes copied between host and device for the whole stack: every tile's
 * bands of A and B in (with B kept, its band of A, and B once a GPU and
 * product), C out (and in, with c_in). */
double tiled_traffic(const struct tiled_plan *tp, const struct tiled_costs *c);

#endif
