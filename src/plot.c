#include "plot.h"

#include <math.h>

enum { WIDTH = 960, HEIGHT = 560, LEFT = 70, RIGHT = 230, TOP = 50, BOTTOM = 100 };

/* Enough distinct colours for a ladder; they repeat with a dash pattern. */
static const char *const colours[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000",
};
#define N_COLOURS (sizeof colours / sizeof colours[0])

static void text_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

/* A round step for about five grid lines up to `max`. */
static double nice_step(double max)
{
    double raw = max / 5, mag = pow(10, floor(log10(raw)));
    double r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

int plot_svg(FILE *f, const struct plot *p)
{
    double ymax = 0;
    for (int i = 0; i < p->n_series * p->n_x; i++)
        if (isfinite(p->values[i]) && p->values[i] > ymax)
            ymax = p->values[i];
    if (ymax <= 0)
        ymax = 1;
    double step = nice_step(ymax);
    ymax = ceil(ymax / step) * step;
    double pw = WIDTH - LEFT - RIGHT, ph = HEIGHT - TOP - BOTTOM;
    double dx = p->n_x > 1 ? pw / (p->n_x - 1) : 0;

    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"16\">", LEFT);
    text_escaped(f, p->title);
    fputs("</text>\n", f);
    for (double y = 0; y <= ymax + step / 2; y += step) {
        double py = TOP + ph - y / ymax * ph;
        fprintf(f, "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                LEFT, LEFT + pw, py, py);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", LEFT - 6,
                py + 4, y);
    }
    fprintf(f, "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">",
            TOP + ph / 2);
    text_escaped(f, p->y_label);
    fputs("</text>\n", f);
    for (int x = 0; x < p->n_x; x++) {
        /* Slanted, so that long shape labels do not run into each other. */
        fprintf(f, "<text text-anchor=\"end\" transform=\"translate(%.1f,%.1f) rotate(-35)\">",
                LEFT + x * dx + 4, TOP + ph + 16);
        text_escaped(f, p->x_labels[x]);
        fputs("</text>\n", f);
    }
    for (int s = 0; s < p->n_series; s++) {
        const char *colour = colours[s % N_COLOURS];
        const char *dash = (s / N_COLOURS) % 2 ? " stroke-dasharray=\"6 3\"" : "";
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                colour, dash);
        for (int x = 0; x < p->n_x; x++) {
            double v = p->values[s * p->n_x + x];
            if (isfinite(v))
                fprintf(f, "%.1f,%.1f ", LEFT + x * dx, TOP + ph - v / ymax * ph);
        }
        fputs("\"/>\n", f);
        for (int x = 0; x < p->n_x; x++) {
            double v = p->values[s * p->n_x + x];
            if (isfinite(v))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                        LEFT + x * dx, TOP + ph - v / ymax * ph, colour);
        }
        double ly = TOP + 10 + s * 17;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n", LEFT + pw + 15, LEFT + pw + 40, ly, ly, colour, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", LEFT + pw + 46, ly + 4);
        text_escaped(f, p->series_names[s]);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
