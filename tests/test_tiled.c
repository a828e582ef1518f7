/* The out-of-core tiler's arithmetic (src/tiled.c): for many shapes and
 * budgets, the plan fits its budget, its tiles cover C once, its steps
 * cover K once, and a product that fits whole is one tile of one step.
 * Prints 'test_tiled: N passed, M failed'. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/tiled.h"

static int passed, failed;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            passed++;                                                        \
        } else {                                                             \
            failed++;                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
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

int main(void)
{
    /* Fits whole: one tile, one step (K up to the largest step). */
    struct tiled_plan tp;
    CHECK(tiled_plan_make(1000, 700, 300, 4, 4, (size_t)1 << 30, &tp) == 0 && tp.tiles_m == 1 &&
          tp.tiles_n == 1 && tp.steps == 1 && tp.tm == 1000 && tp.tn == 700 && tp.tk == 300,
          "a small product is one tile: %lld x %lld tiles, %lld steps", (long long)tp.tiles_m,
          (long long)tp.tiles_n, (long long)tp.steps);
    /* 32768^2 float32 at half of A + B + C (6 GiB): a few large tiles. */
    size_t half = (size_t)3 * 32768 * 32768 * 4 / 2;
    CHECK(tiled_plan_make(32768, 32768, 32768, 4, 4, half, &tp) == 0 && tp.bytes <= half &&
          tp.tm >= 8192 && tp.tn >= 8192 && covers_once(&tp) && steps_cover(&tp),
          "32768^3 at half: tiles %lld x %lld, steps of %lld, %zu bytes", (long long)tp.tm,
          (long long)tp.tn, (long long)tp.tk, tp.bytes);
    /* Too small for the smallest tiles. */
    CHECK(tiled_plan_make(4096, 4096, 4096, 4, 4, tiled_bytes(256, 256, 256, 4, 4) - 1, &tp) ==
          -1, "a budget below the smallest tiles is refused");
    CHECK(tiled_plan_make(4096, 4096, 4096, 4, 4, tiled_bytes(256, 256, 256, 4, 4), &tp) == 0 &&
          tp.tm == 256 && tp.tn == 256 && tp.tk == 256 && covers_once(&tp),
          "exactly the smallest tiles: %lld %lld %lld", (long long)tp.tm, (long long)tp.tn,
          (long long)tp.tk);
    /* A ragged long thin product: tiles stay in bounds. */
    CHECK(tiled_plan_make(100003, 37, 70001, 8, 8, (size_t)64 << 20, &tp) == 0 &&
          tp.bytes <= (size_t)64 << 20 && covers_once(&tp) && steps_cover(&tp) && tp.tn == 37,
          "100003x37x70001 f64 in 64 MiB: %lld x %lld, steps of %lld", (long long)tp.tm,
          (long long)tp.tn, (long long)tp.tk);

    /* Random shapes and budgets, each element size. */
    static const size_t es[][2] = { { 4, 4 }, { 2, 4 }, { 8, 8 }, { 12, 12 } };
    int plans = 0;
    for (int i = 0; i < 3000; i++) {
        int64_t m = 1 + (int64_t)(next() % 70000), n = 1 + (int64_t)(next() % 70000);
        int64_t k = 1 + (int64_t)(next() % 70000);
        const size_t *e = es[next() % 4];
        size_t whole = tiled_bytes(m, n, k, e[0], e[1]);
        size_t budget = (size_t)(next() % (whole / 2 + 1)) + tiled_bytes(256, 256, 256, 4, 4);
        if (tiled_plan_make(m, n, k, e[0], e[1], budget, &tp) != 0) {
            CHECK(tiled_bytes(m < 256 ? m : 256, n < 256 ? n : 256, k < 256 ? k : 256, e[0],
                              e[1]) > budget,
                  "%lldx%lldx%lld refused in %zu bytes although the smallest tiles fit",
                  (long long)m, (long long)n, (long long)k, budget);
            continue;
        }
        plans++;
        int ok = tp.bytes <= budget && tp.bytes == tiled_bytes(tp.tm, tp.tn, tp.tk, e[0], e[1]) &&
                 (tp.tm == m || tp.tm % TILED_ALIGN == 0) &&
                 (tp.tn == n || tp.tn % TILED_ALIGN == 0) && covers_once(&tp) && steps_cover(&tp);
        CHECK(ok, "%lldx%lldx%lld es %zu/%zu budget %zu: tiles %lld x %lld, step %lld, %zu bytes",
              (long long)m, (long long)n, (long long)k, e[0], e[1], budget, (long long)tp.tm,
              (long long)tp.tn, (long long)tp.tk, tp.bytes);
        /* More memory never means more traffic. */
        struct tiled_plan more;
        if (tiled_plan_make(m, n, k, e[0], e[1], budget * 2, &more) == 0)
            CHECK(tiled_traffic(&more, e[0], e[1]) <= tiled_traffic(&tp, e[0], e[1]) * 1.0001,
                  "%lldx%lldx%lld: twice the budget moves more bytes", (long long)m,
                  (long long)n, (long long)k);
    }
    CHECK(plans > 1000, "only %d of 3000 random plans were made", plans);
    printf("test_tiled: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
