#include "src/scale/dist_plan.h"

void dist_split(int64_t total, int parts, int i, int64_t *start, int64_t *len)
{
    int64_t base = total / parts, extra = total % parts;
    *start = i * base + (i < extra ? i : extra);
    *len = base + (i < extra);
}

/* The largest block a rank reads, in elements per unit of K. */
static double panel_cost(int64_t m, int64_t n, int pr, int pc)
{
    return (double)((m + pr - 1) / pr) + (double)((n + pc - 1) / pc);
}

struct dist_grid dist_grid_make(int ranks, int64_t m, int64_t n)
{
    struct dist_grid best = { ranks, 1 };
    double best_cost = -1;
    int best_idle = 0;
    /* From the most grid rows down: of grids that read alike, the one of
     * wider row bands wins (2 ranks on a square: 2x1), whose rows of A and
     * of C are fewer, longer runs of the files. */
    for (int pr = ranks; pr >= 1; pr--) {
        if (ranks % pr)
            continue;
        int pc = ranks / pr;
        /* Ranks beyond a side's length would hold empty blocks. */
        int idle = (pr > m) + (pc > n);
        double cost = panel_cost(m, n, pr, pc);
        if (best_cost < 0 || idle < best_idle || (idle == best_idle && cost < best_cost)) {
            best = (struct dist_grid){ pr, pc };
            best_cost = cost;
            best_idle = idle;
        }
    }
    return best;
}

struct dist_block dist_block_of(const struct dist_grid *g, int64_t m, int64_t n, int r)
{
    struct dist_block b;
    dist_split(m, g->pr, r / g->pc, &b.r0, &b.rows);
    dist_split(n, g->pc, r % g->pc, &b.c0, &b.cols);
    return b;
}

/* a * b, or UINT64_MAX where it would not fit: a need that large fits no
 * budget. */
static uint64_t product_or_max(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

struct dist_need dist_need_of(int64_t a_rows, int64_t b_cols, int64_t c_elems, int sums,
                              int copies)
{
    struct dist_need need;
    need.fixed = product_or_max((uint64_t)c_elems, 8 * (uint64_t)(1 + sums));
    need.per_k = product_or_max((uint64_t)(a_rows + b_cols), 8 * (uint64_t)copies);
    return need;
}

int dist_fits_whole(const struct dist_need *need, int64_t k, uint64_t budget)
{
    return need->fixed <= budget &&
           product_or_max(need->per_k, (uint64_t)k) <= budget - need->fixed;
}

int64_t dist_panel_width(const struct dist_need *need, int64_t k, uint64_t budget)
{
    if (need->fixed > budget)
        return 0;
    uint64_t pair = product_or_max(need->per_k, 2);
    uint64_t widest = pair ? (budget - need->fixed) / pair : UINT64_MAX;
    if (widest >= (uint64_t)k)
        return k;
    return (int64_t)(widest / DIST_PANEL_ALIGN * DIST_PANEL_ALIGN);
}

int64_t dist_panel_count(int64_t k, int64_t kb)
{
    return kb > 0 ? (k + kb - 1) / kb : 0;
}

void dist_panel_range(int64_t k, int64_t kb, int64_t q, int64_t *k0, int64_t *kn)
{
    *k0 = q * kb;
    *kn = k - *k0 < kb ? k - *k0 : kb;
}

int dist_panel_owner(const struct dist_grid *g, int which, int64_t q, int r)
{
    if (which == 0)
        return r / g->pc * g->pc + (int)(q % g->pc);
    return (int)(q % g->pr) * g->pc + r % g->pc;
}
