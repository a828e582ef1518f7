#!/usr/bin/env python3
"""The transpose ladder's top stage on every element size, which the bench
cannot give (it times float32): `gemmcli transpose --kernel vec` on 256 MiB
matrices of int8, int16, float32 and float64, and on a ragged int8 matrix
whose rows are not 16-byte units, median of 20 runs, each checked against
NumPy.  A benchmark: it prints the GB/s (bytes read and written) and fails
only if a run or its check does.

    transpose_rate.py [path/to/gemmcli]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

gemmcli = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
rng = np.random.default_rng(4)
CASES = [("int8", (16384, 16384)), ("int16", (16384, 8192)), ("float32", (8192, 8192)),
         ("float64", (8192, 4096)), ("int8", (7001, 3000))]
ok = True
with tempfile.TemporaryDirectory() as d:
    src, dst = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
    for dtype, shape in CASES:
        x = rng.integers(-100, 100, shape).astype(dtype)
        np.save(src, x)
        p = subprocess.run([gemmcli, "transpose", src, "-o", dst, "--kernel", "vec",
                            "--repeat", "20", "--json"], capture_output=True)
        if p.returncode != 0:
            print(p.stderr.decode(), file=sys.stderr)
            ok = False
            continue
        rep = json.loads(p.stdout)
        exact = np.array_equal(np.load(dst), x.T)
        ok = ok and exact
        print(f"vec {dtype} {shape[0]}x{shape[1]}: {rep['kernel_gbps']:.0f} GB/s, "
              f"{rep['ms']['kernel']:.3f} ms, exact: {exact}")
sys.exit(0 if ok else 1)
