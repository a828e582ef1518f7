#!/usr/bin/env python3
"""Products computed in tiles on the GPU (src/scale/tiled_run.c): --device-memory
at 1/2, 1/8 and 1/64 of the in-core need, ragged shapes, float16, float32
and float64, a broadcast stack, --verify tile by tile and NumPy's answer;
C0 with alpha and beta (whole and broadcast); integer products, exact
below and beyond 2^53; tiles written into .npy and raw files as they
finish, and standard output; --devices, and auto's sharing of a large
product among the host's GPUs without it; the refusals, which keep the
file they would have replaced.  Prints 'tiled-gpu: N passed, M failed';
'skipped: ...' without a device.  With --bench, times 32768^2 float32 in
core and at half its need (a benchmark, not a test).

usage: tiled_gpu.py [path/to/gemmcli] [--bench [--bench-only]]
"""
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

args = [a for a in sys.argv[1:] if not a.startswith("--")]
GEMMCLI = os.path.abspath(args[0] if args else "./gemmcli")
rng = np.random.default_rng(5)
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def run(*a):
    return subprocess.run([GEMMCLI, *map(str, a)], capture_output=True, timeout=900)


def need(a, b, c_es):
    """A and B in their own type and C: what in-core work holds at least."""
    m, n = a.shape[-2], b.shape[-1]
    batch = int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))) if a.ndim > 2 else 1
    return a.nbytes + b.nbytes + batch * m * n * c_es


def bench(d):
    n = 32768
    a, b, c = (os.path.join(d, f"{x}.npy") for x in "abc")
    for p in (a, b):
        np.save(p, rng.standard_normal((n, n), dtype=np.float32))
    whole = 3 * n * n * 4
    am, bm = np.load(a, mmap_mode="r"), np.load(b, mmap_mode="r")
    rows = rng.choice(n, 4, replace=False)
    want = am[rows].astype(np.float64) @ bm.astype(np.float64)
    for cap in ([], ["--device-memory", str(whole // 2)], ["--devices", "0"],
                ["--devices", "all"]):
        r = run("mul", a, b, "-o", c, "--json", *cap)
        rep = json.loads(r.stdout) if r.returncode == 0 else {}
        err = None
        if r.returncode == 0:
            got = np.load(c, mmap_mode="r")[rows].astype(np.float64)
            err = np.linalg.norm(got - want) / np.linalg.norm(want)
            check(f"bench {' '.join(cap)}: four rows against NumPy", err < 1e-5, err)
        print(f"bench 32768^2 f32 {' '.join(cap) or 'in core'}: "
              f"{rep.get('kernel_gflops', 0) / 1000:.1f} TFLOP/s, {rep.get('ms')}, "
              f"{rep.get('tiles', '')} rows' error {err} "
              f"{r.stderr.decode()[-200:] if r.returncode else ''}")
        os.remove(c) if os.path.exists(c) else None


def host_gpus():
    """The host's GPUs as nvidia-smi lists them (None: it cannot say)."""
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return sum(line.startswith("GPU ") for line in r.stdout.splitlines()) or None


def auto_share(d):
    """A 20480^2 float32 product bound for a .npy file, no --devices: the
    dry run and the run agree on whether auto shares it among the host's
    GPUs, which it must on a host of two or more (the model finds them
    faster from about 20480^2 on the H200s), and not on one; four rows of
    C against NumPy either way, and --devices 0 keeps one GPU."""
    n = 20480
    a, b, c = (os.path.join(d, f"s{x}.npy") for x in "abc")
    np.save(a, rng.standard_normal((n, n), dtype=np.float32))
    np.save(b, rng.standard_normal((n, n), dtype=np.float32))
    dry = run("mul", a, b, "-o", c, "--dry-run", "--json")
    planned = json.loads(dry.stdout).get("shared") if dry.returncode == 0 else None
    gpus = host_gpus()
    check("auto share: the dry run's plan", planned is not None and
          (gpus is None or planned == (gpus >= 2)), (gpus, planned, dry.stderr[-300:]))
    am, bm = np.load(a, mmap_mode="r"), np.load(b, mmap_mode="r")
    rows = rng.choice(n, 4, replace=False)
    want = am[rows].astype(np.float64) @ bm.astype(np.float64)
    for extra in ([], ["--devices", "0"]):
        r = run("mul", a, b, "-o", c, "--json", *extra)
        rep = json.loads(r.stdout) if r.returncode == 0 else {}
        tiles = rep.get("tiles") or ""
        shared = "the host's GPUs" in tiles
        err = None
        if r.returncode == 0:
            got = np.load(c, mmap_mode="r")[rows].astype(np.float64)
            err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        check(f"auto share {' '.join(extra) or '(no --devices)'}: runs, four rows against NumPy",
              err is not None and err < 1e-5, (r.returncode, r.stderr.decode()[-300:], err))
        check(f"auto share {' '.join(extra) or '(no --devices)'}: shared as planned",
              shared == (planned and not extra) and
              (not shared or ("GPU 0" in tiles and "GPU 1" in tiles)), tiles)
        os.remove(c) if os.path.exists(c) else None
    for f in (a, b):
        os.remove(f)


def main():
    probe = run("kernels", "--details")
    if b"no CUDA device" in probe.stderr:
        print("skipped: no CUDA device on this machine")
        return 0
    with tempfile.TemporaryDirectory() as d:
        p = lambda name: os.path.join(d, name)
        auto_share(d)
        if "--bench" in sys.argv:
            bench(d)
            if "--bench-only" in sys.argv:
                print(f"tiled-gpu: {passed} passed, {failed} failed")
                return 1 if failed else 0
        cases = [("f32", np.float32, (4100, 4300), (4300, 3900), 4, 1e-5),
                 ("f64", np.float64, (4100, 4300), (4300, 3900), 8, 1e-12),
                 ("f16", np.float16, (6100, 6300), (6300, 5900), 4, 4e-3),
                 ("f32 stack", np.float32, (3, 3000, 3300), (3300, 2900), 4, 1e-5)]
        for name, dt, sa, sb, c_es, tol in cases:
            a = rng.standard_normal(sa).astype(dt)
            b = rng.standard_normal(sb).astype(dt)
            np.save(p("a.npy"), a)
            np.save(p("b.npy"), b)
            want = a.astype(np.float64) @ b.astype(np.float64)
            full = need(a, b, c_es)
            for frac in (2, 8, 64):
                cap = full // frac
                r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "--json", "--verify",
                        "--device-memory", cap)
                ok = r.returncode == 0
                rep = json.loads(r.stdout) if ok else {}
                tiles = rep.get("tiles") or ""
                check(f"{name} at 1/{frac}", ok and rep["verify"]["ok"] and tiles and
                      int(tiles.split()[0]) > 1, (r.returncode, r.stderr.decode()[-300:], tiles))
                if ok:
                    got = np.load(p("c.npy"))
                    err = np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want)
                    check(f"{name} at 1/{frac} against NumPy", got.shape == want.shape and
                          got.dtype == a.dtype and err < tol, err)
            # Without --verify a .npy or raw file takes each tile as it
            # finishes (float32 and float64: C's type is the result's);
            # standard output gets the result whole.
            for out in ("w.npy", "w.bin", "-"):
                r = run("mul", p("a.npy"), p("b.npy"), "-o", p(out) if out != "-" else out,
                        "--device-memory", full // 8, "--quiet")
                ok = r.returncode == 0
                if ok and out == "w.npy":
                    got = np.load(p(out))
                elif ok and out == "w.bin":
                    got = np.fromfile(p(out), dtype=a.dtype).reshape(want.shape)
                elif ok:
                    got = np.load(io.BytesIO(r.stdout))
                err = (np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want)
                       if ok and got.shape == want.shape else None)
                check(f"{name} at 1/8 to {out}", ok and got.dtype == a.dtype and
                      err is not None and err < tol, (r.returncode, r.stderr.decode()[-300:], err))
        # --devices: the listed GPUs, or all of them; one tile or many.
        a = rng.standard_normal((2000, 1800)).astype(np.float32)
        b = rng.standard_normal((1800, 2200)).astype(np.float32)
        np.save(p("a.npy"), a)
        np.save(p("b.npy"), b)
        want = a.astype(np.float64) @ b
        for extra in (["--devices", "0"], ["--devices", "all"],
                      ["--devices", "all", "--device-memory", "8M"]):
            r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "--json", *extra)
            ok = r.returncode == 0
            if ok:
                got = np.load(p("c.npy"))
                err = np.linalg.norm(got - want) / np.linalg.norm(want)
            check(f"mul {' '.join(extra)}", ok and err < 1e-5 and "GPU 0" in
                  json.loads(r.stdout)["tiles"], r.stderr.decode()[-300:])
        # C0: C = alpha A @ B + beta C0, C0 broadcast from a row, in tiles
        # at 1/8 of the need, against NumPy; --verify's reference too.
        for name, dt, tol in (("f32", np.float32, 1e-5), ("f64", np.float64, 1e-12),
                              ("f16", np.float16, 4e-3)):
            a = rng.standard_normal((2100, 1900)).astype(dt)
            b = rng.standard_normal((1900, 2300)).astype(dt)
            for c0_shape in ((2100, 2300), (2300,)):
                c0 = rng.standard_normal(c0_shape).astype(dt)
                for f, x in (("a", a), ("b", b), ("c0", c0)):
                    np.save(p(f + ".npy"), x)
                want = 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) - 0.5 * c0
                r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "-c", p("c0.npy"),
                        "--alpha", 1.5, "--beta", -0.5, "--verify", "--json",
                        "--device-memory", need(a, b, 8) // 8)
                ok = r.returncode == 0
                if ok:
                    rep = json.loads(r.stdout)
                    got = np.load(p("c.npy")).astype(np.float64)
                    err = np.linalg.norm(got - want) / np.linalg.norm(want)
                check(f"{name} C0 {c0_shape} in tiles", ok and rep["verify"]["ok"] and
                      int(rep["tiles"].split()[0]) > 1 and err < tol,
                      (r.returncode, r.stderr.decode()[-300:], ok and err))
        # Integer products in tiles: exact, as NumPy's (wrapping) int64,
        # through FP64 below 2^53 and int64 beyond, with alpha, beta and C0.
        ia = rng.integers(-1000, 1000, (1500, 1700), dtype=np.int32)
        ib = rng.integers(-1000, 1000, (1700, 1300), dtype=np.int32)
        big_a = rng.integers(-2**40, 2**40, (1100, 1300), dtype=np.int64)
        big_b = rng.integers(-2**40, 2**40, (1300, 900), dtype=np.int64)
        for name, x, y in (("int32", ia, ib), ("int64 beyond 2^53", big_a, big_b)):
            c0 = rng.integers(-50, 50, (x.shape[0], y.shape[1]), dtype=x.dtype)
            for f, t in (("a", x), ("b", y), ("c0", c0)):
                np.save(p(f + ".npy"), t)
            with np.errstate(over="ignore"):
                want = 3 * (x @ y) + 2 * c0
            for extra in ([], ["--devices", "all"]):
                r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "-c", p("c0.npy"),
                        "--alpha", 3, "--beta", 2, "--verify", "--json",
                        "--device-memory", need(x, y, 8) // 4, *extra)
                ok = r.returncode == 0
                got = np.load(p("c.npy")) if ok else None
                check(f"{name} in tiles {' '.join(extra)}", ok and
                      json.loads(r.stdout)["verify"]["ok"] and got.dtype == want.dtype and
                      np.array_equal(got, want), (r.returncode, r.stderr.decode()[-300:]))
        # Refusals: too little memory, after the output was begun: the file
        # it would replace is kept, with its mode, and nothing else is left.
        np.save(p("a.npy"), rng.standard_normal((2000, 2000)).astype(np.float32))
        np.save(p("x.npy"), np.arange(6.0))
        os.chmod(p("x.npy"), 0o640)
        before = sorted(os.listdir(d))
        r = run("mul", p("a.npy"), p("a.npy"), "-o", p("x.npy"), "--device-memory", "100K")
        check("too little memory -> 5", r.returncode == 5 and b"too little" in r.stderr and
              np.array_equal(np.load(p("x.npy")), np.arange(6.0)) and
              os.stat(p("x.npy")).st_mode & 0o777 == 0o640 and sorted(os.listdir(d)) == before,
              (r.returncode, r.stderr.decode()[-300:], sorted(os.listdir(d))))
        r = run("mul", p("a.npy"), p("b.npy"), "-o", p("x.npy"), "--device-memory", "lots")
        check("bad size -> 2", r.returncode == 2 and b"--device-memory" in r.stderr)
        r = run("mul", p("a.npy"), p("b.npy"), "-o", p("x.npy"), "--devices", "0,0")
        check("a device twice -> 2", r.returncode == 2 and b"twice" in r.stderr)
    print(f"tiled-gpu: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
