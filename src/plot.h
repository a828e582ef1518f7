/* A small SVG line chart: one line per series over a categorical x axis,
 * like the source documents' performance charts. */
#ifndef GC_PLOT_H
#define GC_PLOT_H

#include <stdio.h>

struct plot {
    const char *title, *y_label;
    int n_x, n_series;
    const char *const *x_labels;      /* n_x */
    const char *const *series_names;  /* n_series */
    const double *values;             /* n_series x n_x, row-major; NaN: no point */
};

/* Writes the chart; returns 0 or -1 on a write error. */
int plot_svg(FILE *f, const struct plot *p);

#endif
