#!/usr/bin/env python3
"""The tuner and its cache on a GPU: `gemmcli tune` stores each signature's
fastest kernel, `mul` takes a cached choice that can run (and only such a
one), `mul --tune` tunes on a miss without touching C0's values, and a
cache that cannot be written costs one warning line, never the product.
XDG_CACHE_HOME points into a temporary directory throughout.  Prints
'tune-gpu: N passed, M failed'; 'skipped: ...' without a device.

usage: tune_gpu.py [path/to/gemmcli]
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
rng = np.random.default_rng(5)
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def run(*args, env=None):
    return subprocess.run([GEMMCLI, *map(str, args)], capture_output=True, env=env, timeout=600)


def bucket(d):
    """The cache's bucket of one dimension (src/plan/tune_cache.h)."""
    align = 8 if d % 8 == 0 else 4 if d % 4 == 0 else 1
    return f"{d}/{align}" if d <= 16 else f"q{round(4 * math.log2(d))}/{align}"


def entries(path):
    """The cache's lines after the header, as lists of fields."""
    with open(path) as f:
        lines = f.read().splitlines()
    return lines[0], [line.split() for line in lines[1:]]


def summary_kernel(stderr):
    """The kernel and who chose it, from the summary's first line."""
    first = stderr.decode(errors="replace").splitlines()[0]
    rest = first.split(", kernel ", 1)[1]
    return rest.split(" ", 1)[0], rest


def rel_err(got, ref):
    ref = np.asarray(ref, np.float64)
    return np.linalg.norm(np.asarray(got, np.float64) - ref) / max(np.linalg.norm(ref), 1e-300)


def rates_file(xdg):
    """The one rates file under the cache directory xdg, or None."""
    where = os.path.join(xdg, "gemmcli")
    found = [f for f in os.listdir(where) if f.startswith("rates-") and f.endswith(".txt")] \
        if os.path.isdir(where) else []
    return os.path.join(where, found[0]) if len(found) == 1 else None


def calibration(d):
    """auto's rates measured on this GPU: by tune --calibrate, on mul's first
    auto choice when none are kept, never with --no-calibrate, again when the
    kept ones are another driver's; and kernels --for says which it plans
    with."""
    xdg = os.path.join(d, "xdg-rates")
    env = dict(os.environ, XDG_CACHE_HOME=xdg)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    b = rng.standard_normal((200, 100)).astype(np.float32)
    np.save(os.path.join(d, "ra.npy"), a)
    np.save(os.path.join(d, "rb.npy"), b)
    mul = ["mul", os.path.join(d, "ra.npy"), os.path.join(d, "rb.npy"), "-o",
           os.path.join(d, "rc.npy"), "--json"]

    r = run(*mul, "--no-calibrate", env=env)
    rep = json.loads(r.stdout or b"{}")
    check("mul --no-calibrate plans with the table scaled to this GPU",
          r.returncode == 0 and rep.get("rates_source") == "scaled", r.stdout[-500:])
    check("and measures nothing", rates_file(xdg) is None, os.listdir(xdg) if
          os.path.isdir(xdg) else "")

    r = run(*mul, env=env)
    rep = json.loads(r.stdout or b"{}")
    check("mul's first auto choice measures this GPU's rates",
          r.returncode == 0 and b"measuring this GPU" in r.stderr and
          rep.get("rates_source") == "measured", r.stderr[-800:])
    path = rates_file(xdg)
    check("and keeps them", path is not None, os.listdir(os.path.join(xdg, "gemmcli")))
    got = np.load(os.path.join(d, "rc.npy"))
    check("the product is right", rel_err(got, a.astype(np.float64) @ b) < 1e-5)
    r = run(*mul, env=env)
    check("the next run measures nothing", r.returncode == 0 and b"measuring" not in r.stderr
          and json.loads(r.stdout or b"{}").get("rates_source") == "measured", r.stderr[-500:])
    if path is None:
        return
    with open(path) as f:
        text = f.read()
    lines = text.splitlines()
    rates = {tuple(x.split()[1:3]): x.split()[3:] for x in lines if x.startswith("rate ")}
    check("the file's header", lines[0] == "# gemmcli rates 8", lines[:3])
    for key in (("f32", "edge_peel"), ("f16", "cluster_multicast"), ("f64", "f64_dmma"),
                ("f32", "gemv")):
        check(f"a rate for {key}", key in rates and max(map(float, rates[key][:2])) > 0,
              rates.get(key))
        # (the floor: a tiny product's time, launches and all, in us)
        check(f"a floor for {key}", key in rates and len(rates[key]) == 11 and
              1 < float(rates[key][4]) < 200, rates.get(key))
    # (16-bit kernels: a factor of their own for rows of an odd number of values)
    odd = rates.get(("f16", "mma_sync"))
    check("an odd rows' factor for f16 mma_sync", odd is not None and float(odd[5]) > 0, odd)
    # (the thin stages: a factor of their own for a few rows over a wide B)
    few = rates.get(("f16", "f16_thin"))
    check("a few rows' factor for f16_thin", few is not None and float(few[6]) > 0, few)
    # (and rates of their own for the N path, more than 32 rows)
    check("f16_thin's N path measured apart", few is not None and float(few[8]) > 0, few)
    # (a tiled stage: a ragged factor of its own for a short K, a memory-bound one none)
    short = rates.get(("f32", "cp_async"))
    check("a short K's factor for f32 cp_async", short is not None and float(short[9]) > 0, short)
    check("none for f16_thin", few is not None and float(few[9]) == 0, few)
    # (a tiled stage's factor for its operands' bytes in sliced runs: the
    # calibration's 128x128x262144, where the bytes bind float64's tiles
    # on an H100; on a GPU whose memory outruns its FP64, an H200, the
    # model has the compute binding there, and no bytes' factor is owed)
    stream = rates.get(("f64", "f64_dmma"))
    r = run("kernels", "--for", "128x128x262144", "--dtype", "f64", "--json", env=env)
    est = [c for c in json.loads(r.stdout or b"{}").get("candidates", [])
           if c.get("kernel") == "f64_dmma"]
    bound = bool(est) and est[0]["memory_ms"] > est[0]["compute_ms"]
    check("a bytes' factor for f64 f64_dmma where the model has its bytes binding",
          stream is not None and bool(est) and (float(stream[10]) > 0 or not bound),
          (stream, est))
    check("none for f64_thin", rates.get(("f64", "f64_thin")) is not None and
          float(rates[("f64", "f64_thin")][10]) == 0, rates.get(("f64", "f64_thin")))

    r = run("kernels", "--for", "4096x4096x4096", "--dtype", "f16", "--json", env=env)
    src = json.loads(r.stdout or b"{}").get("rates", {})
    check("kernels --for plans with the measured rates", src.get("source") == "measured" and
          "measured on this GPU" in src.get("words", ""), r.stdout[:800])
    r = run("kernels", "--for", "4096x4096x4096", "--dtype", "f16", env=env)
    check("and says so", b"rates: measured on this GPU" in r.stdout, r.stdout[:400])
    # The kept file, copied and read by --rates without the cache, plans
    # the same products the same way (estimates and choice).
    copy = os.path.join(d, "copied-rates.txt")
    with open(copy, "w") as f:
        f.write(text)
    bare = dict(os.environ, XDG_CACHE_HOME=os.path.join(d, "xdg-empty"))
    for shape in ("4096x4096x4096", "644x117x14028", "9768x4x37373"):
        kept = json.loads(run("kernels", "--for", shape, "--dtype", "f16", "--json",
                              env=env).stdout or b"{}")
        read = json.loads(run("kernels", "--for", shape, "--dtype", "f16", "--json", "--rates",
                              copy, env=bare).stdout or b"{}")
        est = lambda o: {(c["kernel"], c["sig"]): c["ms"] for c in o.get("candidates", [])}
        check(f"kernels --for {shape} --rates (the kept file, copied) plans as the cache does",
              kept.get("auto") and kept.get("auto") == read.get("auto") and
              est(kept) == est(read) and read.get("rates", {}).get("file") == copy,
              (kept.get("auto"), read.get("auto")))

    # Another driver's rates are stale: measured again, and replaced.
    device = next(x for x in lines if x.startswith("device "))
    fields = device.split()
    fields[-1] = str(int(fields[-1]) + 1)
    with open(path, "w") as f:
        f.write(text.replace(device, " ".join(fields)))
    r = run(*mul, env=env)
    check("another driver's rates are measured again", r.returncode == 0 and
          b"out of date" in r.stderr and b"measuring" in r.stderr, r.stderr[-800:])
    with open(path) as f:
        check("and replaced", device in f.read())

    r = run("tune", "--calibrate", env=env)
    out = r.stdout.decode()
    secs = [float(x.split()[2]) for x in out.splitlines() if x.startswith("measured in ")]
    check("tune --calibrate measures and prints the rates", r.returncode == 0 and
          "edge_peel" in out and "kept in " + path in out and secs, out[-1500:])
    check("in seconds, not minutes", secs and secs[0] < 30, secs)
    print(f"calibration: {secs[0] if secs else '?'} s")


def main():
    if b"no CUDA device" in run("kernels", "--details").stderr:
        print("skipped: no CUDA device on this machine")
        return 0
    with tempfile.TemporaryDirectory() as d:
        p = lambda n: os.path.join(d, n)
        env = dict(os.environ, XDG_CACHE_HOME=p("xdg"))
        path = p("xdg/gemmcli/tune.txt")
        calibration(d)
        # (the rest plans with this GPU's rates, measured up front)
        r = run("tune", "--calibrate", env=env)
        check("tune --calibrate", r.returncode == 0, r.stderr[-500:])

        # tune: a table and a winner per size and dtype, one entry a signature and bucket.
        r = run("tune", "--dtype", "f32,f16", "256", "2x128x96x64", env=env)
        out = r.stdout.decode()
        check("tune exits 0", r.returncode == 0, r.stderr[-500:])
        check("tune prints a winner per size and dtype", out.count("winner: ") == 4, out[-2000:])
        check("tune times cuBLAS beside them", "cublas" in out and "TFLOP/s" in out, out[:1000])
        check("tune says where it stored", out.count("stored in " + path) == 4, out[-1000:])
        header, rows = entries(path)
        check("the cache's header", header == "# gemmcli tune cache 1", header)
        keys = [" ".join(f[:8]) for f in rows]
        check("one line a key", len(keys) == len(set(keys)), keys)
        check("twelve fields a line", all(len(f) == 12 for f in rows), rows)
        sigs = sorted({f[3] for f in rows})
        check("f32 and f16 entries", sigs == ["f16", "f32"], sigs)
        want = {f"{s} 1/1 {bucket(256)} {bucket(256)} {bucket(256)}" for s in ("f32", "f16")}
        want |= {f"{s} {bucket(2)} {bucket(128)} {bucket(96)} {bucket(64)}" for s in ("f32", "f16")}
        got = {" ".join(f[3:8]) for f in rows}
        check("the buckets of the sizes", got == want, (got, want))
        device = rows[0][:3]
        r = run("tune", "--show", env=env)
        check("tune --show lists them", r.returncode == 0 and
              sum(x.startswith(device[0] + " ") for x in r.stdout.decode().splitlines()) ==
              len(rows), r.stdout[:1000])

        # mul takes the cached choice of its bucket.
        a = rng.standard_normal((256, 256)).astype(np.float32)
        b = rng.standard_normal((256, 256)).astype(np.float32)
        np.save(p("a.npy"), a)
        np.save(p("b.npy"), b)
        f32_entry = next(f for f in rows if f[3] == "f32" and f[4] == "1/1")
        r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "--verify", env=env)
        kern, words = summary_kernel(r.stderr)
        check("mul with a cached choice", r.returncode == 0, r.stderr[-500:])
        check("mul runs the cached kernel", kern == f32_entry[8], (kern, f32_entry))
        check("the summary says it came from the cache", "(auto: tuned, cache)" in words, words)
        r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "--json", env=env)
        js = json.loads(r.stdout)
        check("--json says so", js.get("auto_source") == "cache", js)

        # Entries that cannot run this product are passed over.
        a2 = rng.standard_normal((100, 70)).astype(np.float32)
        b2 = rng.standard_normal((70, 50)).astype(np.float32)
        np.save(p("a2.npy"), a2)
        np.save(p("b2.npy"), b2)
        r = run("mul", p("a2.npy"), p("b2.npy"), "-o", p("c2.npy"), env=env)
        shipped, words = summary_kernel(r.stderr)
        check("no entry: the shipped choice", r.returncode == 0 and words.startswith(
            shipped + " (auto) "), words)
        key = " ".join(device) + f" f32 1/1 {bucket(100)} {bucket(50)} {bucket(70)}"
        for bogus in ("no_such_kernel", "wgmma", "naive", "cpu", "cublas"):
            with open(path, "a") as f:
                f.write(f"{key} {bogus} 0.001 0.01 2026-01-01T00:00:00Z\n")
            r = run("mul", p("a2.npy"), p("b2.npy"), "-o", p("c2.npy"), "--verify", env=env)
            kern, words = summary_kernel(r.stderr)
            check(f"a cached '{bogus}' is passed over", r.returncode == 0 and kern == shipped and
                  "(auto)" in words, words)

        # mul --tune on a miss, with C0: C0's file and values are untouched.
        m, n, k = 96, 80, 72
        a3 = rng.standard_normal((m, k)).astype(np.float32)
        b3 = rng.standard_normal((k, n)).astype(np.float32)
        c0 = rng.standard_normal((m, n)).astype(np.float32)
        for name, arr in (("a3", a3), ("b3", b3), ("c0", c0)):
            np.save(p(name + ".npy"), arr)
        before = open(p("c0.npy"), "rb").read()
        r = run("mul", p("a3.npy"), p("b3.npy"), "-c", p("c0.npy"), "--alpha", "0.5", "--beta",
                "-2", "-o", p("c3.npy"), "--tune", "--verify", env=env)
        kern, words = summary_kernel(r.stderr)
        check("mul --tune", r.returncode == 0, r.stderr[-500:])
        check("the summary says it was tuned now", "(auto: tuned, this run)" in words, words)
        if r.returncode == 0:
            ref = 0.5 * (a3.astype(np.float64) @ b3) - 2 * c0.astype(np.float64)
            check("mul --tune's result with beta", rel_err(np.load(p("c3.npy")), ref) < 1e-5)
        check("C0's file is untouched", open(p("c0.npy"), "rb").read() == before)
        _, rows = entries(path)
        key3 = " ".join(device) + f" f32 1/1 {bucket(m)} {bucket(n)} {bucket(k)}"
        stored = [f for f in rows if " ".join(f[:8]) == key3]
        check("mul --tune stored its winner", len(stored) == 1 and stored[0][8] == kern,
              (stored, kern))
        r = run("mul", p("a3.npy"), p("b3.npy"), "-o", p("c3.npy"), "--tune", env=env)
        kern2, words = summary_kernel(r.stderr)
        check("the next run takes it from the cache", r.returncode == 0 and kern2 == kern and
              "(auto: tuned, cache)" in words, words)

        # An exact integer stack: each signature it may take is tuned and
        # stored: f64, int32 from byte limbs (on Hopper) and i64.
        ai = rng.integers(-50, 50, (2, 40, 24)).astype(np.int32)
        bi = rng.integers(-50, 50, (2, 24, 36)).astype(np.int32)
        np.save(p("ai.npy"), ai)
        np.save(p("bi.npy"), bi)
        r = run("mul", p("ai.npy"), p("bi.npy"), "-o", p("ci.npy"), "--tune", "--verify", env=env)
        check("mul --tune on integers", r.returncode == 0, r.stderr[-500:])
        if r.returncode == 0:
            check("its result is exact", np.array_equal(np.load(p("ci.npy")), ai @ bi))
        _, rows = entries(path)
        tail = f"{bucket(2)} {bucket(40)} {bucket(36)} {bucket(24)}"
        limbs = any(k["name"] == "i8_limbs" and k.get("available") for k in
                    json.loads(run("kernels", "--json", "--details", env=env).stdout))
        check("f64, i32 and i64 entries",
              sorted(f[3] for f in rows if " ".join(f[4:8]) == tail) ==
              (["f64", "i32", "i64"] if limbs else ["f64", "i64"]), rows[-3:])

        # A cache that cannot be written: one warning line, the product as usual.
        plain = p("plain")
        with open(plain, "w") as f:
            f.write("x")
        broken = dict(os.environ, XDG_CACHE_HOME=plain)
        r = run("mul", p("a3.npy"), p("b3.npy"), "-o", "-", "--format", "csv", "--tune",
                env=broken)
        check("mul --tune with an unwritable cache", r.returncode == 0, r.stderr[-500:])
        warnings = [line for line in r.stderr.decode().splitlines() if "warning" in line]
        check("one warning naming the path", len(warnings) == 1 and plain in warnings[0],
              warnings)
        try:
            got = np.loadtxt(r.stdout.decode().splitlines(), delimiter=",", ndmin=2)
            check("stdout holds the matrix alone", rel_err(got, a3.astype(np.float64) @ b3) <
                  1e-5)
        except ValueError as e:
            check("stdout holds the matrix alone", False, e)
        r = run("tune", "64", env=broken)
        check("tune with an unwritable cache: status 4", r.returncode == 4 and
              b"warning" in r.stderr and b"winner: " in r.stdout, r.stderr[-500:])
        r = run("tune", "--clear", env=env)
        check("tune --clear", r.returncode == 0 and not os.path.exists(path), r.stdout)
    print(f"tune-gpu: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
