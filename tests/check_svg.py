#!/usr/bin/env python3
"""Checks the pictures tests/test_plot.c wrote: python3 tests/check_svg.py DIR

For each DIR/NAME.svg: well-formed XML with an <svg> root of numeric width
and height; every drawn shape and (estimated) text extent on the canvas; no
NaN or infinity in any text or attribute; what DIR/NAME.expect says the
picture holds (a heatmap's cells and their numbers, a scatter's points,
labels and legend).  With rsvg-convert installed, each also renders to
DIR/NAME.png."""
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
DASH = "\u2013"
NOT_RUN = "#e8e8e8"
NON_FINITE = re.compile(r"(?<![a-z])(nan|inf|infinity)(?![a-z])", re.I)
NUMERIC = {"x", "y", "width", "height", "cx", "cy", "r", "x1", "x2", "y1", "y2", "dy",
           "font-size", "offset", "stroke-width", "fill-opacity", "rx"}

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
    return cond


def tag(el):
    return el.tag[len(SVG):] if el.tag.startswith(SVG) else el.tag


def matmul(a, b):
    """Affine matrices as (a, b, c, d, e, f), SVG's order."""
    return (a[0] * b[0] + a[2] * b[1], a[1] * b[0] + a[3] * b[1],
            a[0] * b[2] + a[2] * b[3], a[1] * b[2] + a[3] * b[3],
            a[0] * b[4] + a[2] * b[5] + a[4], a[1] * b[4] + a[3] * b[5] + a[5])


def parse_transform(text):
    m = (1, 0, 0, 1, 0, 0)
    for name, args in re.findall(r"(\w+)\s*\(([^)]*)\)", text or ""):
        v = [float(a) for a in re.split(r"[\s,]+", args.strip()) if a]
        if name == "translate":
            t = (1, 0, 0, 1, v[0], v[1] if len(v) > 1 else 0)
        elif name == "rotate":
            c, s = math.cos(math.radians(v[0])), math.sin(math.radians(v[0]))
            t = (c, s, -s, c, 0, 0)
            if len(v) == 3:
                t = matmul(matmul((1, 0, 0, 1, v[1], v[2]), t), (1, 0, 0, 1, -v[1], -v[2]))
        elif name == "scale":
            t = (v[0], 0, 0, v[1] if len(v) > 1 else v[0], 0, 0)
        else:
            raise ValueError("transform %s" % name)
        m = matmul(m, t)
    return m


def apply(m, x, y):
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def num(el, name, default=0.0):
    v = el.get(name)
    return default if v is None else float(v)


def extent(el, size, anchor):
    """Points a drawn element covers, before its transform.  Text is
    estimated at half an em a character, narrower than any sans face, so
    that only real overflow fails."""
    t = tag(el)
    if t == "rect":
        x, y, w, h = num(el, "x"), num(el, "y"), num(el, "width"), num(el, "height")
        return [(x, y), (x + w, y), (x, y + h), (x + w, y + h)]
    if t == "line":
        return [(num(el, "x1"), num(el, "y1")), (num(el, "x2"), num(el, "y2"))]
    if t == "circle":
        cx, cy, r = num(el, "cx"), num(el, "cy"), num(el, "r")
        return [(cx - r, cy - r), (cx + r, cy + r)]
    if t in ("polygon", "polyline"):
        v = [float(a) for a in re.split(r"[\s,]+", el.get("points").strip())]
        return list(zip(v[0::2], v[1::2]))
    if t == "text":
        s = "".join(el.itertext())
        w = 0.5 * size * len(s)
        x, y = num(el, "x"), num(el, "y")
        x0 = x - (w / 2 if anchor == "middle" else w if anchor == "end" else 0)
        top = y - 0.7 * size
        return [(x0, y), (x0 + w, y), (x0, top), (x0 + w, top)]
    return []


def walk(el, m, size, anchor, width, height, name, texts):
    """Checks that everything drawn lies on the canvas; collects the text
    boxes (corners on the page) in texts."""
    m = matmul(m, parse_transform(el.get("transform")))
    size = float(el.get("font-size", size))
    anchor = el.get("text-anchor", anchor)
    t = tag(el)
    if t in ("title", "defs"):
        return
    corners = [apply(m, x, y) for x, y in extent(el, size, anchor)]
    for px, py in corners:
        if not check(-0.5 <= px <= width + 0.5 and -0.5 <= py <= height + 0.5,
                     "%s: <%s> reaches (%.1f, %.1f), off the %gx%g canvas (%s)"
                     % (name, t, px, py, width, height, "".join(el.itertext())[:40])):
            break
    if t == "text":
        texts.append(("".join(el.itertext()), [corners[i] for i in (0, 1, 3, 2)]))
        return
    for child in el:
        walk(child, m, size, anchor, width, height, name, texts)


def overlap(a, b):
    """Whether two convex polygons overlap by more than a pixel (separating
    axes)."""
    for poly in (a, b):
        for i in range(len(poly)):
            (x1, y1), (x2, y2) = poly[i], poly[(i + 1) % len(poly)]
            nx, ny = y2 - y1, x1 - x2
            norm = math.hypot(nx, ny)
            if norm == 0:
                continue
            pa = [(nx * x + ny * y) / norm for x, y in a]
            pb = [(nx * x + ny * y) / norm for x, y in b]
            if max(pa) < min(pb) + 1 or max(pb) < min(pa) + 1:
                return False
    return True


def no_text_collides(texts, name):
    """No two texts drawn over each other."""
    boxes = []
    for s, poly in texts:
        xs, ys = [x for x, _ in poly], [y for _, y in poly]
        boxes.append((min(xs), max(xs), min(ys), max(ys), s, poly))
    boxes.sort()
    clashes = []
    for i, (x0, x1, y0, y1, s, poly) in enumerate(boxes):
        for bx0, bx1, by0, by1, t, other in boxes[i + 1:]:
            if bx0 > x1:
                break
            if by0 < y1 and y0 < by1 and overlap(poly, other):
                clashes.append("%r over %r" % (s, t))
    check(not clashes, "%s: text drawn over text: %s" % (name, "; ".join(clashes[:5])))


def no_non_finite(root, name):
    for el in root.iter():
        for k, v in el.attrib.items():
            check(not NON_FINITE.search(v), "%s: <%s %s=%r>" % (name, tag(el), k, v))
            if k in NUMERIC and not v.endswith("%"):
                try:
                    ok = math.isfinite(float(v))
                except ValueError:
                    ok = False
                check(ok, "%s: <%s %s=%r> is not a finite number" % (name, tag(el), k, v))
        for s in (el.text, el.tail):
            check(not s or not NON_FINITE.search(s), "%s: text %r" % (name, s))


def rgb(fill):
    if len(fill) == 4:
        fill = "#" + "".join(c * 2 for c in fill[1:])
    return tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5))


def luminance(fill):
    if fill in ("white", "black"):
        fill = "#ffffff" if fill == "white" else "#000000"
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
           for c in rgb(fill)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def cell_text(v):
    r = math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)
    return ">9999" if r > 9999 else "<-9999" if r < -9999 else str(int(r))


def check_heatmap(root, name, rows, cols, values):
    cells = [g for g in root.iter(SVG + "g") if g.get("class") == "cell"]
    if not check(len(cells) == rows * cols,
                 "%s: %d cells, expected %d x %d" % (name, len(cells), rows, cols)):
        return
    drawn = []
    for g in cells:
        rect, text = g.find(SVG + "rect"), g.find(SVG + "text")
        drawn.append((float(rect.get("y")), float(rect.get("x")), rect.get("fill"),
                      "".join(text.itertext()), text.get("fill")))
    drawn.sort()
    for i, (y, x, fill, text, ink) in enumerate(drawn):
        v, where = values[i], "%s: cell %d,%d" % (name, i // cols, i % cols)
        if not math.isfinite(v):
            check(text == DASH and fill == NOT_RUN, "%s: not run, drawn %r on %s"
                  % (where, text, fill))
            continue
        check(text == cell_text(v), "%s: shows %r for %r" % (where, text, v))
        r, g, _ = rgb(fill)
        # Below 90% red to yellow, from 90% on green, judged by the number shown.
        shown = math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)
        check(r > g if shown < 90 else g > r, "%s: %r drawn %s" % (where, v, fill))
        lf, li = luminance(fill), luminance(ink)
        contrast = (max(lf, li) + 0.05) / (min(lf, li) + 0.05)
        check(contrast >= 4.5, "%s: text %s on %s, contrast %.2f" % (where, ink, fill, contrast))


def check_scatter(root, name, points, low, groups):
    def count(cls):
        return [el for el in root.iter() if el.get("class") == cls]
    check(len(count("point")) == points,
          "%s: %d points drawn, expected %d" % (name, len(count("point")), points))
    check(len(count("low-label")) == low,
          "%s: %d lowest points labelled, expected %d" % (name, len(count("low-label")), low))
    ticks = [float("".join(el.itertext())) for el in count("y-tick")]
    check(ticks and min(ticks) == 0 and max(ticks) >= 120,
          "%s: the y axis runs over %s, not 0 to at least 120" % (name, ticks))
    refs = sorted(float(el.get("y1")) for el in count("ref-line"))
    if check(len(refs) == 2, "%s: %d dashed lines, expected 90%% and 100%%" % (name, len(refs))):
        # Linear from 0 at the bottom tick: 90 and 100 where the ticks say.
        ys = {float("".join(el.itertext())): float(el.get("y")) for el in count("y-tick")}
        scale = (ys[0] - ys[max(ys)]) / max(ys)
        for pct, y in zip((100, 90), refs):
            check(abs(ys[0] - pct * scale - (y + 4)) < 0.6,
                  "%s: the %d%% line at y %.1f" % (name, pct, y))
    swatches = [el.get("fill") for el in count("legend-swatch")]
    check(len(swatches) == groups and len(set(swatches)) == groups,
          "%s: legend colours %s for %d groups" % (name, swatches, groups))


def check_file(path, rsvg):
    name = os.path.basename(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        check(False, "%s: not well-formed: %s" % (name, e))
        return
    check(root.tag == SVG + "svg", "%s: root is <%s>" % (name, root.tag))
    try:
        width, height = float(root.get("width")), float(root.get("height"))
    except (TypeError, ValueError):
        check(False, "%s: width %r, height %r" % (name, root.get("width"), root.get("height")))
        return
    check(width > 0 and height > 0, "%s: %gx%g" % (name, width, height))
    no_non_finite(root, name)
    texts = []
    walk(root, (1, 0, 0, 1, 0, 0), 16, "start", width, height, name, texts)
    no_text_collides(texts, name)

    with open(path[:-4] + ".expect") as f:
        head = f.readline().split()
        if head[0] == "heatmap":
            rows, cols = int(head[1]), int(head[2])
            check_heatmap(root, name, rows, cols, [float(line) for line in f])
        else:
            check_scatter(root, name, *map(int, head[1:]))

    if rsvg:
        png = path[:-4] + ".png"
        r = subprocess.run([rsvg, path, "-o", png], capture_output=True, text=True)
        ok = r.returncode == 0 and os.path.getsize(png) > 0
        if ok:
            with open(png, "rb") as f:
                ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
        check(ok, "%s: rsvg-convert failed: %s" % (name, r.stderr.strip()))


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "tests/out/plots"
    files = sorted(glob.glob(os.path.join(directory, "*.svg")))
    if not files:
        print("check_svg: no SVG files in %s" % directory)
        return 1
    rsvg = shutil.which("rsvg-convert")
    if not rsvg:
        print("check_svg: PNG rendering skipped (rsvg-convert not found)")
    for path in files:
        check_file(path, rsvg)
    for what in failures:
        print("FAIL:", what)
    print("check_svg: %d files, %d checks, %d failed%s" % (
        len(files), checks, len(failures), "" if rsvg else " (not rendered)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
