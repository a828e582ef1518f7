#!/usr/bin/env python3
"""Whole-process timings: gemmcli against the NumPy, pandas, CuPy and PyTorch
one-liners a user would write instead, on the same files, in one run.

Jobs (--jobs, a comma list; default all):
  mul        for each of --sizes: mul of two float32 .npy against NumPy, CuPy
             and PyTorch (load, matmul, save)
  transpose  for each of --sizes: gemmcli transpose of a .npy against `cp` of
             the same file and a NumPy one-liner
  csvgz      mul of two --csv-size float32 .csv.gz (written by `gemmcli
             convert`) into a .csv.gz, against pandas.read_csv, matmul and
             np.savetxt into gzip (level 1, as gemmcli's default); skipped
             with a reason where pandas does not import
  npy-large  mul of two --large-size float32 .npy against CuPy and PyTorch
             (load, to the GPU, matmul, back, save); skipped with a reason
             where there is no room for the three files
  startup    `--help`, `kernels` and a 64x64 mul, against NumPy's 64x64 mul

Each command runs once untimed (page cache, JIT caches; not for csvgz and
npy-large, whose inputs were just written), then --runs times, alternating
between commands (--big-runs for csvgz and npy-large).  Every run writes a
new file: the last run's output is removed first, untimed, because
replacing a large file costs the file system's time to free the old one
(1.5 s for 2.4 GB on an ext4 mounted with online discard), whichever
program writes it; --replace leaves outputs in place to measure that too.  Tables give medians,
ratios and peak resident memory (GNU time's maxrss of each child).  gemmcli
runs with --json, and under each of its rows the medians of its phases
(read, h2d, kernel, d2h, write, total) stand next to its median wall time.
A final table lists every job with gemmcli's median, the fastest other
command's median, their ratio and gemmcli's phases.  Files go to a temporary
directory under --dir (default $TMPDIR), removed at exit.  A benchmark, not a
test.

usage: bench_e2e.py [--gemmcli ./gemmcli] [--jobs mul,transpose,csvgz,npy-large,startup]
                    [--sizes 4096,8192] [--csv-size 4096] [--large-size 24576]
                    [--runs 5] [--big-runs 3] [--kernel auto] [--dir DIR] [--replace]
smoke test without a GPU:
  bench_e2e.py --kernel cpu --sizes 64 --csv-size 64 --large-size 128 --runs 1
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

JOBS = ("mul", "transpose", "csvgz", "npy-large", "startup")
PHASE_LABELS = {"host_to_device": "h2d", "device_to_host": "d2h", "gpu_start": "start"}
HEADROOM = 2 << 30     # bytes of disk and memory left free by npy-large


def find_time():
    """GNU time, for each child's own peak memory (ru_maxrss through Python
    would count the forked interpreter's pages too)."""
    for path in (os.environ.get("GNU_TIME", ""), "/usr/bin/time"):
        if path and os.access(path, os.X_OK):
            return path
    return None


TIME = find_time()


def run_once(cmd):
    """Wall seconds, peak RSS in MiB (NaN without GNU time) and stdout of one command."""
    full = [TIME, "-f", "maxrss %M"] + cmd if TIME else cmd
    t = time.perf_counter()
    p = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {err.strip()[-400:]}")
    rss = float("nan")
    for line in err.splitlines():
        if line.startswith("maxrss "):
            rss = int(line.split()[1]) / 1024.0
    return wall, rss, p.stdout.decode(errors="replace")


def parse_phases(stdout):
    """gemmcli's --json phases in seconds ({} where stdout holds no summary)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                ms = json.loads(line).get("ms", {})
            except ValueError:
                return {}
            return {k: v / 1000.0 for k, v in ms.items() if isinstance(v, (int, float))}
    return {}


def have(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True).returncode == 0


def gpu_one_liners(a, b, c):
    """CuPy and PyTorch: load, to the GPU, matmul, back, save; and why any is missing."""
    py = sys.executable
    cmds, skipped = {}, []
    if have("cupy"):
        cmds["cupy"] = [py, "-c", f"import cupy as cp; cp.save({c!r}, cp.load({a!r}) @ cp.load({b!r}))"]
    else:
        skipped.append("cupy: does not import")
    if have("torch"):
        cmds["pytorch"] = [py, "-c",
                           "import numpy as np, torch; "
                           f"x = torch.from_numpy(np.load({a!r})).cuda(); "
                           f"y = torch.from_numpy(np.load({b!r})).cuda(); "
                           f"np.save({c!r}, (x @ y).cpu().numpy())"]
    else:
        skipped.append("pytorch: does not import")
    return cmds, skipped


def numpy_mul(a, b, c):
    return [sys.executable, "-c",
            f"import numpy as np; np.save({c!r}, np.load({a!r}) @ np.load({b!r}))"]


def pandas_csvgz_mul(a, b, c):
    """pandas reads both .csv.gz, NumPy multiplies and writes with savetxt
    into gzip level 1 (gemmcli's default), 9 digits (float32 round trip)."""
    return [sys.executable, "-c", "\n".join([
        "import gzip, numpy as np, pandas as pd",
        "read = lambda p: pd.read_csv(p, header=None, dtype=np.float32).to_numpy()",
        f"c = read({a!r}) @ read({b!r})",
        f"with gzip.open({c!r}, 'wt', compresslevel=1) as f:",
        "    np.savetxt(f, c, fmt='%.9g', delimiter=',')"])]


REPLACE = False    # --replace: outputs are left in place between runs


def clear(paths):
    """Removes last run's outputs, untimed, unless --replace."""
    for path in paths if not REPLACE else ():
        if os.path.exists(path):
            os.remove(path)


def bench(cmds, runs, warmup=True, fresh=()):
    """Runs each command `runs` times, interleaved, the files in `fresh`
    removed before each run; returns name ->
    {"wall": median s, "rss": peak MiB, "phases": {phase: median s}}."""
    walls = {k: [] for k in cmds}
    rss = {k: float("nan") for k in cmds}
    phases = {k: {} for k in cmds}
    if warmup:
        for cmd in cmds.values():
            clear(fresh)
            run_once(cmd)
    for _ in range(runs):
        for name, cmd in cmds.items():
            clear(fresh)
            w, r, out = run_once(cmd)
            walls[name].append(w)
            rss[name] = r if rss[name] != rss[name] or r > rss[name] else rss[name]
            for k, v in parse_phases(out).items():
                phases[name].setdefault(k, []).append(v)
    return {k: {"wall": statistics.median(v), "rss": rss[k],
                "phases": {p: statistics.median(x) for p, x in phases[k].items()}}
            for k, v in walls.items()}


def phase_text(phases, wall):
    """`read 0.410 s  h2d 0.050  ...  total 1.710 (wall 1.800)`."""
    parts = [f"{PHASE_LABELS.get(k, k)} {v:.3f}" for k, v in phases.items()]
    if not parts:
        return ""
    parts[0] += " s"
    return "  ".join(parts) + f" (wall {wall:.3f})"


def table(title, res, base, extra=""):
    w = max(12, len(base) + 2)
    print(f"\n{title}{extra}")
    print(f"  {'command':<22} {'median s':>9} {'x ' + base:>{w}} {'peak MiB':>9}")
    for name, r in res.items():
        print(f"  {name:<22} {r['wall']:9.3f} {r['wall'] / res[base]['wall']:{w}.2f} {r['rss']:9.0f}")
        if r["phases"]:
            print(f"    phases: {phase_text(r['phases'], r['wall'])}")


def mib(nbytes):
    return nbytes / 2**20


def write_inputs(rng, n, *paths):
    for path in paths:
        np.save(path, rng.standard_normal((n, n), dtype=np.float32))


def job_mul(o, d, n, a, b):
    c = os.path.join(d, f"c{n}.npy")
    cmds = {"gemmcli": [o.g, "mul", a, b, "-o", c, "--json", "--kernel", o.kernel],
            "numpy": numpy_mul(a, b, c)}
    gpu, skipped = gpu_one_liners(a, b, c)
    cmds.update(gpu)
    res = bench(cmds, o.runs, fresh=(c,))
    table(f"mul {n}x{n} float32 .npy -> .npy", res, "gemmcli",
          f" (inputs {mib(2 * n * n * 4):.0f} MiB, output {mib(n * n * 4):.0f} MiB)")
    for why in skipped:
        print(f"  skipped {why}")
    os.remove(c)
    return res


def job_transpose(o, d, n, a):
    t = os.path.join(d, f"t{n}.npy")
    xk = "cpu" if o.kernel == "cpu" else "auto"   # mul's kernel names are not transpose's
    res = bench({"gemmcli transpose": [o.g, "transpose", a, "-o", t, "--json", "--kernel", xk],
                 "cp": ["cp", a, t],
                 "numpy transpose": [sys.executable, "-c",
                                     f"import numpy as np; np.save({t!r}, "
                                     f"np.ascontiguousarray(np.load({a!r}).T))"]}, o.runs,
                fresh=(t,))
    table(f"transpose {n}x{n} float32 .npy", res, "cp", f" ({mib(n * n * 4):.0f} MiB)")
    os.remove(t)
    return res


def job_csvgz(o, d, rng):
    n = o.csv_size
    npys = [os.path.join(d, f"csv-{x}.npy") for x in "ab"]
    a, b, c = (os.path.join(d, f"{x}{n}.csv.gz") for x in "abc")
    write_inputs(rng, n, *npys)
    t = time.perf_counter()
    for src, dst in zip(npys, (a, b)):
        subprocess.run([o.g, "convert", src, "-o", dst], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.remove(src)
    made = time.perf_counter() - t
    # float32 text, as pandas is told to read it.
    cmds = {"gemmcli": [o.g, "mul", a, b, "-o", c, "--json", "--kernel", o.kernel,
                        "--in-dtype", "f32"]}
    why = None
    if have("pandas"):
        cmds["pandas+numpy"] = pandas_csvgz_mul(a, b, c)
    else:
        why = "pandas+numpy: pandas does not import (np.loadtxt would take minutes)"
    res = bench(cmds, o.big_runs, warmup=False, fresh=(c,))
    size = os.path.getsize(a) + os.path.getsize(b)
    table(f"csvgz: mul {n}x{n} float32 .csv.gz -> .csv.gz", res, "gemmcli",
          f" (inputs {mib(size):.0f} MiB, written by gemmcli convert in {made:.1f} s)")
    if why:
        print(f"  skipped {why}")
    for f in (a, b, c):
        os.remove(f)
    return res


def fs_type(path):
    """Type of the file system that holds `path` ('' where /proc/mounts is missing)."""
    best, kind = "", ""
    path = os.path.realpath(path)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                mnt, typ = line.split()[1:3]
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) > len(best):
                    best, kind = mnt, typ
    except OSError:
        pass
    return kind


def mem_available():
    """MemAvailable in bytes (the free pages where /proc/meminfo is missing)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def no_room(d, n):
    """Why three n x n float32 files and one process holding them do not fit
    (None where they do); a tmpfs directory takes the files from memory too."""
    files = 3 * n * n * 4
    disk = shutil.disk_usage(d).free
    mem = mem_available()
    need_mem = files + (files if fs_type(d) == "tmpfs" else 0) + HEADROOM
    if disk < files + HEADROOM:
        return f"{disk / 2**30:.1f} GiB free in {d}, needs {(files + HEADROOM) / 2**30:.1f} GiB"
    if mem < need_mem:
        return f"{mem / 2**30:.1f} GiB memory available, needs {need_mem / 2**30:.1f} GiB"
    return None


def job_npy_large(o, d, rng):
    n = o.large_size
    title = f"npy-large: mul {n}x{n} float32 .npy -> .npy"
    why = no_room(d, n)
    if why:
        print(f"\n{title}: skipped, {why}")
        return None
    a, b, c = (os.path.join(d, f"{x}{n}.npy") for x in "abc")
    try:
        write_inputs(rng, n, a, b)
        # float32 text, as pandas is told to read it.
    cmds = {"gemmcli": [o.g, "mul", a, b, "-o", c, "--json", "--kernel", o.kernel,
                        "--in-dtype", "f32"]}
        gpu, skipped = gpu_one_liners(a, b, c)
        cmds.update(gpu)
        res = bench(cmds, o.big_runs, warmup=False, fresh=(c,))
        table(title, res, "gemmcli",
              f" (inputs {mib(2 * n * n * 4):.0f} MiB, output {mib(n * n * 4):.0f} MiB)")
        for s in skipped:
            print(f"  skipped {s}")
    finally:
        for f in (a, b, c):
            if os.path.exists(f):
                os.remove(f)
    return res


def job_startup(o, d, rng):
    sa, sb, sc = (os.path.join(d, f"s{x}.npy") for x in "abc")
    write_inputs(rng, 64, sa, sb)
    res = bench({"gemmcli --help": [o.g, "--help"], "gemmcli kernels": [o.g, "kernels"],
                 "gemmcli mul 64x64": [o.g, "mul", sa, sb, "-o", sc, "--json",
                                       "--kernel", o.kernel],
                 "numpy mul 64x64": numpy_mul(sa, sb, sc)}, o.runs, fresh=(sc,))
    table("start-up", res, "gemmcli --help")
    return res


def final_table(rows, elapsed):
    """One line per job: gemmcli's median, the fastest other command's, their ratio, phases."""
    print(f"\nall jobs (median wall s; ratio = other / gemmcli, > 1: gemmcli faster; "
          f"{elapsed:.0f} s in all)")
    print(f"  {'job':<16} {'gemmcli s':>9} {'fastest other':<16} {'other s':>9} {'ratio':>7}  phases (s)")
    for job, res, mine in rows:
        g = res[mine]
        others = {k: v for k, v in res.items() if not k.startswith("gemmcli")}
        best = min(others, key=lambda k: others[k]["wall"]) if others else None
        other = f"{best:<16} {others[best]['wall']:9.3f} {others[best]['wall'] / g['wall']:7.2f}" \
            if best else f"{'-':<16} {'-':>9} {'-':>7}"
        print(f"  {job:<16} {g['wall']:9.3f} {other}  {phase_text(g['phases'], g['wall'])}")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gemmcli", default="./gemmcli")
    ap.add_argument("--jobs", default=",".join(JOBS), help="comma list of " + ", ".join(JOBS))
    ap.add_argument("--sizes", default="4096,8192", help="mul and transpose sizes")
    ap.add_argument("--csv-size", type=int, default=4096)
    ap.add_argument("--large-size", type=int, default=24576)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--big-runs", type=int, default=None,
                    help="timed runs of csvgz and npy-large (default: 3, at most --runs)")
    ap.add_argument("--dir", default=None, help="parent of the temporary directory (default $TMPDIR)")
    ap.add_argument("--kernel", default="auto", help="gemmcli's --kernel (cpu without a GPU)")
    ap.add_argument("--replace", action="store_true",
                    help="leave outputs in place, so that runs replace them")
    o = ap.parse_args()
    global REPLACE
    REPLACE = o.replace
    o.jobs = [j for j in o.jobs.split(",") if j]
    bad = [j for j in o.jobs if j not in JOBS]
    if bad:
        ap.error(f"unknown job {', '.join(bad)}; jobs: {', '.join(JOBS)}")
    if o.big_runs is None:
        o.big_runs = min(3, o.runs)
    o.g = os.path.abspath(o.gemmcli)
    return o


def run_jobs(o, d):
    """Runs the chosen jobs in order; returns (job, results, gemmcli's row) for each."""
    rng = np.random.default_rng(1)
    rows = []
    if "mul" in o.jobs or "transpose" in o.jobs:
        for n in map(int, o.sizes.split(",")):
            a, b = os.path.join(d, f"a{n}.npy"), os.path.join(d, f"b{n}.npy")
            write_inputs(rng, n, a, b)
            if "mul" in o.jobs:
                rows.append((f"mul{n}", job_mul(o, d, n, a, b), "gemmcli"))
            if "transpose" in o.jobs:
                rows.append((f"transpose{n}", job_transpose(o, d, n, a), "gemmcli transpose"))
            os.remove(a)
            os.remove(b)
    if "csvgz" in o.jobs:
        rows.append((f"csvgz{o.csv_size}", job_csvgz(o, d, rng), "gemmcli"))
    if "npy-large" in o.jobs:
        res = job_npy_large(o, d, rng)
        if res:
            rows.append((f"npy-large{o.large_size}", res, "gemmcli"))
    if "startup" in o.jobs:
        rows.append(("startup", job_startup(o, d, rng), "gemmcli mul 64x64"))
    return rows


def main():
    o = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # so that `finally` cleans up
    d = tempfile.mkdtemp(prefix="gemmcli-e2e-", dir=o.dir)
    start = time.perf_counter()
    try:
        rows = run_jobs(o, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    final_table(rows, time.perf_counter() - start)
    summary = {job: {k: v["wall"] for k, v in res.items()} for job, res, _ in rows}
    print("\nsummary: " + json.dumps(summary))


if __name__ == "__main__":
    main()
