#include "dist_plan.h"

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
    for (int pr = 1; pr <= ranks; pr++) {
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
