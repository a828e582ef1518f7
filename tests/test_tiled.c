/* The out-of-core tiler's arithmetic (src/plan/tiled.c): for many shapes and
 * budgets, the plan fits its budget, its tiles cover C once, its steps
 * cover K once, and a product that fits whole is one tile of one step.
 * The MPI ranks' grid (src/scale/dist_plan.c): the blocks of every rank count
 * cover C once, are as even as they go, and the grid reads no more than
 * any other factorisation.  K in panels: the widest that fits a budget,
 * two at a time; the panels cover K once; each panel's owner is in the
 * grid row (A) or column (B) it serves, in the column or row whose turn
 * it is.  Prints 'test_tiled: N passed, M failed'. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "src/scale/dist_plan.h"
#include "src/plan/tiled.h"
#include "src/plan/whole.h"
#include "tests/check.h"


static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    return check_xorshift(&rng);
}

/* Every element of an m x n C lies in exactly one tile; checked on a
 * coarse grid of the tiles' edges and on sampled elements. */
static int covers_once(const struct tiled_plan *tp)
{
    int64_t tiles = tp->tiles_m * tp->tiles_n;
    int64_t rows = 0, cols = 0;
    for (int64_t t = 0; t < tiles; t++) {
        struct tiled_rect r = tiled_tile(tp, t);
        if (r.rows <= 0 || r.cols <= 0 || r.rows > tp->tm || r.cols > tp->tn ||
            r.r0 + r.rows > tp->m || r.c0 + r.cols > tp->n)
            return 0;
        if (r.c0 == 0)
            rows += r.rows;
        if (r.r0 == 0)
            cols += r.cols;
    }
    if (rows != tp->m || cols != tp->n)
        return 0;
    for (int i = 0; i < 200; i++) {
        int64_t x = (int64_t)(next() % (uint64_t)tp->m), y = (int64_t)(next() % (uint64_t)tp->n);
        int hits = 0;
        for (int64_t t = 0; t < tiles; t++) {
            struct tiled_rect r = tiled_tile(tp, t);
            hits += x >= r.r0 && x < r.r0 + r.rows && y >= r.c0 && y < r.c0 + r.cols;
        }
        if (hits != 1)
            return 0;
    }
    return 1;
}

static int steps_cover(const struct tiled_plan *tp)
{
    int64_t at = 0;
    for (int64_t s = 0; s < tp->steps; s++) {
        int64_t k0, kk;
        tiled_step(tp, s, &k0, &kk);
        if (k0 != at || kk <= 0 || kk > tp->tk)
            return 0;
        at += kk;
    }
    return at == tp->k;
}

/* The costs of a float32 product on the H200 (49 TFLOP/s in core), or of
 * copies alone (flops 0), for `devices` GPUs. */
static struct tiled_costs costs(size_t in_es, size_t out_es, double flops, int devices)
{
    struct tiled_costs c = { in_es, out_es, in_es, out_es, flops, TILED_H2D_BYTES_S,
                             TILED_D2H_BYTES_S, TILED_DRAM_BYTES_S, TILED_STEP_S, devices, 1, 0 };
    return c;
}

static int plan_ok(const struct tiled_plan *tp, int64_t m, int64_t n, const struct tiled_costs *c,
                   size_t budget)
{
    return tp->bytes <= budget && tp->bytes == tiled_plan_bytes(tp, c->in_es, c->out_es) &&
           (!tp->keep_b || (tp->tn == n && tp->tiles_n == 1)) &&
           (tp->tm == m || tp->tm % TILED_ALIGN == 0) && (tp->tn == n || tp->tn % TILED_ALIGN == 0) &&
           covers_once(tp) && steps_cover(tp);
}

int main(void)
{
    /* A refused budget says why; the refusals here are expected. */
    struct gc_capture refusals;
    gc_capture_set(&refusals);
    struct tiled_plan tp;
    struct tiled_costs f32 = costs(4, 4, 49e12, 1), copies = costs(4, 4, 0, 1);
    /* Fits whole: the whole of K in one step, a tile or two. */
    CHECK(tiled_plan_make(1000, 700, 300, &f32, (size_t)1 << 30, &tp) == 0 && tp.steps == 1 &&
          tp.tk == 300 && tp.tiles_m * tp.tiles_n <= 2 && plan_ok(&tp, 1000, 700, &f32, 1u << 30),
          "a small product: %lld x %lld tiles, %lld steps", (long long)tp.tiles_m,
          (long long)tp.tiles_n, (long long)tp.steps);
    /* 32768^2 float32 at half of A + B + C (6 GiB): a few large tiles (or
     * bands of whole rows with B kept), and within a few per cent of the
     * arithmetic alone. */
    size_t half = (size_t)3 * 32768 * 32768 * 4 / 2;
    double alone = 2.0 * 32768 * 32768 * 32768 / 49e12;
    CHECK(tiled_plan_make(32768, 32768, 32768, &f32, half, &tp) == 0 && tp.bytes <= half &&
          ((tp.tm >= 8192 && tp.tn >= 8192) || (tp.keep_b && tp.tn == 32768)) &&
          covers_once(&tp) && steps_cover(&tp) &&
          tp.seconds < alone * 1.06,
          "32768^3 at half: tiles %lld x %lld, steps of %lld, %zu bytes, %.3f s", (long long)tp.tm,
          (long long)tp.tn, (long long)tp.tk, tp.bytes, tp.seconds);
    /* Shared among GPUs: the tiles go out evenly, and the time falls with
     * the GPUs' number (as the model sees it). */
    double one = 0;
    for (int dev = 1; dev <= 8; dev *= 2) {
        struct tiled_costs c = costs(4, 4, 49e12, dev);
        size_t big = (size_t)100 << 30;
        int ok = tiled_plan_make(32768, 32768, 32768, &c, big, &tp) == 0;
        int64_t tiles = tp.tiles_m * tp.tiles_n;
        if (dev == 1)
            one = tp.seconds;
        CHECK(ok && tiles % dev == 0 && tiles >= dev && tp.seconds < one / dev * 1.1 &&
              plan_ok(&tp, 32768, 32768, &c, big),
              "32768^3 on %d GPUs: %lld tiles of %lld x %lld, %.3f s against %.3f on one", dev,
              (long long)tiles, (long long)tp.tm, (long long)tp.tn, tp.seconds, one);
    }
    /* Room for B on each GPU: bands of whole rows, B copied once a GPU and
     * kept, so that A crosses once, B once a GPU and C once (where the
     * double-buffered square tiles of 2 GPUs copied 30 GB), the rows of C
     * whole for the file. */
    for (int dev = 1; dev <= 2; dev++) {
        struct tiled_costs c = costs(4, 4, 49e12, dev);
        size_t big = (size_t)100 << 30;
        double mat = 32768.0 * 32768 * 4;
        int ok = tiled_plan_make(32768, 32768, 32768, &c, big, &tp) == 0;
        double moved = tiled_traffic(&tp, &c);
        CHECK(ok && tp.keep_b && tp.tn == 32768 && tp.tiles_m % dev == 0 &&
              tp.tiles_m >= 2 && moved <= (2.0 + dev) * mat * 1.0001 &&
              tp.bytes == tiled_kept_bytes(tp.tm, 32768, 32768, tp.tk, 4, 4) &&
              plan_ok(&tp, 32768, 32768, &c, big),
              "32768^3 on %d GPU(s) with room for B: %lld bands of %lld rows, keep_b %d, "
              "%.1f GB copied", dev, (long long)tp.tiles_m, (long long)tp.tm, tp.keep_b,
              moved / 1e9);
    }
    /* The whole job's model (src/plan/whole.h) against the H200 host's
     * runs of 32768^2 float32 .npy it was fitted on (README: in core 3.52
     * s whole; with the tiles landing in the file's pages, --devices 0
     * 2.53-2.62 s, --devices 0,1 2.19 s), within 20%; and a file that
     * cannot take the tiles as they land waits for all of C. */
    {
        double ab = 2.0 * 32768 * 32768 * 4, cb = 32768.0 * 32768 * 4;
        struct whole_job w, later;
        whole_in_core(ab, cb, 2.0 * 32768 * 32768 * 32768 / 48.8e12, &w);
        CHECK(fabs(w.total - 3.52) < 0.2 * 3.52, "in core: the model says %.2f s whole", w.total);
        const double measured[3] = { 0, 2.57, 2.19 };
        for (int dev = 1; dev <= 2; dev++) {
            struct tiled_costs c = costs(4, 4, 49e12, dev);
            tiled_plan_make(32768, 32768, 32768, &c, (size_t)100 << 30, &tp);
            whole_tiles(ab, cb, tp.seconds, dev, 1, &w);
            whole_tiles(ab, cb, tp.seconds, dev, 0, &later);
            CHECK(fabs(w.total - measured[dev]) < 0.2 * measured[dev] &&
                      later.write >= w.write && later.total >= w.total,
                  "%d GPU(s): the model says %.2f s whole (%.2f writing after the tiles), "
                  "%.2f s writing C after", dev, w.total, w.write, later.total);
        }
    }
    /* And 24576^2, with the file's pages made ahead (README: --devices 0
     * 1.47-1.76 s whole, both GPUs 1.51-1.61 s), within 20% of the middle
     * of each range. */
    {
        double ab = 2.0 * 24576 * 24576 * 4, cb = 24576.0 * 24576 * 4;
        struct whole_job w;
        const double measured[3] = { 0, 1.615, 1.56 };
        for (int dev = 1; dev <= 2; dev++) {
            struct tiled_costs c = costs(4, 4, 49e12, dev);
            tiled_plan_make(24576, 24576, 24576, &c, (size_t)100 << 30, &tp);
            whole_tiles(ab, cb, tp.seconds, dev, 1, &w);
            CHECK(fabs(w.total - measured[dev]) < 0.2 * measured[dev],
                  "24576^2 on %d GPU(s): the model says %.2f s whole, measured %.2f", dev,
                  w.total, measured[dev]);
        }
    }
    /* No room for B beside its bands: tiles as before. */
    {
        size_t small = (size_t)3 << 30;
        CHECK(tiled_plan_make(32768, 32768, 32768, &f32, small, &tp) == 0 && !tp.keep_b &&
              plan_ok(&tp, 32768, 32768, &f32, small),
              "32768^3 in 3 GiB: B (4 GiB) is not kept");
    }
    /* Too small for the smallest tiles. */
    CHECK(tiled_plan_make(4096, 4096, 4096, &copies, tiled_bytes(256, 256, 256, 4, 4) - 1, &tp) ==
          GC_EXIT_GPU, "a budget below the smallest tiles is refused");
    CHECK(tiled_plan_make(4096, 4096, 4096, &copies, tiled_bytes(256, 256, 256, 4, 4), &tp) == 0 &&
          tp.tm == 256 && tp.tn == 256 && tp.tk == 256 && covers_once(&tp),
          "exactly the smallest tiles: %lld %lld %lld", (long long)tp.tm, (long long)tp.tn,
          (long long)tp.tk);
    /* A ragged long thin product: tiles stay in bounds. */
    struct tiled_costs f64 = costs(8, 8, 49e12, 1);
    CHECK(tiled_plan_make(100003, 37, 70001, &f64, (size_t)64 << 20, &tp) == 0 &&
          plan_ok(&tp, 100003, 37, &f64, (size_t)64 << 20) && tp.tn == 37,
          "100003x37x70001 f64 in 64 MiB: %lld x %lld, steps of %lld", (long long)tp.tm,
          (long long)tp.tn, (long long)tp.tk);
    /* Copies alone: the plan copies no more than the square tiles that fill
     * the budget would (the fewest bytes, within the model's slack). */
    CHECK(tiled_plan_make(32768, 32768, 32768, &copies, half, &tp) == 0 &&
          tiled_traffic(&tp, &copies) <= 1.0001 * (4.0 * 32768 * 32768 * 32768 * 4 / 16384 +
                                                   32768.0 * 32768 * 4),
          "copies alone at half: %lld x %lld tiles move %.1f GB", (long long)tp.tm,
          (long long)tp.tn, tiled_traffic(&tp, &copies) / 1e9);
    /* C copied in as well as out is counted twice. */
    struct tiled_costs c_in = f32;
    c_in.c_in = 1;
    CHECK(tiled_plan_make(32768, 32768, 32768, &f32, half, &tp) == 0 &&
          tiled_traffic(&tp, &c_in) - tiled_traffic(&tp, &f32) > 32768.0 * 32768 * 4 * 0.999 &&
          tiled_seconds(&tp, &c_in) > tiled_seconds(&tp, &f32),
          "C0 copied in costs its bytes and time");

    /* Random shapes, budgets, element sizes, rates and GPUs. */
    static const size_t es[][2] = { { 4, 4 }, { 2, 4 }, { 8, 8 }, { 12, 12 } };
    static const double rates[] = { 0, 49e12, 600e12, 1e9 };
    int plans = 0;
    for (int i = 0; i < 3000; i++) {
        int64_t m = 1 + (int64_t)(next() % 70000), n = 1 + (int64_t)(next() % 70000);
        int64_t k = 1 + (int64_t)(next() % 70000);
        const size_t *e = es[next() % 4];
        struct tiled_costs c = costs(e[0], e[1], rates[next() % 4], 1 + (int)(next() % 8));
        c.batch = 1 + (int64_t)(next() % 3);
        c.c_in = (int)(next() % 2);
        size_t whole = tiled_bytes(m, n, k, e[0], e[1]);
        size_t budget = (size_t)(next() % (whole / 2 + 1)) + tiled_bytes(256, 256, 256, 4, 4);
        if (tiled_plan_make(m, n, k, &c, budget, &tp) != 0) {
            CHECK(tiled_bytes(m < 256 ? m : 256, n < 256 ? n : 256, k < 256 ? k : 256, e[0],
                              e[1]) > budget,
                  "%lldx%lldx%lld refused in %zu bytes although the smallest tiles fit",
                  (long long)m, (long long)n, (long long)k, budget);
            continue;
        }
        plans++;
        CHECK(plan_ok(&tp, m, n, &c, budget) && tp.seconds == tiled_seconds(&tp, &c),
              "%lldx%lldx%lld es %zu/%zu budget %zu: tiles %lld x %lld, step %lld, %zu bytes",
              (long long)m, (long long)n, (long long)k, e[0], e[1], budget, (long long)tp.tm,
              (long long)tp.tn, (long long)tp.tk, tp.bytes);
        /* More memory never means a plan the model finds slower, beyond
         * the slack within which fewer bytes win. */
        struct tiled_plan more;
        if (tiled_plan_make(m, n, k, &c, budget * 2, &more) == 0)
            CHECK(more.seconds <= tp.seconds * (1 + TILED_TIME_SLACK) * 1.0001,
                  "%lldx%lldx%lld: twice the budget is slower (%.6g s against %.6g s)",
                  (long long)m, (long long)n, (long long)k, more.seconds, tp.seconds);
    }
    CHECK(plans > 1000, "only %d of 3000 random plans were made", plans);

    /* The ranks' grid and blocks. */
    struct dist_grid g = dist_grid_make(4, 1000, 1000);
    CHECK(g.pr == 2 && g.pc == 2, "4 ranks on a square: %d x %d", g.pr, g.pc);
    g = dist_grid_make(3, 1000, 1000);
    CHECK(g.pr * g.pc == 3, "3 ranks: %d x %d", g.pr, g.pc);
    g = dist_grid_make(4, 1, 5000);
    CHECK(g.pr == 1 && g.pc == 4, "a row vector's product splits across: %d x %d", g.pr, g.pc);
    g = dist_grid_make(2, 32768, 32768);
    CHECK(g.pr == 2 && g.pc == 1, "2 ranks on a square: bands of whole rows, %d x %d", g.pr,
          g.pc);
    g = dist_grid_make(6, 100000, 10);
    CHECK(g.pr == 6 && g.pc == 1, "a tall product splits down: %d x %d", g.pr, g.pc);
    for (int i = 0; i < 2000; i++) {
        int ranks = 1 + (int)(next() % 40);
        int64_t m = (int64_t)(next() % 300), n = (int64_t)(next() % 300);
        g = dist_grid_make(ranks, m, n);
        CHECK(g.pr * g.pc == ranks && g.pr >= 1 && g.pc >= 1, "%d ranks: %d x %d grid", ranks,
              g.pr, g.pc);
        /* No other factorisation reads fewer elements per unit of K. */
        double cost = (double)((m + g.pr - 1) / g.pr) + (double)((n + g.pc - 1) / g.pc);
        for (int pr = 1; pr <= ranks; pr++)
            if (ranks % pr == 0 && pr <= (m > 0 ? m : 1) && ranks / pr <= (n > 0 ? n : 1) &&
                g.pr <= (m > 0 ? m : 1) && g.pc <= (n > 0 ? n : 1))
                CHECK(cost <= (double)((m + pr - 1) / pr) + (double)((n + ranks / pr - 1) /
                      (ranks / pr)), "%d ranks on %lldx%lld: %dx%d reads more than %dx%d",
                      ranks, (long long)m, (long long)n, g.pr, g.pc, pr, ranks / pr);
        /* Every element of C in exactly one block; sides differ by one at most. */
        int64_t cells = 0, min_rows = INT64_MAX, max_rows = 0;
        int ok = 1;
        for (int r = 0; r < ranks; r++) {
            struct dist_block b = dist_block_of(&g, m, n, r);
            ok &= b.r0 >= 0 && b.c0 >= 0 && b.rows >= 0 && b.cols >= 0 && b.r0 + b.rows <= m &&
                  b.c0 + b.cols <= n;
            cells += b.rows * b.cols;
            min_rows = b.rows < min_rows ? b.rows : min_rows;
            max_rows = b.rows > max_rows ? b.rows : max_rows;
            /* The next rank across starts where this one ends. */
            if (r % g.pc + 1 < g.pc) {
                struct dist_block nb = dist_block_of(&g, m, n, r + 1);
                ok &= nb.c0 == b.c0 + b.cols && nb.r0 == b.r0;
            }
            if (r + g.pc < ranks) {
                struct dist_block db = dist_block_of(&g, m, n, r + g.pc);
                ok &= db.r0 == b.r0 + b.rows && db.c0 == b.c0;
            }
        }
        CHECK(ok && cells == m * n && max_rows - min_rows <= 1,
              "%d ranks on %lldx%lld (%dx%d): blocks cover %lld of %lld cells, rows %lld..%lld",
              ranks, (long long)m, (long long)n, g.pr, g.pc, (long long)cells,
              (long long)(m * n), (long long)min_rows, (long long)max_rows);
    }

    /* Panels of K: the widest width that fits, a multiple of the alignment
     * or K itself, covering K once. */
    int widths = 0;
    for (int i = 0; i < 20000; i++) {
        int64_t k = 1 + (int64_t)(next() % (next() % 2 ? 600 : 200000));
        int64_t rows = (int64_t)(next() % 3000), cols = (int64_t)(next() % 3000);
        struct dist_need need = dist_need_of(rows, cols, rows * cols, (int)(next() % 4),
                                             2 + (int)(next() % 3));
        uint64_t whole = need.fixed + need.per_k * (uint64_t)k;
        uint64_t budget = need.fixed / 2 + next() % (whole + whole / 2 + 1);
        CHECK(dist_fits_whole(&need, k, budget) == (whole <= budget),
              "k %lld, budget %llu: whole %llu", (long long)k, (unsigned long long)budget,
              (unsigned long long)whole);
        int64_t kb = dist_panel_width(&need, k, budget);
        int64_t least = k < DIST_PANEL_ALIGN ? k : DIST_PANEL_ALIGN;
        uint64_t with_least = need.fixed + 2 * need.per_k * (uint64_t)least;
        if (kb == 0) {
            CHECK(with_least > budget, "k %lld, budget %llu: no width, though %lld fits",
                  (long long)k, (unsigned long long)budget, (long long)least);
            continue;
        }
        widths++;
        CHECK(kb == k || (kb % DIST_PANEL_ALIGN == 0 && kb < k), "k %lld: width %lld",
              (long long)k, (long long)kb);
        CHECK(need.fixed + 2 * need.per_k * (uint64_t)kb <= budget,
              "k %lld, width %lld: two panels pass the budget %llu", (long long)k,
              (long long)kb, (unsigned long long)budget);
        int64_t wider = kb + DIST_PANEL_ALIGN < k ? kb + DIST_PANEL_ALIGN : k;
        CHECK(kb == k || need.fixed + 2 * need.per_k * (uint64_t)wider > budget,
              "k %lld: width %lld, but %lld fits the budget %llu", (long long)k, (long long)kb,
              (long long)wider, (unsigned long long)budget);
        int64_t count = dist_panel_count(k, kb), at = 0;
        int ok = count == (k + kb - 1) / kb;
        for (int64_t q = 0; q < count; q++) {
            int64_t k0, kn;
            dist_panel_range(k, kb, q, &k0, &kn);
            ok &= k0 == at && kn > 0 && kn <= kb && (kn == kb || q == count - 1);
            at = k0 + kn;
        }
        CHECK(ok && at == k, "k %lld in %lld panels of %lld: covered to %lld", (long long)k,
              (long long)count, (long long)kb, (long long)at);
    }
    CHECK(widths > 5000, "only %d of 20000 budgets gave a panel width", widths);

    /* Owners: in the grid row (A) or column (B) they serve, the column or
     * row of the panel's turn; every rank of a row (column) has the same
     * owner for a panel, so that it is read once there. */
    for (int i = 0; i < 500; i++) {
        g.pr = 1 + (int)(next() % 8);
        g.pc = 1 + (int)(next() % 8);
        int ok = 1;
        for (int r = 0; r < g.pr * g.pc; r++)
            for (int64_t q = 0; q < 20; q++) {
                int a = dist_panel_owner(&g, 0, q, r), b = dist_panel_owner(&g, 1, q, r);
                ok &= a / g.pc == r / g.pc && a % g.pc == q % g.pc;
                ok &= b % g.pc == r % g.pc && b / g.pc == q % g.pr;
                ok &= a == dist_panel_owner(&g, 0, q, r / g.pc * g.pc);
                ok &= b == dist_panel_owner(&g, 1, q, r % g.pc);
            }
        CHECK(ok, "%dx%d grid: a panel's owner is outside its row or column, or not its turn's",
              g.pr, g.pc);
    }
    printf("test_tiled: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
