#!/usr/bin/env python3
"""Accuracy study of the float arithmetics, run by `make check-gpu`.

For n in SIZES and each input distribution below, gemmcli multiplies two
n x n matrices with --verify --json and this script collects the errors it
reports against its reference (an FP64 product of the operands as read
for float32 data; a double-double product for float64 data), and the
errors of the cuBLAS routine it times beside the kernel:

  float32 data:  cuBLAS SGEMM (FP32), gemmcli's own FP32 (--compute fp32),
                 tf32x3, ozaki32 (FP32-class from int8 products), tf32 (and
                 cuBLAS in TF32 mode beside it)
  float64 data:  cuBLAS DGEMM, gemmcli's own FP64 (--compute fp64) and
                 FP64 from int8 products (--compute ozaki: i8_ozaki)

Distributions:
  normal    N(0, 1)
  uniform   U[0, 1): no cancellation
  wide      A: +-10^U(-30, 30), B: +-10^U(-8, 4): exponents over 60 decades,
            products down to 1e-38, where the low TF32 parts underflow
  cancel    A = [P P], B = [Q; -Q + 1e-3 E]: sums of terms 1000 times larger
            than the result (P, Q, E normal)
  denormal  A: N(0, 1) * 1e-39 for float32 data (FP32 subnormals), the same
            N(0, 1) * 1e-310 for float64 data (FP64 subnormals); B: N(0, 1)

Then inf and NaN: an infinity in A and a NaN in B must give C's
non-finite elements exactly where the FP64 reference has them (--verify
counts every disagreement).

Prints a Markdown table, the default-policy verdicts (tf32x3 may be
auto's float32 arithmetic only if its errors are at most cuBLAS FP32's on
every row, ozaki32 likewise, ozaki its float64 one only if at most
cuBLAS DGEMM's) and a
JSON file; exits 1 when a run fails or a non-finite element
disagrees.

  python3 tests/accuracy.py ./gemmcli [--sizes 1024,4096,8192] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

DISTS = ["normal", "uniform", "wide", "cancel", "denormal"]


def operands(dist, n, dtype, rng):
    if dist == "normal":
        return rng.standard_normal((n, n)), rng.standard_normal((n, n))
    if dist == "uniform":
        return rng.random((n, n)), rng.random((n, n))
    if dist == "wide":
        sa = rng.choice([-1.0, 1.0], (n, n))
        sb = rng.choice([-1.0, 1.0], (n, n))
        return sa * 10.0 ** rng.uniform(-30, 30, (n, n)), sb * 10.0 ** rng.uniform(-8, 4, (n, n))
    if dist == "cancel":
        h = n // 2
        p = rng.standard_normal((n, h))
        q = rng.standard_normal((h, n)).astype(dtype)
        e = rng.standard_normal((h, n))
        a = np.concatenate([p, p], axis=1)
        b = np.concatenate([q, (-q.astype(np.float64) + 1e-3 * e)], axis=0)
        return a, b
    if dist == "denormal":
        return rng.standard_normal((n, n)) * 1e-39, rng.standard_normal((n, n))
    raise ValueError(dist)


def run(gemmcli, a, b, tmp, *extra):
    out = os.path.join(tmp, "c.npy")
    cmd = [gemmcli, "mul", a, b, "-o", out, "--verify", "--json", "--tol", "1e30", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: status {r.returncode}: {r.stderr.strip()[-400:]}")
    line = [l for l in r.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)


def errs(rep, timed=False):
    v = rep["verify"]
    bad = sum(v["nonfinite_mismatches"].values())
    if timed:
        return v["timed_rel_frobenius_error"], v["timed_max_rel_error"], bad
    return v["rel_frobenius_error"], v["max_rel_error"], bad


def measure(gemmcli, a, b, dtype, tmp, row, modes):
    """a @ b on `dtype` data in each compute mode of `modes`, in order:
    (mode, {row key: True for cuBLAS's errors beside it, False for the
    kernel's own}); returns each mode's report."""
    fa, fb = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    np.save(fa, a.astype(dtype))
    np.save(fb, b.astype(dtype))
    reports = {}
    for mode, keys in modes:
        reports[mode] = run(gemmcli, fa, fb, tmp, "--compute", mode)
        for key, timed in keys.items():
            row[key] = errs(reports[mode], timed)
    return reports


def fmt(e):
    return "-" if e is None else f"{e[0]:.2e} / {e[1]:.2e}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gemmcli")
    ap.add_argument("--sizes", default="1024,4096,8192")
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(args.seed)
    rows, failures = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        fa, fb = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
        for n in sizes:
            for dist in DISTS:
                row = {"n": n, "dist": dist}
                try:
                    a, b = operands(dist, n, np.float32, rng)
                    reps = measure(args.gemmcli, a, b, np.float32, tmp, row, [
                        ("fp32", {"cublas_fp32": True, "own_fp32": False}),
                        ("tf32x3", {"tf32x3": False}),
                        ("ozaki32", {"ozaki32": False}),
                        ("tf32", {"tf32": False, "cublas_tf32": True})])
                    row["own_fp32_kernel"] = reps["fp32"]["kernel"]
                    # (the same draws; subnormal in float64 too)
                    a64 = a * (1e-310 / 1e-39) if dist == "denormal" else a
                    reps = measure(args.gemmcli, a64, b, np.float64, tmp, row, [
                        ("fp64", {"cublas_dgemm": True, "own_fp64": False}),
                        ("ozaki", {"ozaki": False})])
                    row["own_fp64_kernel"] = reps["fp64"]["kernel"]
                except RuntimeError as e:
                    print(f"accuracy: FAIL {n} {dist}: {e}", file=sys.stderr)
                    failures += 1
                    continue
                for key, val in row.items():
                    if isinstance(val, tuple) and val[2]:
                        print(f"accuracy: FAIL {n} {dist} {key}: {val[2]} non-finite "
                              "elements disagree with the reference", file=sys.stderr)
                        failures += 1
                rows.append(row)
                print(f"accuracy: {n} {dist} done", file=sys.stderr, flush=True)

        # Infinities and NaNs where an FP32 GEMM has them, with C0 (one
        # with an infinity too); the second shape's K is split into slices.
        for m, n, k in [(300, 300, 300), (64, 48, 4096)]:
            a = rng.standard_normal((m, k)).astype(np.float32)
            b = rng.standard_normal((k, n)).astype(np.float32)
            c0 = rng.standard_normal((m, n)).astype(np.float32)
            a[3, 7] = np.inf
            a[10, 20] = -np.inf
            b[5, 9] = np.nan
            b[30, 40] = np.inf
            b[31, 41] = 0.5          # a TF32 value: its low part is 0
            a[50, 31] = np.inf
            c0[3, 2] = -np.inf
            np.save(fa, a)
            np.save(fb, b)
            fc = os.path.join(tmp, "c0.npy")
            np.save(fc, c0)
            for mode in ["fp32", "tf32x3", "tf32"]:
                try:
                    rep = run(args.gemmcli, fa, fb, tmp, "--compute", mode, "-c", fc,
                              "--alpha", "-2", "--beta", "0.5")
                    bad = errs(rep)[2]
                    print(f"accuracy: inf/nan {mode} {m}x{n}x{k}: {bad} non-finite "
                          "disagreements", file=sys.stderr)
                    failures += bad != 0
                except RuntimeError as e:
                    print(f"accuracy: FAIL inf/nan {mode} {m}x{n}x{k}: {e}", file=sys.stderr)
                    failures += 1

    print("| n | data | cuBLAS FP32 | own FP32 | tf32x3 | ozaki32 | tf32 | cuBLAS TF32 "
          "| cuBLAS DGEMM | own FP64 | ozaki |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']} | {r['dist']} | {fmt(r.get('cublas_fp32'))} | {fmt(r.get('own_fp32'))} | "
              f"{fmt(r.get('tf32x3'))} | {fmt(r.get('ozaki32'))} | {fmt(r.get('tf32'))} | "
              f"{fmt(r.get('cublas_tf32'))} | {fmt(r.get('cublas_dgemm'))} | "
              f"{fmt(r.get('own_fp64'))} | {fmt(r.get('ozaki'))} |")
    print("(each cell: relative Frobenius error / max relative error)")
    worse = [f"{r['n']} {r['dist']}" for r in rows
             if r['tf32x3'][0] > r['cublas_fp32'][0] or r['tf32x3'][1] > r['cublas_fp32'][1]]
    if worse:
        print(f"policy: tf32x3 stays opt-in: its error is above cuBLAS FP32's on {', '.join(worse)}")
    else:
        print("policy: tf32x3 is at most cuBLAS FP32's error on every row")
    worse = [f"{r['n']} {r['dist']}" for r in rows if "ozaki32" in r and
             (r['ozaki32'][0] > r['cublas_fp32'][0] or r['ozaki32'][1] > r['cublas_fp32'][1])]
    if worse:
        print(f"policy: ozaki32 stays opt-in: its error is above cuBLAS FP32's on "
              f"{', '.join(worse)}")
    else:
        print("policy: ozaki32 is at most cuBLAS FP32's error on every row")
    worse = [f"{r['n']} {r['dist']}" for r in rows if "ozaki" in r and
             (r['ozaki'][0] > r['cublas_dgemm'][0] or r['ozaki'][1] > r['cublas_dgemm'][1])]
    if worse:
        print(f"policy: ozaki stays opt-in: its error is above cuBLAS DGEMM's on {', '.join(worse)}")
    else:
        print("policy: ozaki is at most cuBLAS DGEMM's error on every row")
    kernels = sorted({r.get("own_fp32_kernel", "") for r in rows} |
                     {r.get("own_fp64_kernel", "") for r in rows} - {""})
    print(f"own kernels (auto): {', '.join(kernels)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"accuracy: {len(rows)} rows, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
