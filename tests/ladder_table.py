#!/usr/bin/env python3
"""Turns `gemmcli bench --bench-out PREFIX` CSV files into the README's
ladder tables (Markdown): one row per kernel in ladder order, one column per
shape, each cell the rate and its share of the reference.

usage: ladder_table.py PREFIX-mul.csv [PREFIX-transpose.csv]
"""
import csv
import sys


def table(path):
    rows = list(csv.DictReader(open(path)))
    if not rows:
        return ""
    op, device, date = rows[0]["op"], rows[0]["device"], rows[0]["date"]
    unit = "tflops" if op == "mul" else "gbps"
    shapes, kernels, cell = [], [], {}
    for r in rows:
        if r["shape"] not in shapes:
            shapes.append(r["shape"])
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
        cell[r["kernel"], r["shape"]] = (float(r[unit]), float(r["pct_of_reference"]))
    ref = "cuBLAS" if op == "mul" else "cuBLAS geam"
    what = "TFLOP/s" if op == "mul" else "GB/s read + written"
    out = [f"{op} on {device}, {date}: {what} (% of {ref}), `gemmcli bench`", "",
           "| kernel | " + " | ".join(shapes) + " |",
           "|---|" + "---|" * len(shapes)]
    for k in kernels:
        cells = []
        for s in shapes:
            if (k, s) in cell:
                v, pct = cell[k, s]
                cells.append(f"{v:.2f} ({pct:.0f}%)" if op == "mul" else f"{v:.0f} ({pct:.0f}%)")
            else:
                cells.append("-")
        out.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print("\n".join(table(p) for p in sys.argv[1:]))
