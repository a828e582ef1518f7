#!/usr/bin/env python3
"""Whole-process timings: gemmcli against the NumPy, CuPy and PyTorch
one-liners a user would write instead, on the same files, in one run.

For each size it writes two float32 .npy inputs, runs every command several
times (alternating), and prints medians, ratios to gemmcli, and peak
resident memory (ru_maxrss of each child).  Also: gemmcli transpose against
`cp` of the same file, start-up of `--help` and `kernels`, and a 64x64 mul.
A benchmark, not a test.

usage: bench_e2e.py [--gemmcli ./gemmcli] [--sizes 4096,8192] [--runs 5] [--dir DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def find_time():
    """GNU time, for each child's own peak memory (ru_maxrss through Python
    would count the forked interpreter's pages too)."""
    for path in (os.environ.get("GNU_TIME", ""), "/usr/bin/time"):
        if path and os.access(path, os.X_OK):
            return path
    return None


TIME = find_time()


def run_once(cmd):
    """Wall seconds and peak RSS in MiB (NaN without GNU time) of one command."""
    full = [TIME, "-f", "maxrss %M"] + cmd if TIME else cmd
    t = time.perf_counter()
    p = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {err.strip()[-400:]}")
    rss = float("nan")
    for line in err.splitlines():
        if line.startswith("maxrss "):
            rss = int(line.split()[1]) / 1024.0
    return wall, rss


def have(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True).returncode == 0


def one_liners(a, b, c):
    py = sys.executable
    cmds = {}
    cmds["numpy"] = [py, "-c", f"import numpy as np; np.save({c!r}, np.load({a!r}) @ np.load({b!r}))"]
    if have("cupy"):
        cmds["cupy"] = [py, "-c", f"import cupy as cp; cp.save({c!r}, cp.load({a!r}) @ cp.load({b!r}))"]
    if have("torch"):
        cmds["pytorch"] = [py, "-c",
                           "import numpy as np, torch; "
                           f"x = torch.from_numpy(np.load({a!r})).cuda(); "
                           f"y = torch.from_numpy(np.load({b!r})).cuda(); "
                           f"np.save({c!r}, (x @ y).cpu().numpy())"]
    return cmds


def bench(cmds, runs):
    """Runs each command `runs` times, interleaved; returns name -> (median s, peak MiB)."""
    times = {k: [] for k in cmds}
    rss = {k: float("nan") for k in cmds}
    for name, cmd in cmds.items():     # one untimed run each: page cache, JIT caches
        run_once(cmd)
    for _ in range(runs):
        for name, cmd in cmds.items():
            w, r = run_once(cmd)
            times[name].append(w)
            rss[name] = r if rss[name] != rss[name] or r > rss[name] else rss[name]
    return {k: (statistics.median(v), rss[k]) for k, v in times.items()}


def table(title, res, base, extra=""):
    print(f"\n{title}{extra}")
    print(f"  {'command':<22} {'median s':>9} {'x ' + base:>12} {'peak MiB':>9}")
    for name, (t, r) in res.items():
        print(f"  {name:<22} {t:9.3f} {t / res[base][0]:12.2f} {r:9.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemmcli", default="./gemmcli")
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--kernel", default="auto", help="gemmcli's --kernel (cpu without a GPU)")
    o = ap.parse_args()
    g = os.path.abspath(o.gemmcli)
    d = o.dir or tempfile.mkdtemp(prefix="gemmcli-e2e-")
    rng = np.random.default_rng(1)
    summary = {}
    for n in map(int, o.sizes.split(",")):
        a, b = os.path.join(d, f"a{n}.npy"), os.path.join(d, f"b{n}.npy")
        c = os.path.join(d, f"c{n}.npy")
        for path in (a, b):
            np.save(path, rng.standard_normal((n, n), dtype=np.float32))
        cmds = {"gemmcli": [g, "mul", a, b, "-o", c, "--quiet", "--kernel", o.kernel]}
        cmds.update(one_liners(a, b, c))
        res = bench(cmds, o.runs)
        table(f"mul {n}x{n} float32 .npy -> .npy", res, "gemmcli",
              f" (inputs {2 * n * n * 4 / 2**20:.0f} MiB, output {n * n * 4 / 2**20:.0f} MiB)")
        # where gemmcli's time goes
        out = subprocess.run([g, "mul", a, b, "-o", c, "--json", "--kernel", o.kernel],
                             capture_output=True, text=True)
        phases = json.loads(out.stdout)["ms"]
        print("  gemmcli phases (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
        summary[f"mul{n}"] = {k: v[0] for k, v in res.items()}
        t = os.path.join(d, f"t{n}.npy")
        xk = "cpu" if o.kernel == "cpu" else "auto"
        res = bench({"gemmcli transpose": [g, "transpose", a, "-o", t, "--quiet", "--kernel", xk],
                     "cp": ["cp", a, t],
                     "numpy transpose": [sys.executable, "-c",
                                         f"import numpy as np; np.save({t!r}, "
                                         f"np.ascontiguousarray(np.load({a!r}).T))"]}, o.runs)
        table(f"transpose {n}x{n} float32 .npy", res, "cp")
        summary[f"transpose{n}"] = {k: v[0] for k, v in res.items()}
        for f in (a, b, c, t):
            os.remove(f)
    small_a, small_b = os.path.join(d, "sa.npy"), os.path.join(d, "sb.npy")
    np.save(small_a, rng.standard_normal((64, 64), dtype=np.float32))
    np.save(small_b, rng.standard_normal((64, 64), dtype=np.float32))
    res = bench({"gemmcli --help": [g, "--help"], "gemmcli kernels": [g, "kernels"],
                 "gemmcli mul 64x64": [g, "mul", small_a, small_b, "-o",
                                       os.path.join(d, "sc.npy"), "--quiet", "--kernel",
                                       o.kernel]}, o.runs)
    table("start-up", res, "gemmcli --help")
    print("\nsummary: " + json.dumps(summary))


if __name__ == "__main__":
    main()
