#include "src/bench/plot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { MARGIN = 20, FS = 12, FS_SMALL = 11 };

/* ---- text ---- */

/* Advance width in em of one byte of UTF-8 text, from DejaVu Sans's
 * metrics grouped coarsely and rounded up; a code point beyond ASCII
 * counts once, at its lead byte. */
static double char_em(unsigned char c)
{
    if (c >= 0x80)
        return (c & 0xc0) == 0x80 ? 0 : 0.8;
    if (strchr("il.,:;'|!", c))
        return 0.3;
    if (strchr("frtj()[] -/\"", c))
        return 0.42;
    if (strchr("mwMW%", c))
        return 1.0;
    if (strchr("=<>+~#&", c))
        return 0.84;
    if (c >= 'A' && c <= 'Z')
        return 0.76;
    if (c >= '0' && c <= '9')
        return 0.64;
    return 0.62;
}

/* Estimated width in pixels of s at font size `size`. */
static double text_px(const char *s, double size)
{
    double em = 0;
    for (; s && *s; s++)
        em += char_em((unsigned char)*s);
    return em * size;
}

/* Length of the well-formed UTF-8 sequence at s holding a character XML
 * allows, or 0. */
static int utf8_ok(const unsigned char *s)
{
    int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (!n || s[0] > 0xf4)
        return 0;
    uint32_t cp = s[0] & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
        cp == 0xffff)
        return 0;
    return n;
}

/* Writes s as XML character data or attribute text: markup characters
 * escaped, control characters as spaces, bytes that are not UTF-8 as '?'
 * (any of them would make the file unreadable). */
static void put_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        int n;
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fputc(' ', f);
            else if (*p < 0x80)
                fputc(*p, f);
            else if ((n = utf8_ok(p))) {
                fwrite(p, 1, (size_t)n, f);
                p += n;
                continue;
            } else
                fputc('?', f);
        }
        p++;
    }
}

/* <text x y attrs>s</text>; attrs is fixed SVG, never caller text. */
static void text_at(FILE *f, double x, double y, const char *attrs, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", x, y, *attrs ? " " : "", attrs);
    put_text(f, s);
    fputs("</text>\n", f);
}

/* A percentage for a tooltip, readable whatever its size. */
static void put_pct(FILE *f, double v)
{
    fprintf(f, fabs(v) < 1e6 ? "%.1f%%" : "%.3g%%", v);
}

/* xml:space="preserve": text keeps its spaces as written (a summary's
 * double spaces, the space before a legend entry's count). */
static void svg_begin(FILE *f, double w, double h)
{
    w = ceil(w);
    h = ceil(h);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
            "font-size=\"%d\" xml:space=\"preserve\">\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
            w, h, w, h, FS, w, h);
}

static int svg_end(FILE *f)
{
    fputs("</svg>\n", f);
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

static double header_width(const char *title, const char *subtitle)
{
    return fmax(text_px(title, 18) * 1.1, text_px(subtitle, 13));
}

/* Where the content below the title and subtitle starts. */
static double header_bottom(const char *subtitle)
{
    return MARGIN + 16 + (subtitle && *subtitle ? 22 : 0) + 14;
}

/* Title and subtitle at the top left. */
static void header(FILE *f, const char *title, const char *subtitle)
{
    text_at(f, MARGIN, MARGIN + 16, "font-size=\"18\" font-weight=\"bold\"", title);
    if (subtitle && *subtitle)
        text_at(f, MARGIN, MARGIN + 38, "font-size=\"13\" fill=\"#444\"", subtitle);
}

/* ---- heatmap ---- */

enum { CELL_H = 24, CELL_W_MIN = 48, FLAT_MAX = 84, BAR_PX_PER_PCT = 2 };
#define HEAT_MAX 200.0
#define NOT_RUN "#e8e8e8"
#define SIN45 0.70710678

/* The colour scale.  Two stops at one percentage make a step: below 90%
 * reds deepen as the kernel falls behind, 90% to 100% is a pale green and
 * from 100% on the green deepens up to HEAT_MAX. */
static const struct heat_stop { double pct; unsigned rgb; } heat_stops[] = {
    {   0, 0x5c0011 }, {  50, 0xb2182b }, {  75, 0xe8602c }, {  90, 0xfdd35a },
    {  90, 0xdff2bf }, { 100, 0xb8e08f },
    { 100, 0x6abf69 }, { 150, 0x2b9348 }, { 200, 0x00531f },
};
#define N_HEAT_STOPS (sizeof heat_stops / sizeof heat_stops[0])

static unsigned heat_colour(double pct)
{
    if (!(pct > 0))
        return heat_stops[0].rgb;
    if (pct >= HEAT_MAX)
        return heat_stops[N_HEAT_STOPS - 1].rgb;
    size_t i = 1;
    while (heat_stops[i].pct <= pct)
        i++;
    const struct heat_stop *a = &heat_stops[i - 1], *b = &heat_stops[i];
    double t = (pct - a->pct) / (b->pct - a->pct);
    unsigned rgb = 0;
    for (int shift = 16; shift >= 0; shift -= 8) {
        double ca = (a->rgb >> shift) & 0xff, cb = (b->rgb >> shift) & 0xff;
        rgb |= (unsigned)lround(ca + t * (cb - ca)) << shift;
    }
    return rgb;
}

/* Whether white text contrasts better than black on rgb (WCAG's relative
 * luminance and contrast ratio).  One of them always reaches 4.58:1. */
static int wants_white_text(unsigned rgb)
{
    double l = 0;
    static const double weight[3] = { 0.2126, 0.7152, 0.0722 };
    for (int i = 0; i < 3; i++) {
        double c = ((rgb >> (16 - 8 * i)) & 0xff) / 255.0;
        l += weight[i] * (c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
    }
    return 1.05 / (l + 0.05) > (l + 0.05) / 0.05;
}

/* The number a cell shows: the percentage rounded half away from zero. */
static void cell_text(char *buf, size_t n, double v)
{
    double r = round(v);
    if (r > 9999)
        snprintf(buf, n, ">9999");
    else if (r < -9999)
        snprintf(buf, n, "<-9999");
    else
        snprintf(buf, n, "%.0f", r == 0 ? 0.0 : r);
}

static void heat_legend(FILE *f, double x, double y)
{
    double w = HEAT_MAX * BAR_PX_PER_PCT;
    fputs("<defs><linearGradient id=\"heat-scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">\n", f);
    for (size_t i = 0; i < N_HEAT_STOPS; i++)
        fprintf(f, "<stop offset=\"%.4f\" stop-color=\"#%06x\"/>\n", heat_stops[i].pct / HEAT_MAX,
                heat_stops[i].rgb);
    fputs("</linearGradient></defs>\n", f);
    fprintf(f, "<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
            "fill=\"url(#heat-scale)\" stroke=\"#999\" stroke-width=\"0.5\"/>\n", x, y, w);
    /* 90 and 100 sit close: their labels lean away from each other. */
    static const struct { int pct; const char *text, *anchor; } ticks[] = {
        { 0, "0%", "middle" },    { 50, "50%", "middle" },   { 90, "90%", "end" },
        { 100, "100%", "start" }, { 150, "150%", "middle" }, { 200, "200%+", "end" },
    };
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        double tx = x + ticks[i].pct * BAR_PX_PER_PCT;
        double lx = tx + (ticks[i].anchor[0] == 'e' ? 2 : ticks[i].anchor[0] == 's' ? -2 : 0);
        char attrs[64];
        snprintf(attrs, sizeof attrs, "font-size=\"%d\" text-anchor=\"%s\"", FS_SMALL,
                 ticks[i].anchor);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n",
                tx, tx, y + 12, y + 16);
        text_at(f, lx, y + 28, attrs, ticks[i].text);
    }
    double sx = x + w + 24;
    fprintf(f, "<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"22\" height=\"12\" "
            "fill=\"" NOT_RUN "\" stroke=\"#999\" stroke-width=\"0.5\"/>\n", sx, y);
    text_at(f, sx + 11, y + 10, "font-size=\"11\" text-anchor=\"middle\" fill=\"#777\"",
            "\xe2\x80\x93");
    text_at(f, sx + 28, y + 10, "font-size=\"11\"", "not run");
}

static double heat_legend_width(void)
{
    return HEAT_MAX * BAR_PX_PER_PCT + 24 + 28 + text_px("not run", FS_SMALL);
}

int plot_heatmap(FILE *f, const struct plot_heatmap *h)
{
    int nr = h->n_rows, nc = h->n_cols;
    if (nr < 0 || nc < 0)
        return -1;
    int has_captions = h->col_captions != NULL && nc > 0;
    double row_w = 0, col_w = 0, cap_w = 0, num_w = 0;
    for (int r = 0; r < nr; r++)
        row_w = fmax(row_w, text_px(h->row_labels[r], FS));
    if (has_captions)
        row_w = fmax(row_w, text_px(h->caption_name, FS_SMALL));
    for (int c = 0; c < nc; c++) {
        col_w = fmax(col_w, text_px(h->col_labels[c], FS));
        if (has_captions)
            cap_w = fmax(cap_w, text_px(h->col_captions[c], FS_SMALL));
    }
    for (int i = 0; i < nr * nc; i++) {
        char buf[16];
        if (isfinite(h->values[i])) {
            cell_text(buf, sizeof buf, h->values[i]);
            num_w = fmax(num_w, text_px(buf, FS));
        }
    }
    double cw = fmax(CELL_W_MIN, fmax(cap_w, num_w) + 10);
    /* Labels lie flat while they fit a modest column; longer ones are
     * rotated, rather than every column widened for the longest. */
    int rotated = col_w + 10 > fmax(cw, FLAT_MAX);
    if (!rotated)
        cw = fmax(cw, col_w + 10);

    double gx = MARGIN + row_w + 10;
    double ascent = 0.75 * FS, descent = 0.25 * FS;
    double right = gx + nc * cw;
    if (rotated)
        for (int c = 0; c < nc; c++)
            right = fmax(right, gx + c * cw + cw / 2 - 3 +
                                    (text_px(h->col_labels[c], FS) + descent) * SIN45);
    double width = fmax(fmax(right, gx + heat_legend_width()),
                        MARGIN + header_width(h->title, h->subtitle)) + MARGIN;
    double label_h = rotated ? (col_w + ascent) * SIN45 + 6 : FS + 8;
    double top = header_bottom(h->subtitle);
    double label_base = top + label_h;
    double gy = label_base + 6 + (has_captions ? 16 : 0);
    double grid_h = (nr && nc ? nr : 1) * CELL_H;
    double bar_y = gy + grid_h + 18;
    double height = bar_y + 28 + 4 + MARGIN;

    svg_begin(f, width, height);
    header(f, h->title, h->subtitle);

    for (int c = 0; c < nc; c++) {
        double cx = gx + c * cw + cw / 2;
        if (rotated) {
            fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-45)\">", cx - 3,
                    label_base);
            put_text(f, h->col_labels[c]);
            fputs("</text>\n", f);
        } else
            text_at(f, cx, label_base, "text-anchor=\"middle\"", h->col_labels[c]);
        if (has_captions && h->col_captions[c])
            text_at(f, cx, gy - 6, "font-size=\"11\" text-anchor=\"middle\" fill=\"#555\"",
                    h->col_captions[c]);
    }
    if (has_captions && h->caption_name)
        text_at(f, gx - 8, gy - 6, "font-size=\"11\" text-anchor=\"end\" fill=\"#555\"",
                h->caption_name);

    for (int r = 0; r < nr; r++) {
        double y = gy + r * CELL_H;
        text_at(f, gx - 8, y + CELL_H / 2 + 4, "text-anchor=\"end\"", h->row_labels[r]);
        for (int c = 0; c < nc; c++) {
            double v = h->values[r * nc + c], x = gx + c * cw;
            int run = isfinite(v);
            /* Coloured by the number shown, so that a "90" is never orange
             * and a "100" never pale. */
            unsigned rgb = run ? heat_colour(round(v)) : 0;
            char fill[8], num[16];
            snprintf(fill, sizeof fill, "#%06x", rgb);
            if (run)
                cell_text(num, sizeof num, v);
            else
                snprintf(num, sizeof num, "\xe2\x80\x93");
            fputs("<g class=\"cell\"><title>", f);
            put_text(f, h->row_labels[r]);
            fputs(", ", f);
            put_text(f, h->col_labels[c]);
            fputs(": ", f);
            if (run)
                put_pct(f, v);
            else
                fputs("not run", f);
            fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                    "fill=\"%s\"/>", x + 1, y + 1, cw - 2, CELL_H - 2, run ? fill : NOT_RUN);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\">",
                    x + cw / 2, y + CELL_H / 2 + 4.5,
                    !run ? "#777" : wants_white_text(rgb) ? "white" : "black");
            put_text(f, num);
            fputs("</text></g>\n", f);
        }
    }
    if (!nr || !nc)
        text_at(f, gx, gy + 16, "fill=\"#777\"", "no results");
    heat_legend(f, gx, bar_y);
    return svg_end(f);
}

/* ---- scatter ---- */

enum { PLOT_W = 720, PLOT_H = 440, X_PAD = 12, N_LOW = 3 };
#define Y_CEILING 300.0     /* a point above this is off the scale */

/* Okabe and Ito's palette, told apart with most colour vision deficits;
 * its yellow, faint on white, gives way to a dark purple and a grey. */
static const char *const group_colours[PLOT_MAX_GROUPS] = {
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#5e3c99", "#555555",
};

static int point_ok(const struct plot_scatter *s, const struct plot_point *p)
{
    return isfinite(p->x) && p->x > 0 && isfinite(p->y) && p->group >= 0 &&
           p->group < s->n_groups;
}

struct frame {
    double x0, y0;          /* the plot's top left corner */
    int d0, d1;             /* decades shown: 10^d0 .. 10^d1 */
    double ymax;
};

static double frame_x(const struct frame *fr, double x)
{
    return fr->x0 + X_PAD + (log10(x) - fr->d0) / (fr->d1 - fr->d0) * (PLOT_W - 2 * X_PAD);
}

static double frame_y(const struct frame *fr, double y)
{
    return fr->y0 + PLOT_H - fmin(fmax(y, 0), fr->ymax) / fr->ymax * PLOT_H;
}

static void put_decade(FILE *f, double x, double y, int d)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y);
    if (d == 0 || d == 1)
        fputs(d ? "10" : "1", f);
    else    /* 10 with a raised exponent; a true minus sign */
        fprintf(f, "10<tspan dy=\"-5\" font-size=\"9\">%s%d</tspan>", d < 0 ? "\xe2\x88\x92" : "",
                d < 0 ? -d : d);
    fputs("</text>\n", f);
}

static void axes(FILE *f, const struct plot_scatter *s, const struct frame *fr)
{
    double x0 = fr->x0, y0 = fr->y0, x1 = x0 + PLOT_W, y1 = y0 + PLOT_H;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#fbfbfb\" "
            "stroke=\"#888\"/>\n", x0, y0, PLOT_W, PLOT_H);
    double step = fr->ymax > 200 ? 50 : 20;
    for (double y = 0; y <= fr->ymax + step / 2; y += step) {
        double py = frame_y(fr, y);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                x0, x1, py, py);
        fprintf(f, "<text class=\"y-tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
                x0 - 6, py + 4, y);
    }
    int decades = fr->d1 - fr->d0, every = (decades + 11) / 12;
    for (int d = fr->d0; d <= fr->d1; d++) {
        double px = frame_x(fr, pow(10, d));
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                px, px, y0, y1);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n",
                px, px, y1, y1 + 5);
        if ((d - fr->d0) % every == 0)
            put_decade(f, px, y1 + 19, d);
        for (int m = 2; d < fr->d1 && decades <= 12 && m <= 9; m++) {
            double mx = frame_x(fr, m * pow(10, d));
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                    mx, mx, y1, y1 + 3);
        }
    }
    text_at(f, x0 + PLOT_W / 2.0, y1 + 40, "text-anchor=\"middle\"",
            s->x_label ? s->x_label : "GFLOP per product");
    fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\">",
            (double)MARGIN + 10, y0 + PLOT_H / 2.0);
    put_text(f, s->y_label ? s->y_label : "% of the reference");
    fputs("</text>\n", f);

    /* The lines a reader measures against, labelled outside the plot. */
    static const struct { double pct; const char *text, *stroke, *dash; } refs[] = {
        { 100, "100%", "#333", "6 4" }, { 90, "90%", "#888", "3 3" },
    };
    for (int i = 0; i < 2; i++) {
        double py = frame_y(fr, refs[i].pct);
        fprintf(f, "<line class=\"ref-line\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-width=\"1.2\" stroke-dasharray=\"%s\"/>\n", x0, x1, py, py,
                refs[i].stroke, refs[i].dash);
        char attrs[48];
        snprintf(attrs, sizeof attrs, "font-size=\"11\" fill=\"%s\"", refs[i].stroke);
        text_at(f, x1 + 5, py + 4, attrs, refs[i].text);
    }
}

/* A triangle on the edge for a point off the scale: up at the top, down
 * at the bottom. */
static void edge_marker(FILE *f, double px, double py, int up, const char *colour)
{
    double base = up ? py + 9 : py - 9;
    fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"#222\" "
            "stroke-width=\"0.8\"", px, py, px - 5, base, px + 5, base, colour);
}

static void point_text(char *buf, size_t n, const struct plot_point *p)
{
    char y[32];
    snprintf(y, sizeof y, fabs(p->y) < 1e6 ? "%.0f%%" : "%.3g%%", p->y);
    if (p->label && *p->label)
        snprintf(buf, n, "%s  %s", p->label, y);
    else
        snprintf(buf, n, "%.3g GFLOP  %s", p->x, y);
}

/* Labels the lowest points, each beside its point, moved down (or up)
 * past the labels already placed, with a leader when moved. */
static void low_labels(FILE *f, const struct plot_scatter *s, const struct frame *fr)
{
    int low[N_LOW], n_low = 0;
    for (int i = 0; i < s->n_points; i++) {
        if (!point_ok(s, &s->points[i]))
            continue;
        int k = n_low;
        while (k > 0 && s->points[low[k - 1]].y > s->points[i].y)
            k--;
        if (k == N_LOW)
            continue;
        int last = n_low < N_LOW ? n_low++ : N_LOW - 1;
        for (int j = last; j > k; j--)
            low[j] = low[j - 1];
        low[k] = i;
    }
    /* Top to bottom on the page, so that pushing down keeps their order. */
    for (int a = 1; a < n_low; a++)
        for (int b = a; b > 0 && frame_y(fr, s->points[low[b]].y) <
                                     frame_y(fr, s->points[low[b - 1]].y); b--) {
            int t = low[b];
            low[b] = low[b - 1];
            low[b - 1] = t;
        }
    double box_y[N_LOW], box_x[N_LOW], box_w[N_LOW], bh = 16;
    for (int k = 0; k < n_low; k++) {
        const struct plot_point *p = &s->points[low[k]];
        char text[160];
        point_text(text, sizeof text, p);
        double px = frame_x(fr, p->x), py = frame_y(fr, p->y);
        double w = text_px(text, FS_SMALL) + 8;
        double x = px + 9 + w > fr->x0 + PLOT_W ? px - 9 - w : px + 9;
        x = fmax(x, fr->x0 + 1);
        double y = fmin(fmax(py - bh / 2, fr->y0 + 1), fr->y0 + PLOT_H - bh - 1);
        for (int j = 0; j < k; j++)
            if (x < box_x[j] + box_w[j] && box_x[j] < x + w && y < box_y[j] + bh + 2 &&
                box_y[j] < y + bh + 2)
                y = box_y[j] + bh + 2;
        if (y > fr->y0 + PLOT_H - bh - 1)   /* no room below: above them all */
            for (int j = 0; j < k; j++)
                y = fmin(y, box_y[j] - bh - 2);
        box_x[k] = x;
        box_y[k] = y;
        box_w[k] = w;
        if (fabs(y + bh / 2 - py) > 3)
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#666\" "
                    "stroke-width=\"0.8\"/>\n", px, x < px ? x + w : x, py, y + bh / 2);
        fprintf(f, "<g class=\"low-label\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                "height=\"%.0f\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#999\" "
                "stroke-width=\"0.5\" rx=\"2\"/>", x, y, w, bh);
        text_at(f, x + 4, y + 12, "font-size=\"11\"", text);
        fputs("</g>\n", f);
    }
}

int plot_scatter(FILE *f, const struct plot_scatter *s)
{
    if (s->n_points < 0 || s->n_groups < 1 || s->n_groups > PLOT_MAX_GROUPS)
        return -1;
    int count[PLOT_MAX_GROUPS] = { 0 }, above = 0, below = 0;
    double lo = INFINITY, hi = -INFINITY, ytop = 0;
    for (int i = 0; i < s->n_points; i++) {
        const struct plot_point *p = &s->points[i];
        if (!point_ok(s, p))
            continue;
        double lx = log10(p->x);
        lo = fmin(lo, lx);
        hi = fmax(hi, lx);
        if (p->y <= Y_CEILING)
            ytop = fmax(ytop, p->y);
        above += p->y > Y_CEILING;
        below += p->y < 0;
        count[p->group]++;
    }
    struct frame fr;
    /* At least two decades, the data kept off the edges where it can be. */
    fr.d0 = isfinite(lo) ? (int)floor(lo) : 0;
    fr.d1 = isfinite(hi) ? (int)ceil(hi) : 2;
    if (fr.d1 <= fr.d0)
        fr.d1 = fr.d0 + 1;
    if (fr.d1 - fr.d0 < 2) {
        if (lo - fr.d0 < fr.d1 - hi)
            fr.d0--;
        else
            fr.d1++;
    }
    double ystep = ytop > 200 ? 50 : 20;
    fr.ymax = fmax(120, ceil(ytop / ystep) * ystep);

    double legend_w = 0;
    char entry[PLOT_MAX_GROUPS][32];
    for (int g = 0; g < s->n_groups; g++) {
        snprintf(entry[g], sizeof entry[g], " (%d)", count[g]);
        legend_w = fmax(legend_w, text_px(s->group_names[g], FS) + text_px(entry[g], FS));
    }
    char off_scale[2][48];
    snprintf(off_scale[0], sizeof off_scale[0], "above %.0f%% (%d)", fr.ymax, above);
    snprintf(off_scale[1], sizeof off_scale[1], "below 0%% (%d)", below);
    legend_w = fmax(legend_w, text_px(off_scale[0], FS)) + 18;

    double summary_w = s->summary ? text_px(s->summary, 13) * 1.1 : 0;
    fr.x0 = MARGIN + 58;
    double legend_x = fr.x0 + PLOT_W + 48;
    double top = header_bottom(s->subtitle);
    fr.y0 = top + (s->summary ? 24 : 8);
    double summary_right = fmax(fr.x0 + PLOT_W, fr.x0 + summary_w);
    double width = fmax(fmax(legend_x + legend_w, summary_right),
                        MARGIN + header_width(s->title, s->subtitle)) + MARGIN;
    double height = fr.y0 + PLOT_H + 48 + MARGIN;

    svg_begin(f, width, height);
    header(f, s->title, s->subtitle);
    if (s->summary)
        text_at(f, summary_right, fr.y0 - 10, "font-size=\"13\" font-weight=\"bold\" "
                "text-anchor=\"end\"", s->summary);
    axes(f, s, &fr);

    for (int i = 0; i < s->n_points; i++) {
        const struct plot_point *p = &s->points[i];
        if (!point_ok(s, p))
            continue;
        const char *colour = group_colours[p->group];
        double px = frame_x(&fr, p->x), py = frame_y(&fr, p->y);
        if (p->y > fr.ymax || p->y < 0)
            edge_marker(f, px, py, p->y > 0, colour);
        else
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" "
                    "fill-opacity=\"0.8\" stroke=\"white\" stroke-width=\"0.6\"", px, py, colour);
        fputs(" class=\"point\"><title>", f);
        put_text(f, p->label);
        fprintf(f, "%s%.3g GFLOP, ", p->label && *p->label ? ": " : "", p->x);
        put_pct(f, p->y);
        fputs("</title></", f);
        fputs(p->y > fr.ymax || p->y < 0 ? "polygon>\n" : "circle>\n", f);
    }
    low_labels(f, s, &fr);

    double ly = fr.y0 + 12;
    for (int g = 0; g < s->n_groups; g++, ly += 22) {
        fprintf(f, "<circle class=\"legend-swatch\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
                "fill=\"%s\"/>\n", legend_x + 5, ly - 4, group_colours[g]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", legend_x + 16, ly);
        put_text(f, s->group_names[g]);
        fprintf(f, "<tspan fill=\"#777\">%s</tspan></text>\n", entry[g]);
    }
    for (int k = 0; k < 2; k++)
        if (k ? below : above) {
            ly += 6;
            edge_marker(f, legend_x + 5, ly - (k ? 0 : 9), !k, "white");
            fputs("/>\n", f);
            text_at(f, legend_x + 16, ly, "fill=\"#555\"", off_scale[k]);
            ly += 22;
        }
    return svg_end(f);
}
