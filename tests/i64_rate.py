#!/usr/bin/env python3
"""The exact int64 kernel's rate, which the bench cannot give (cuBLAS has no
int64 GEMM): `gemmcli mul --kernel i64_tiled` on two 4096 x 4096 int64
operands whose products pass 2^53, median of 5 runs, checked against the
exact result.  A benchmark: it prints a figure and fails only if the run
or its check does.

    i64_rate.py [path/to/gemmcli] [N]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

gemmcli = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
rng = np.random.default_rng(3)
with tempfile.TemporaryDirectory() as d:
    a = rng.integers(-2**30, 2**30, (n, n), dtype=np.int64)
    b = rng.integers(-2**30, 2**30, (n, n), dtype=np.int64)
    np.save(os.path.join(d, "a.npy"), a)
    np.save(os.path.join(d, "b.npy"), b)
    p = subprocess.run([gemmcli, "mul", "a.npy", "b.npy", "-o", "c.npy", "--kernel", "i64_tiled",
                        "--repeat", "5", "--json"], cwd=d, capture_output=True)
    if p.returncode != 0:
        print(p.stderr.decode(), file=sys.stderr)
        sys.exit(1)
    rep = json.loads(p.stdout)
    c = np.load(os.path.join(d, "c.npy"))
    rows = rng.integers(0, n, 16)
    ok = all(np.array_equal(c[r], a[r] @ b) for r in rows)   # int64 wraps as the kernel does
    print(f"i64_tiled {n}^3 int64: {rep['ms']['kernel']:.2f} ms, "
          f"{rep['kernel_gflops'] / 1e3:.2f} TOP/s (multiply-adds x 2), 16 rows exact: {ok}")
    sys.exit(0 if ok else 1)
