/* The pictures bench writes, as standalone SVG files: a heatmap of kernels
 * against shapes, and a scatter of many shapes against their size.  Both
 * show speed as a percentage of a reference measured in the same run
 * (100 x the reference's time / the kernel's time), on fixed scales, so
 * that two pictures compare at a glance.
 *
 * All text is escaped for XML.  No NaN or infinity reaches the file: a
 * heatmap cell that is not finite is drawn as "not run", and a scatter
 * point that cannot be placed is left out.  The canvas grows with its
 * content (long names, many rows); sizes are estimated from DejaVu Sans,
 * a wide face, so that narrower sans-serif faces fit too. */
#ifndef GC_PLOT_H
#define GC_PLOT_H

#include <stdio.h>

/* Rows are kernels, in the order given (the ladder's); columns are shapes.
 * Each cell shows its integer percentage on a colour from dark red (far
 * below 90) through orange and yellow (towards 90) to light green (90 to
 * 100) and green (100 and above, deeper up to 200); a legend bar shows
 * the scale. */
struct plot_heatmap {
    const char *title, *subtitle;      /* subtitle: what 100% means, device, date */
    int n_rows, n_cols;
    const char *const *row_labels;     /* n_rows */
    const char *const *col_labels;     /* n_cols; rotated when too long to lie flat */
    const double *values;              /* n_rows x n_cols, row-major; not finite: not run */
    /* Optional: one short line under each column label (e.g. the
     * reference's own rate), with caption_name left of that row. */
    const char *const *col_captions;   /* NULL, or n_cols strings (any may be NULL) */
    const char *caption_name;          /* NULL or e.g. "cuBLAS TFLOP/s" */
};

/* Writes the heatmap and flushes f; returns 0, or -1 on a write error or
 * a negative count. */
int plot_heatmap(FILE *f, const struct plot_heatmap *h);

#define PLOT_MAX_GROUPS 8

struct plot_point {
    double x;              /* problem size in GFLOP; drawn on a log axis */
    double y;              /* % of the reference */
    int group;             /* index into group_names */
    const char *label;     /* the shape ("127x129x255"); may be NULL */
};

/* One point per shape: x on a log10 axis with a tick a decade, y linear
 * from 0 to at least 120 (up to 300 when a point is that high; a point
 * above that sits on the top edge as a triangle, one below 0 on the bottom
 * edge).  Dashed lines mark 90% and 100%; the three lowest points carry
 * their label; each group has its own colour and a legend entry beside
 * the plot, with its count.  A point whose x is not finite and positive,
 * whose y is not finite, or whose group is out of range is left out. */
struct plot_scatter {
    const char *title, *subtitle;
    const char *x_label, *y_label;     /* NULL: "GFLOP per product", "% of the reference" */
    const char *summary;               /* NULL or one line, shown above the plot's top
                                          right corner (e.g. "worst 93%  median 104%") */
    int n_points, n_groups;            /* n_groups: 1 .. PLOT_MAX_GROUPS */
    const struct plot_point *points;   /* n_points */
    const char *const *group_names;    /* n_groups */
};

/* Writes the scatter and flushes f; returns 0, or -1 on a write error, a
 * negative count or more than PLOT_MAX_GROUPS groups. */
int plot_scatter(FILE *f, const struct plot_scatter *s);

#endif
