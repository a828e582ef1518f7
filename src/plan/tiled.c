#include "src/plan/tiled.h"

#include <math.h>

#include "core/error.h"

size_t tiled_bytes(int64_t tm, int64_t tn, int64_t tk, size_t in_es, size_t out_es)
{
    return 2 * ((size_t)tm * (size_t)tk + (size_t)tk * (size_t)tn) * in_es +
           2 * (size_t)tm * (size_t)tn * out_es;
}

size_t tiled_kept_bytes(int64_t tm, int64_t n, int64_t k, int64_t tk, size_t in_es,
                        size_t out_es)
{
    return (2 * (size_t)tm * (size_t)tk + (size_t)k * (size_t)n) * in_es +
           2 * (size_t)tm * (size_t)n * out_es;
}

size_t tiled_plan_bytes(const struct tiled_plan *tp, size_t in_es, size_t out_es)
{
    return tp->keep_b ? tiled_kept_bytes(tp->tm, tp->n, tp->k, tp->tk, in_es, out_es)
                      : tiled_bytes(tp->tm, tp->tn, tp->tk, in_es, out_es);
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The side of `parts` equal tiles along a side of `len`: the whole side,
 * or a multiple of TILED_ALIGN. */
static int64_t side_of(int64_t len, int64_t parts)
{
    return parts <= 1 ? len : min64(len, cdiv(cdiv(len, parts), TILED_ALIGN) * TILED_ALIGN);
}

/* The GPUs that copy B for each product when it is kept: as many as take
 * its tiles. */
static double kept_copies(const struct tiled_plan *tp, const struct tiled_costs *c)
{
    double gpus = c->devices > 0 ? c->devices : 1;
    return (double)c->batch * fmin(gpus, (double)tp->tiles_m);
}

double tiled_traffic(const struct tiled_plan *tp, const struct tiled_costs *c)
{
    /* Every tile reads its bands of A and B whole (or its band of A, B
     * crossing once a GPU); C goes out once (and comes in once, when
     * summed into). */
    double tiles = (double)tp->tiles_m * (double)tp->tiles_n * (double)c->batch;
    double mn = (double)tp->m * (double)tp->n * (double)c->batch * (double)c->copy_out_es;
    double kn = (double)tp->k * (double)tp->n * (double)c->copy_in_es;
    if (tp->keep_b)
        return tiles * (double)tp->tm * (double)tp->k * (double)c->copy_in_es +
               kept_copies(tp, c) * kn + mn * (c->c_in ? 2 : 1);
    double per_tile = ((double)tp->tm + (double)tp->tn) * (double)tp->k * (double)c->copy_in_es;
    return tiles * per_tile + mn * (c->c_in ? 2 : 1);
}

double tiled_seconds(const struct tiled_plan *tp, const struct tiled_costs *c)
{
    double tm = (double)tp->tm, tn = (double)tp->tn, k = (double)tp->k;
    double items = (double)c->batch * (double)tp->tiles_m * (double)tp->tiles_n;
    double mine = ceil(items / (c->devices > 0 ? c->devices : 1));
    double c_tile = tm * tn * (double)c->copy_out_es;
    /* With B kept, a tile copies its band of A, and B crosses once for
     * each product this GPU works on (at most one a tile), with the steps
     * of the first tile that needs it. */
    double b_s = tp->keep_b ? k * (double)tp->n * (double)c->copy_in_es / c->h2d : 0;
    double b_loads = tp->keep_b ? fmin(mine, (double)c->batch) : 0;
    double t_in = ((tp->keep_b ? tm : tm + tn) * k * (double)c->copy_in_es +
                   (c->c_in ? c_tile : 0)) / c->h2d;
    double t_out = c_tile / c->d2h;
    double t_compute = (c->flops > 0 ? 2 * tm * tn * k / c->flops : 0) +
                       (double)tp->steps * (2 * c_tile / c->dram + c->step_s);
    /* The first tile's first step (its blocks of A and B, B's first rows
     * when kept, and its C) is waited for; then copies in overlap the
     * arithmetic, copies out the next tile's; the last tile out is waited
     * for. */
    double head = ((tm + tn) * (double)tp->tk * (double)c->copy_in_es +
                   (c->c_in ? c_tile : 0)) / c->h2d;
    double body = fmax(mine * t_compute,
                       fmax(mine * t_in + b_loads * b_s - head, (mine - 1) * t_out));
    return head + body + t_out;
}

/* The choice among plans, in two passes over the same plans: the least
 * modelled time, then, of the plans within TILED_TIME_SLACK of it, the
 * one that copies the fewest bytes (then the fewest steps). */
struct choice {
    const struct tiled_costs *c;
    int pass;                  /* 1, then 2 */
    int found;
    double fastest;            /* pass 1's answer */
    struct tiled_plan best;    /* pass 2's answer */
    double best_bytes;
};

/* The time above which a plan is of no use to the pass. */
static double choice_limit(const struct choice *ch)
{
    if (!ch->found)
        return INFINITY;
    return ch->pass == 1 ? ch->fastest : ch->fastest * (1 + TILED_TIME_SLACK);
}

static void choice_take(struct choice *ch, const struct tiled_plan *p)
{
    if (ch->pass == 1) {
        if (!ch->found || p->seconds < ch->fastest)
            ch->fastest = p->seconds;
        ch->found = 1;
        return;
    }
    if (p->seconds > choice_limit(ch))
        return;
    double bytes = tiled_traffic(p, ch->c);
    if (ch->found == 1 || bytes < ch->best_bytes * (1 - 1e-9) ||
        (bytes <= ch->best_bytes * (1 + 1e-9) && p->steps < ch->best.steps)) {
        ch->best = *p;
        ch->best_bytes = bytes;
        ch->found = 2;
    }
}

/* Every plan that fits, in each pass: each step length, each number of
 * tiles down, and each number across from the fewest that fit upwards,
 * until the bands of A and B that the tiles across copy in alone take
 * longer than the pass can use (more tiles across only copy more). */
static void each_plan(int64_t m, int64_t n, int64_t k, size_t budget, struct choice *ch)
{
    static const int64_t steps[] = { 16384, 8192, 4096, 2048, 1024, 512, 256 };
    const struct tiled_costs *c = ch->c;
    int64_t most_m = cdiv(m, TILED_ALIGN), most_n = cdiv(n, TILED_ALIGN);
    double gpus = c->devices > 0 ? c->devices : 1;
    /* All of K, then each step length shorter than it. */
    for (size_t i = 0; i <= sizeof steps / sizeof steps[0]; i++) {
        int64_t tk = i == 0 ? k : min64(k, steps[i - 1]);
        if (i > 0 && tk == (i == 1 ? k : min64(k, steps[i - 2])))
            continue;
        int64_t last_tm = -1;
        for (int64_t parts_m = 1; parts_m <= most_m; parts_m++) {
            int64_t tm = side_of(m, parts_m);
            if (tm == last_tm)
                continue;
            last_tm = tm;
            /* Rows of C whole with B kept, where it fits. */
            if (tiled_kept_bytes(tm, n, k, tk, c->in_es, c->out_es) <= budget) {
                struct tiled_plan p = { .m = m, .n = n, .k = k, .tm = tm, .tn = n,
                                        .tiles_m = cdiv(m, tm), .tiles_n = 1,
                                        .steps = cdiv(k, tk), .keep_b = 1 };
                p.tk = cdiv(k, p.steps);
                p.bytes = tiled_kept_bytes(tm, n, k, p.tk, c->in_es, c->out_es);
                p.seconds = tiled_seconds(&p, c);
                choice_take(ch, &p);
            }
            /* The widest tn with 2 (tm tk + tk tn) in + 2 tm tn out <= budget. */
            double fixed = 2.0 * (double)tm * (double)tk * (double)c->in_es;
            double per_col = 2.0 * (double)tk * (double)c->in_es + 2.0 * (double)tm * (double)c->out_es;
            if (fixed >= (double)budget)
                continue;
            double widest = floor(((double)budget - fixed) / per_col);
            int64_t tn_max = widest >= (double)n ? n : (int64_t)widest / TILED_ALIGN * TILED_ALIGN;
            if (tn_max <= 0)
                continue;
            int64_t last_tn = -1;
            for (int64_t parts_n = cdiv(n, tn_max); parts_n <= most_n; parts_n++) {
                int64_t tn = side_of(n, parts_n);
                if (tn == last_tn)
                    continue;
                last_tn = tn;
                struct tiled_plan p = { .m = m, .n = n, .k = k, .tm = tm, .tn = tn };
                p.tiles_m = cdiv(m, tm);
                p.tiles_n = cdiv(n, tn);
                p.steps = cdiv(k, tk);
                p.tk = cdiv(k, p.steps);
                p.bytes = tiled_bytes(p.tm, p.tn, p.tk, c->in_es, c->out_es);
                p.seconds = tiled_seconds(&p, c);
                choice_take(ch, &p);
                /* No plan with more tiles across copies less of A and B
                 * (tiles_m (tiles_n tm + n) k elements), nor waits longer
                 * for its first step than this one does. */
                double bands = (double)c->batch * (double)p.tiles_m *
                               ((double)p.tiles_n * (double)tm + (double)n) * (double)k *
                               (double)c->copy_in_es / (gpus * c->h2d);
                double head = ((double)(tm + tn) * (double)p.tk * (double)c->copy_in_es +
                               (c->c_in ? (double)tm * (double)tn * (double)c->copy_out_es : 0)) /
                              c->h2d;
                if (bands - head > choice_limit(ch))
                    break;
            }
        }
    }
}

int tiled_plan_make(int64_t m, int64_t n, int64_t k, const struct tiled_costs *c, size_t budget,
                    struct tiled_plan *tp)
{
    m = m > 0 ? m : 1;
    n = n > 0 ? n : 1;
    k = k > 0 ? k : 1;
    struct choice ch = { .c = c, .pass = 1 };
    each_plan(m, n, k, budget, &ch);
    if (!ch.found)
        return gc_fail(GC_EXIT_GPU, "%.3g GiB of device memory is too little even for %dx%d "
                       "tiles of this product", budget / 1073741824.0, TILED_ALIGN, TILED_ALIGN);
    ch.pass = 2;
    each_plan(m, n, k, budget, &ch);
    *tp = ch.best;
    return 0;
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
