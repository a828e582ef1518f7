#!/usr/bin/env python3
"""--compute ozaki's rate on the int8 tensor cores (f64_ozaki) beside
cuBLAS DGEMM and gemmcli's own FP64 (auto: f64_dmma) in the same run, on
N(0, 1) float64 operands at N^3 and 2N^3: each `gemmcli mul --repeat 5`'s
kernel median, TFLOP/s counting a multiply-add as 2; at N^3 also each
one's error against the double-double reference (--verify: relative
Frobenius / largest relative).  A benchmark: it prints a table and fails
only if a run does.

    ozaki_rate.py [path/to/gemmcli] [N]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

gemmcli = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
rng = np.random.default_rng(7)
failed = 0


def run(d, size, compute, kernel, verify):
    cmd = [gemmcli, "mul", "a.npy", "b.npy", "-o", "c.npy", "--compute", compute, "--kernel",
           kernel, "--repeat", "5", "--json"] + (["--verify", "--tol", "1e30"] if verify else [])
    p = subprocess.run(cmd, cwd=d, capture_output=True)
    name = f"float64 {size}^3 --compute {compute} --kernel {kernel}"
    if p.returncode != 0:
        print(f"{name}: FAILED: {p.stderr.decode().strip()[-300:]}")
        return None
    rep = json.loads(p.stdout)
    ms = rep["ms"]["kernel"]
    err = ""
    if verify:
        v = rep["verify"]
        err = f"  error {v['rel_frobenius_error']:.2e} / {v['max_rel_error']:.2e}"
    print(f"{name:52} {rep['kernel']:10} {ms:9.3f} ms {2 * size ** 3 / ms / 1e9:7.1f} TFLOP/s"
          f"{err}")
    return ms


with tempfile.TemporaryDirectory() as d:
    for size in (n, 2 * n):
        np.save(os.path.join(d, "a.npy"), rng.standard_normal((size, size)))
        np.save(os.path.join(d, "b.npy"), rng.standard_normal((size, size)))
        verify = size == n
        times = {}
        for compute, kernel in (("fp64", "cublas"), ("fp64", "auto"), ("ozaki", "f64_ozaki")):
            times[kernel] = run(d, size, compute, kernel, verify)
            failed += times[kernel] is None
        if times["cublas"] and times["f64_ozaki"]:
            print(f"float64 {size}^3: f64_ozaki {times['cublas'] / times['f64_ozaki']:.2f}x "
                  "cuBLAS DGEMM")
sys.exit(1 if failed else 0)
