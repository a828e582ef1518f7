#!/usr/bin/env python3
"""--compute ozaki's rate on the int8 tensor cores (i8_ozaki) beside
cuBLAS DGEMM, and ozaki32's beside cuBLAS SGEMM and tf32x3, in the same
run, on N(0, 1) float64 and float32 operands at N^3 and 2N^3: each
`gemmcli mul --repeat 5`'s kernel median, TFLOP/s counting a multiply-add
as 2; at N^3 the Ozaki modes alone, with their errors and cuBLAS's
against the reference (--verify: relative Frobenius / largest relative).
A benchmark: it prints a table and fails only if a run does.

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


def run(d, size, compute, kernel, verify, dtype):
    cmd = [gemmcli, "mul", "a.npy", "b.npy", "-o", "c.npy", "--compute", compute, "--kernel",
           kernel, "--repeat", "5", "--json"] + (["--verify", "--tol", "1e30"] if verify else [])
    p = subprocess.run(cmd, cwd=d, capture_output=True)
    name = f"{dtype} {size}^3 --compute {compute} --kernel {kernel}"
    if p.returncode != 0:
        print(f"{name}: FAILED: {p.stderr.decode().strip()[-300:]}")
        return None
    rep = json.loads(p.stdout)
    ms = rep["ms"]["kernel"]
    err = ""
    if verify:
        v = rep["verify"]
        err = (f"  error {v['rel_frobenius_error']:.2e} / {v['max_rel_error']:.2e}, cuBLAS's "
               f"{v.get('timed_rel_frobenius_error', float('nan')):.2e} / "
               f"{v.get('timed_max_rel_error', float('nan')):.2e}")
    print(f"{name:52} {rep['kernel']:10} {ms:9.3f} ms {2 * size ** 3 / ms / 1e9:7.1f} TFLOP/s"
          f"{err}")
    return ms


with tempfile.TemporaryDirectory() as d:
    for size in (n, 2 * n):
        for dtype, peer, modes in ((np.float64, "DGEMM",
                                    (("fp64", "cublas"), ("ozaki", "i8_ozaki"))),
                                   (np.float32, "SGEMM",
                                    (("fp32", "cublas"), ("tf32x3", "auto"),
                                     ("ozaki32", "i8_ozaki")))):
            np.save(os.path.join(d, "a.npy"), rng.standard_normal((size, size)).astype(dtype))
            np.save(os.path.join(d, "b.npy"), rng.standard_normal((size, size)).astype(dtype))
            # (at N^3 the Ozaki mode alone, with --verify: its error and
            # cuBLAS's, which --verify runs beside it; at 2N^3 each timed)
            verify = size == n
            times = {}
            for compute, kernel in modes[-1:] if verify else modes:
                times[compute] = run(d, size, compute, kernel, verify, np.dtype(dtype).name)
                failed += times[compute] is None
            base, oz = modes[0][0], modes[-1][0]
            if times.get(base) and times.get(oz):
                print(f"{np.dtype(dtype).name} {size}^3: {oz} {times[base] / times[oz]:.2f}x "
                      f"cuBLAS {peer}")
sys.exit(1 if failed else 0)
