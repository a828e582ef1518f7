/* Writes bench's pictures from made-up data, for tests/check_svg.py to
 * read, and checks what plot.c refuses.  No GPU:
 *
 *   cc -I. -D_GNU_SOURCE tests/test_plot.c src/bench/plot.c -lm -o test_plot
 *   ./test_plot tests/out/plots && python3 tests/check_svg.py tests/out/plots
 *
 * (tests/tests.mk builds it under ASan and UBSan as build/tests/test_plot.)
 * Beside each NAME.svg goes NAME.expect, what the picture must show:
 * "heatmap R C" and the R x C values one a line, or "scatter N L G" (points
 * drawn, lowest points labelled, groups). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "src/bench/plot.h"

static int failures;

#define CHECK(cond, what)                                                              \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: %s (%s)\n", __FILE__, __LINE__, what, #cond);      \
            failures++;                                                                \
        }                                                                              \
    } while (0)

/* A fixed-seed generator, so that every run draws the same pictures. */
static double uniform(unsigned long long *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0;
}

static FILE *open_out(const char *dir, const char *name, const char *ext)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return f;
}

static void heatmap(const char *dir, const char *name, const struct plot_heatmap *h)
{
    FILE *f = open_out(dir, name, "svg");
    CHECK(plot_heatmap(f, h) == 0, name);
    CHECK(fclose(f) == 0, name);
    f = open_out(dir, name, "expect");
    fprintf(f, "heatmap %d %d\n", h->n_rows, h->n_cols);
    for (int i = 0; i < h->n_rows * h->n_cols; i++)
        fprintf(f, isfinite(h->values[i]) ? "%.17g\n" : "nan\n", h->values[i]);
    CHECK(fclose(f) == 0, name);
}

/* The expectations are counted here, apart from plot.c's own tests. */
static void scatter(const char *dir, const char *name, const struct plot_scatter *s)
{
    FILE *f = open_out(dir, name, "svg");
    CHECK(plot_scatter(f, s) == 0, name);
    CHECK(fclose(f) == 0, name);
    int drawn = 0;
    for (int i = 0; i < s->n_points; i++) {
        const struct plot_point *p = &s->points[i];
        drawn += isfinite(p->x) && p->x > 0 && isfinite(p->y) && p->group >= 0 &&
                 p->group < s->n_groups;
    }
    f = open_out(dir, name, "expect");
    fprintf(f, "scatter %d %d %d\n", drawn, drawn < 3 ? drawn : 3, s->n_groups);
    CHECK(fclose(f) == 0, name);
}

static const char *const ladder[24] = {
    "naive", "coalesced", "smem", "tile_1d", "tile_2d", "vec4", "warptile", "double_buffer",
    "pipeline", "thread_8x16", "swizzle_64x128", "stream_k", "edge_peel", "tf32_mma",
    "tf32_wgmma", "tf32_pipeline", "tf32x3", "split_k_reduce",
    "warp_specialized_persistent_cluster_multicast", "autotuned", "gemv", "f64_naive",
    "f64_dmma", "cublas",
};
static const char *const shapes[11] = {
    "1024", "2048", "4096", "8192", "4097", "127x129x255", "1000x3000x500", "256x256x65536",
    "65536x64x1024", "1024x128x128x128", "16x1024x1024x1024",
};

static void write_heatmaps(const char *dir)
{
    enum { R = 24, C = 11 };
    double values[R * C];
    unsigned long long seed = 42;
    /* Log-uniform from 0.5% to 300%, the scale's turning points exactly,
     * cells not run, and one kernel that ran nowhere. */
    for (int i = 0; i < R * C; i++)
        values[i] = 0.5 * pow(600, uniform(&seed));
    static const double anchors[] = { 0.5, 300, 89.49, 89.5, 90, 99.5, 100, 149.5, 200, 0.49 };
    for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++)
        values[3 * C + i] = anchors[i];
    for (int i = 0; i < R * C; i++)
        if ((i * 7 + 3) % 17 == 0)
            values[i] = NAN;
    for (int c = 0; c < C; c++) {
        values[20 * C + c] = NAN;
        values[23 * C + c] = 100;
    }
    const char *caps[C];
    char cap_text[C][16];
    for (int c = 0; c < C; c++) {
        snprintf(cap_text[c], sizeof cap_text[c], "%.1f", 10 + 4.5 * c);
        caps[c] = c == 4 ? NULL : cap_text[c];
    }
    struct plot_heatmap h = {
        "gemmcli bench: mul f32 on NVIDIA H200",
        "2026-11-22; each cell: % of cuBLAS SGEMM's speed at that shape, measured in the same run",
        R, C, ladder, shapes, values, caps, "cuBLAS TFLOP/s",
    };
    heatmap(dir, "heatmap_ladder", &h);

    double one = 93.7;
    const char *row[1] = { "cublas" }, *col[1] = { "4096" };
    struct plot_heatmap h1 = { "one cell", NULL, 1, 1, row, col, &one, NULL, NULL };
    heatmap(dir, "heatmap_1x1", &h1);

    /* Values no bench produces: the picture must still be readable. */
    double odd[6] = { -3.2, INFINITY, 1e300, -1e9, 0, -0.4 };
    const char *rows3[3] = { "a&b", "<script>", "\"quoted\" 'single'" };
    const char *cols2[2] = { "x<y", "p&q>r" };
    const char *caps2[2] = { "\xe2\x89\xa5 1 & <2>", NULL };
    struct plot_heatmap h2 = { "Tom & Jerry <3>", "control\x01 and bad \xff\xfe bytes, 'quotes' \"too\"",
                               3, 2, rows3, cols2, odd, caps2, "cap<&>" };
    heatmap(dir, "heatmap_escaped", &h2);
}

static void write_scatters(const char *dir)
{
    static const char *const groups[7] = { "random", "m = 1", "n = 1", "k = 1", "tiny",
                                           "huge k", "stack" };
    enum { N = 250 };
    struct plot_point pts[N];
    char labels[N][40];
    unsigned long long seed = 7;
    for (int i = 0; i < N; i++) {
        struct plot_point *p = &pts[i];
        p->group = (int)(uniform(&seed) * 7);
        p->x = pow(10, -6 + 10 * uniform(&seed));
        double u = uniform(&seed);
        /* Mostly near cuBLAS, a tail below, and a few far off the scale. */
        p->y = u < 0.04 ? 5 + 60 * uniform(&seed) : u < 0.985 ? 80 + 50 * uniform(&seed)
                                                              : 400 + 5000 * uniform(&seed);
        snprintf(labels[i], sizeof labels[i], "%dx%dx%d", 1 + (int)(uniform(&seed) * 9000),
                 1 + (int)(uniform(&seed) * 9000), 1 + (int)(uniform(&seed) * 9000));
        p->label = labels[i];
    }
    pts[0].x = 1e-6;
    pts[1].x = 1e4;
    pts[2].y = -12;
    /* Three lowest points close together: their labels must not overlap. */
    pts[3].x = 0.010, pts[3].y = 3.0;
    pts[4].x = 0.012, pts[4].y = 3.6;
    pts[5].x = 0.011, pts[5].y = 2.6;
    struct plot_scatter s = {
        "gemmcli bench --sweep: mul f32 on NVIDIA H200",
        "2026-11-22; % of cuBLAS SGEMM's speed at each shape, measured in the same run",
        NULL, "% of cuBLAS", "worst 5%  p10 84%  median 104%  (250 shapes)",
        N, 7, pts, groups,
    };
    scatter(dir, "scatter_sweep", &s);

    struct plot_point odd[] = {
        { NAN, 50, 0, "x nan" },    { INFINITY, 50, 0, "x inf" },  { -1, 50, 0, "x < 0" },
        { 0, 50, 0, "x 0" },        { -0.0, 50, 0, "x -0" },       { 1, NAN, 0, "y nan" },
        { 1, INFINITY, 0, "y inf" }, { 1, -INFINITY, 1, "y -inf" }, { 2, 97, 5, "group 5" },
        { 3, 97, -1, "group -1" },  { 1e-3, 95.25, 1, "1x1x500" },
    };
    static const char *const two[2] = { "random", "m = 1" };
    struct plot_scatter s2 = { "one point", NULL, NULL, NULL, NULL,
                               (int)(sizeof odd / sizeof odd[0]), 2, odd, two };
    scatter(dir, "scatter_sparse", &s2);

    static const char *const esc[8] = { "a<b", "c&d", "\"e\" 'f' >", "d", "e", "f", "g", "h" };
    struct plot_point e[4] = { { 1, 50, 0, "<&>" }, { 10, 60, 1, "x&y" },
                               { 100, 70, 2, "'q'" }, { 1000, 110, 2, NULL } };
    struct plot_scatter s3 = { "R&D <sweep>", "\"subtitle\" & 'more'", "size <GFLOP>",
                               "% & more", "a<b & c>d", 4, 8, e, esc };
    scatter(dir, "scatter_escaped", &s3);
}

/* What plot.c must refuse, and a full disk. */
static void refusals(void)
{
    FILE *null = fopen("/dev/null", "w");
    CHECK(null != NULL, "open /dev/null");
    if (null) {
        const char *g[9] = { "a", "b", "c", "d", "e", "f", "g", "h", "i" };
        struct plot_point p = { 1, 100, 8, "x" };
        struct plot_scatter s = { "t", NULL, NULL, NULL, NULL, 1, 9, &p, g };
        CHECK(plot_scatter(null, &s) == -1, "nine groups accepted");
        s.n_groups = 0;
        CHECK(plot_scatter(null, &s) == -1, "no groups accepted");
        s.n_groups = 8;
        s.n_points = -1;
        CHECK(plot_scatter(null, &s) == -1, "a negative point count accepted");
        struct plot_heatmap h = { "t", NULL, -1, 1, g, g, NULL, NULL, NULL };
        CHECK(plot_heatmap(null, &h) == -1, "a negative row count accepted");
        fclose(null);
    }
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        double v = 100;
        const char *l[1] = { "x" };
        struct plot_heatmap h = { "t", NULL, 1, 1, l, l, &v, NULL, NULL };
        CHECK(plot_heatmap(full, &h) == -1, "a write error went unreported");
        fclose(full);
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/out/plots";
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
        return 2;
    }
    write_heatmaps(dir);
    write_scatters(dir);
    refusals();
    if (failures)
        fprintf(stderr, "test_plot: %d checks failed\n", failures);
    else
        printf("test_plot: 6 pictures written to %s\n", dir);
    return failures != 0;
}
