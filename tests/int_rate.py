#!/usr/bin/env python3
"""The integer products' rates on the int8 tensor cores beside the paths
they replace and cuBLAS's int8 GEMM (tests/i8_anchor.c, same run): int8
at N^3 and 2N^3 (auto, which takes i8_igmma on Hopper, and i8_imma);
int16 and int32 at N^3 over their whole range (auto: i8_limbs) against
the exact paths before them (int16: f64_dmma, exact below 2^53; int32:
i64_tiled).  Each `gemmcli mul --repeat 5`'s kernel median, TOP/s
counting a multiply-add as 2; every result is checked on 16 sampled rows
against NumPy.  A benchmark: it prints a table and fails only if a run
or its check does.

    int_rate.py [path/to/gemmcli] [N]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

gemmcli = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
anchor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "tests",
                      "i8_anchor")
rng = np.random.default_rng(5)
failed = 0


def run(d, kernel, size, dtype):
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    a = rng.integers(lo, hi, (size, size), dtype=dtype, endpoint=True)
    b = rng.integers(lo, hi, (size, size), dtype=dtype, endpoint=True)
    np.save(os.path.join(d, "a.npy"), a)
    np.save(os.path.join(d, "b.npy"), b)
    p = subprocess.run([gemmcli, "mul", "a.npy", "b.npy", "-o", "c.npy", "--kernel", kernel,
                        "--repeat", "5", "--json"], cwd=d, capture_output=True)
    name = f"{np.dtype(dtype).name} {size}^3 --kernel {kernel}"
    if p.returncode != 0:
        print(f"{name}: FAILED: {p.stderr.decode().strip()[-300:]}")
        return False
    rep = json.loads(p.stdout)
    c = np.load(os.path.join(d, "c.npy"))
    rows = rng.integers(0, size, 16)
    # NumPy's answer for the sampled rows: in float64 (BLAS) where every
    # sum is below 2^53 and so exact, else in int64 (no BLAS, slower)
    exact_f64 = float(lo) ** 2 * size < 2.0 ** 53
    wide = np.float64 if exact_f64 else np.int64
    want = (a[rows].astype(wide) @ b.astype(wide)).astype(np.int64).astype(dtype)
    ok = c.dtype == dtype and np.array_equal(c[rows], want)
    ms = rep["ms"]["kernel"]
    print(f"{name:34} {rep['kernel']:10} {ms:9.3f} ms {2 * size ** 3 / ms / 1e9:8.1f} TOP/s"
          f"  16 rows exact: {ok}")
    return ok


if os.access(anchor, os.X_OK):
    r = subprocess.run([anchor, str(n), str(2 * n)], capture_output=True, text=True)
    print(r.stdout.strip())
    if r.returncode != 0:
        print(r.stderr.strip())
        failed += 1
with tempfile.TemporaryDirectory() as d:
    cases = [("auto", n, np.int8), ("i8_imma", n, np.int8), ("auto", 2 * n, np.int8),
             ("i8_imma", 2 * n, np.int8),
             ("auto", n, np.int16), ("f64_dmma", n, np.int16),
             ("auto", n, np.int32), ("i64_tiled", n, np.int32)]
    for kernel, size, dtype in cases:
        failed += not run(d, kernel, size, dtype)
sys.exit(1 if failed else 0)
