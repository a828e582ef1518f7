#include "tiled.h"

size_t tiled_bytes(int64_t tm, int64_t tn, int64_t tk, size_t in_es, size_t out_es)
{
    return 2 * ((size_t)tm * (size_t)tk + (size_t)tk * (size_t)tn) * in_es +
           2 * (size_t)tm * (size_t)tn * out_es;
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

double tiled_traffic(const struct tiled_plan *tp, size_t in_es, size_t out_es)
{
    /* Every tile reads its band of A and of B whole; C goes out once. */
    double tiles = (double)tp->tiles_m * (double)tp->tiles_n;
    double per_tile = ((double)tp->tm + (double)tp->tn) * (double)tp->k * (double)in_es;
    return tiles * per_tile + (double)tp->m * (double)tp->n * (double)out_es;
}

/* The side of square tiles (whole sides where smaller) that fits with
 * steps of tk: the largest multiple of TILED_ALIGN, found by halving. */
static int64_t largest_side(int64_t m, int64_t n, int64_t tk, size_t in_es, size_t out_es,
                            size_t budget)
{
    int64_t lo = 0, hi = cdiv(m > n ? m : n, TILED_ALIGN);
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2, side = mid * TILED_ALIGN;
        if (tiled_bytes(min64(m, side), min64(n, side), tk, in_es, out_es) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo * TILED_ALIGN;
}

static void fill(struct tiled_plan *tp, int64_t m, int64_t n, int64_t k, int64_t side,
                 int64_t tk, size_t in_es, size_t out_es)
{
    tp->m = m;
    tp->n = n;
    tp->k = k;
    tp->tm = min64(m, side);
    tp->tn = min64(n, side);
    tp->tk = tk;
    /* As many tiles as the side needs, then as equal as they go (never
     * larger than the side, so still within the budget). */
    int64_t tiles_m = cdiv(m, tp->tm), tiles_n = cdiv(n, tp->tn);
    if (tiles_m > 1)
        tp->tm = min64(tp->tm, cdiv(cdiv(m, tiles_m), TILED_ALIGN) * TILED_ALIGN);
    if (tiles_n > 1)
        tp->tn = min64(tp->tn, cdiv(cdiv(n, tiles_n), TILED_ALIGN) * TILED_ALIGN);
    tp->tiles_m = cdiv(m, tp->tm);
    tp->tiles_n = cdiv(n, tp->tn);
    tp->steps = cdiv(k, tk);
    tp->tk = cdiv(k, tp->steps);
    tp->bytes = tiled_bytes(tp->tm, tp->tn, tp->tk, in_es, out_es);
}

int tiled_plan_make(int64_t m, int64_t n, int64_t k, size_t in_es, size_t out_es, size_t budget,
                    struct tiled_plan *tp)
{
    static const int64_t steps[] = { 16384, 8192, 4096, 2048, 1024, 512, 256 };
    int found = 0;
    double best = 0;
    m = m > 0 ? m : 1;
    n = n > 0 ? n : 1;
    k = k > 0 ? k : 1;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        int64_t tk = min64(k, steps[i]);
        if (i > 0 && tk == min64(k, steps[i - 1]))
            continue;
        int64_t side = largest_side(m, n, tk, in_es, out_es, budget);
        if (side == 0)
            continue;
        struct tiled_plan p;
        fill(&p, m, n, k, side, tk, in_es, out_es);
        if (p.bytes > budget)
            continue;
        double t = tiled_traffic(&p, in_es, out_es);
        if (!found || t < best) {
            *tp = p;
            best = t;
            found = 1;
        }
    }
    return found ? 0 : -1;
}

struct tiled_rect tiled_tile(const struct tiled_plan *tp, int64_t t)
{
    struct tiled_rect r;
    int64_t i = t / tp->tiles_n, j = t % tp->tiles_n;
    r.r0 = i * tp->tm;
    r.rows = min64(tp->tm, tp->m - r.r0);
    r.c0 = j * tp->tn;
    r.cols = min64(tp->tn, tp->n - r.c0);
    return r;
}

void tiled_step(const struct tiled_plan *tp, int64_t s, int64_t *k0, int64_t *kk)
{
    *k0 = s * tp->tk;
    *kk = min64(tp->tk, tp->k - *k0);
}
