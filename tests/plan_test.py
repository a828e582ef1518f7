#!/usr/bin/env python3
"""The product plan as `mul --dry-run` prints it, without a GPU.

Checks that `mul --dry-run --json` and `kernels --for --json` make the same
choice of kernel and signature for the same product (shapes, dtypes,
--compute; stacks; empty products); that without a GPU the dry run says so
(the plan is the model's device's, and mul itself stops with status 5) and
that --kernel cpu plans the host; that it reads headers only (a .npy whose
payload is missing is planned, and refused by mul) and writes nothing;
that --device-memory plans tiles within the budget, with a kernel for
each tile shape, and refuses a budget below the smallest tiles; that an
integer product has its two routes; that it fails as mul does on bad
operands; and that the output format is decided as mul decides it.
Usage: plan_test.py ./gemmcli"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

from checks import Checks

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
check = Checks()


def run(*args, stdin=None):
    return subprocess.run([GEMMCLI, *args], input=stdin, capture_output=True, timeout=120)


def plan(*args):
    p = run("mul", "--dry-run", "--json", *args)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        return p, None


def npy_sparse(path, dtype, shape):
    """A .npy file of `shape` whose payload is a hole: no disk, no time to
    write, and hours to read at the size headers_only gives it."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": tuple(shape)})
        f.truncate(f.tell() + math.prod(shape) * np.dtype(dtype).itemsize)


def operands(d, name, dtype, batch, m, n, k):
    shape_a = (batch, m, k) if batch else (m, k)
    shape_b = (batch, k, n) if batch else (k, n)
    a, b = os.path.join(d, name + "_a.npy"), os.path.join(d, name + "_b.npy")
    npy_sparse(a, dtype, shape_a)
    npy_sparse(b, dtype, shape_b)
    return a, b


def agreement(d):
    """mul --dry-run and kernels --for choose alike."""
    shapes = [(0, 96, 80, 64), (0, 4096, 4096, 4096), (0, 1, 8192, 8192), (0, 8192, 1, 4096),
              (0, 127, 129, 255), (0, 64, 64, 100000), (16, 256, 256, 256), (3, 1000, 7, 9),
              (0, 0, 5, 5), (0, 5, 5, 0)]
    dtypes = [("float32", "f32", []), ("float64", "f64", []), ("float16", "f16", []),
              ("int32", "i32", []), ("int64", "i64", []), ("uint8", "u8", []),
              ("float32", "f32", ["--compute", "tf32"]), ("float32", "f32", ["--compute", "fp64"]),
              ("float32", "f32", ["--compute", "tf32x3"])]
    for batch, m, n, k in shapes:
        for np_dtype, dt, extra in dtypes:
            name = f"{batch}x{m}x{n}x{k} {dt} {' '.join(extra)}".strip()
            a, b = operands(d, "agree", np_dtype, batch, m, n, k)
            p, dry = plan(a, b, "-o", os.path.join(d, "c.npy"), *extra)
            check(f"{name}: dry run exits 0", p.returncode == 0 and dry is not None,
                  p.stderr.decode()[-300:])
            q = run("kernels", "--for", f"{batch or 1}x{m}x{n}x{k}", "--dtype", dt, "--json",
                    *extra)
            check(f"{name}: kernels --for exits 0", q.returncode == 0, q.stderr.decode()[-300:])
            if p.returncode or q.returncode or dry is None:
                continue
            kf = json.loads(q.stdout)
            check(f"{name}: the same kernel", (dry["kernel"], dry["sig"]) ==
                  (kf["auto"], kf["auto_sig"]),
                  f"dry run {dry['kernel']} ({dry['sig']}), kernels --for {kf['auto']} "
                  f"({kf['auto_sig']})")
            if dry["kernel"]:
                r0 = dry["routes"][0]
                check(f"{name}: route 0 is the plan's kernel",
                      (r0["kernel"], r0["sig"]) == (dry["kernel"], dry["sig"]), r0)
            # An empty product asks no device (kernels --for still lists
            # the candidates on one).
            present = dry["device"]["present"]
            check(f"{name}: the same device", dry["executor"] == "empty" or
                  present == ("model's device" not in kf["device"]), (dry["device"], kf["device"]))


def without_gpu(d):
    """Honest without a GPU: the model's device's plan, saying that mul
    runs the product on the host instead (auto), or that it would stop (a
    device named: --device); the host plan for --kernel cpu."""
    a, b = os.path.join(d, "ga.npy"), os.path.join(d, "gb.npy")
    np.save(a, np.random.default_rng(1).standard_normal((33, 17)).astype(np.float32))
    np.save(b, np.random.default_rng(2).standard_normal((17, 9)).astype(np.float32))
    out = os.path.join(d, "g.npy")
    p, dry = plan(a, b, "-o", out, "--device", "0")
    check("no GPU: dry run exits 0", p.returncode == 0 and dry is not None, p.stderr.decode())
    if dry is None:
        return
    if dry["device"]["present"]:
        print("plan_test: a GPU is present: the checks of a plan without one are skipped")
        return
    real = run("mul", a, b, "-o", out, "--device", "0")
    check("no GPU, --device 0: mul itself stops with status 5", real.returncode == 5,
          real.stderr.decode())
    p, auto = plan(a, b, "-o", out)
    real = run("mul", a, b, "-o", out, "--json")
    rep = json.loads(real.stdout) if real.returncode == 0 else {}
    check("no GPU, auto: the plan says mul runs on the host, and it does",
          p.returncode == 0 and auto["executor"] == "gpu" and auto["note"] and
          "runs the product on the host" in auto["note"] and
          rep.get("kernel") in ("blas", "cpu") and
          b"no GPU on this machine" in real.stderr and os.path.exists(out),
          (auto, real.stderr.decode()[-300:]))
    check("no GPU: the plan says it is the model's device's and that mul would stop",
          dry["executor"] == "gpu" and dry["note"] and "model's device" in dry["note"] and
          "status 5" in dry["note"] and dry["device"]["compute_capability"] == "9.0", dry)
    p, dry = plan(a, b, "-o", out, "--kernel", "cpu")
    check("--kernel cpu: the host's plan, no note",
          p.returncode == 0 and dry["executor"] == "host" and dry["kernel"] == "cpu" and
          dry["note"] is None and dry["device"]["name"] is None, dry)
    text = run("mul", "--dry-run", a, b, "-o", out, "--device", "0")
    check("text: the executor, the kernel, the note", text.returncode == 0 and
          b"executor  gpu" in text.stdout and b"kernel" in text.stdout and
          b"no CUDA device" in text.stdout, text.stdout.decode())


def headers_only(d):
    """A dry run reads headers: operands of 160 GB each are planned at
    once, and no output is written or touched."""
    a, b = operands(d, "big", "float32", 0, 200000, 200000, 200000)
    out = os.path.join(d, "never.npy")
    p, dry = plan(a, b, "-o", out, "--kernel", "cpu")
    check("160 GB operands: planned from their headers", p.returncode == 0 and dry and
          dry["result_shape"] == [200000, 200000] and dry["k"] == 200000, p.stderr.decode())
    check("no output written", not os.path.exists(out))
    keep = os.path.join(d, "keep.npy")
    with open(keep, "wb") as f:
        f.write(b"earlier result")
    os.utime(keep, (1000000000, 1000000000))
    p, _ = plan(a, b, "-o", keep, "--kernel", "cpu")
    st = os.stat(keep)
    with open(keep, "rb") as f:
        kept = f.read()
    check("an existing output is left as it is", p.returncode == 0 and
          kept == b"earlier result" and st.st_mtime == 1000000000, (kept, st.st_mtime))
    csv = os.path.join(d, "a.csv")
    with open(csv, "w") as f:
        f.write("1,2,3\n4,5,6\n")
    bb = os.path.join(d, "b3.npy")
    np.save(bb, np.ones((3, 2)))
    p, dry = plan(csv, bb, "-o", "-")
    check("CSV: its text gives the shape; stdout keeps its format", p.returncode == 0 and dry and
          dry["a"]["shape"] == [2, 3] and dry["output"]["format"] == "csv" and
          dry["result_dtype"] == "f64", p.stderr.decode() + str(dry))


def tiles(d):
    """--device-memory: tiles within the budget, each tile shape with a
    kernel; a budget below the smallest tiles refused as mul refuses it."""
    m, n, k = 4096, 3000, 5000
    a, b = operands(d, "tiles", "float32", 0, m, n, k)
    out = os.path.join(d, "t.npy")
    p, dry = plan(a, b, "-o", out, "--device-memory", "8G")
    check("8 GiB: in one GPU's memory", p.returncode == 0 and dry and dry["executor"] == "gpu",
          p.stderr.decode() + str(dry and dry["executor"]))
    for budget, verify in (("64M", []), ("100M", ["--verify"]), ("1G", ["--devices", "0,1"])):
        name = f"--device-memory {budget} {' '.join(verify)}"
        p, dry = plan(a, b, "-o", out, "--device-memory", budget, *verify)
        ok = p.returncode == 0 and dry and dry["executor"] == "tiles"
        check(f"{name}: tiles", ok, p.stderr.decode() + str(dry and dry["executor"]))
        if not ok:
            continue
        t = dry["routes"][0]["tiles"]
        cap = {"64M": 64 << 20, "100M": 100 << 20, "1G": 1 << 30}[budget]
        check(f"{name}: within the budget", t["device_bytes"] <= cap and
              dry["budget_bytes"] == cap, t)
        check(f"{name}: the tiles cover C", t["tiles"] == math.ceil(m / t["tm"]) *
              math.ceil(n / t["tn"]), t)
        shapes = {tuple(x["mnk"]) for x in t["kernels"]}
        want = {(rm, cn, kk) for rm in {t["tm"], m - (math.ceil(m / t["tm"]) - 1) * t["tm"]}
                for cn in {t["tn"], n - (math.ceil(n / t["tn"]) - 1) * t["tn"]}
                for kk in {t["tk"], k - (math.ceil(k / t["tk"]) - 1) * t["tk"]}}
        check(f"{name}: a kernel for every tile shape", shapes == want, (shapes, want))
    # The whole job's model: in core, C copied out after the product and
    # written after it; in tiles of whole rows with B kept, written as the
    # tiles land, so less of it is left after them; standard output takes
    # C whole at the end.
    p, core = plan(a, b, "-o", out)
    p2, kept = plan(a, b, "-o", out, "--device-memory", "1G", "--devices", "0")
    p3, piped = plan(a, b, "-o", "-", "--device-memory", "1G", "--devices", "0")
    ok = all(x.returncode == 0 for x in (p, p2, p3)) and core and kept and piped
    check("the whole job: a model in the plan", ok and all(
        j["job"] and abs(j["job"]["total_s"] - sum(v for key, v in j["job"].items()
                                                   if key != "total_s") - 0.15) < 1e-6
        for j in (core, kept, piped)), str(core and core.get("job")))
    if ok:
        t = kept["routes"][0]["tiles"]
        check("the whole job: in core, C copied out, no GPUs opened beyond the reading",
              core["job"]["copy_out_s"] > 0 and core["job"]["start_s"] == 0, core["job"])
        check("the whole job: bands of whole rows with B kept, written as they land",
              t["b_kept"] and t["tn"] == n and kept["job"]["copy_out_s"] == 0 and
              kept["job"]["write_s"] < piped["job"]["write_s"], (t, kept["job"], piped["job"]))
    small = run("mul", "--dry-run", a, b, "-o", out, "--device-memory", "1K")
    check("1 KiB: refused, too little for the smallest tiles (status 5)",
          small.returncode == 5 and b"too little" in small.stderr, small.stderr.decode())
    ia, ib = operands(d, "itiles", "int32", 0, m, n, k)
    p, dry = plan(ia, ib, "-o", out, "--device-memory", "64M")
    check("int32 in tiles: both routes tiled", p.returncode == 0 and dry and
          dry["executor"] == "tiles" and len(dry["routes"]) == 2 and
          all(r["tiles"] for r in dry["routes"]), p.stderr.decode() + str(dry))


def routes(d):
    """An integer product's two routes, and a route that cannot run."""
    a, b = operands(d, "int", "int32", 0, 300, 200, 100)
    out = os.path.join(d, "i.npy")
    p, dry = plan(a, b, "-o", out)
    check("int32: two routes, int32 from byte limbs beyond the FP64 bound",
          p.returncode == 0 and dry and
          [r["when"] for r in dry["routes"]] == ["within the FP64 bound", "beyond the FP64 bound"]
          and dry["routes"][1]["sig"] == "i32" and dry["routes"][1]["kernel"] == "i8_limbs", dry)
    p, dry = plan(a, b, "-o", out, "--kernel", "f64_naive")
    check("--kernel f64_naive on int32: FP64 within the bound, the other route cannot run",
          p.returncode == 0 and dry and dry["routes"][0]["kernel"] == "f64_naive" and
          dry["routes"][1]["kernel"] is None and "f64_naive" in (dry["routes"][1]["error"] or ""),
          dry)
    fa, fb = operands(d, "f", "float32", 0, 30, 20, 10)
    p, dry = plan(fa, fb, "-o", out)
    check("float32: one route", p.returncode == 0 and dry and len(dry["routes"]) == 1 and
          dry["routes"][0]["when"] == "always", dry)


def failures(d):
    """Bad operands fail as mul fails, with the same status."""
    a, _ = operands(d, "bad", "float32", 0, 30, 20, 10)
    _, b = operands(d, "bad2", "float32", 0, 30, 20, 11)
    out = os.path.join(d, "f.npy")
    cases = [
        ("shapes that do not match", [a, b, "-o", out, "--kernel", "cpu"]),
        ("an unknown kernel", [a, a, "-o", out, "--kernel", "nosuch"]),
        ("a kernel that cannot compute it", [a, b.replace("bad2", "bad"), "-o", out, "--kernel",
                                             "f16_simt"]),
        ("an output format it cannot tell", [a, b, "-o", os.path.join(d, "c.xyz")]),
        ("a C0 that does not broadcast", [a, b.replace("bad2", "bad"), "-o", out, "-c", a,
                                          "--beta", "1", "--kernel", "cpu"]),
    ]
    for what, args in cases:
        dry = run("mul", "--dry-run", *args)
        real = run("mul", *args)
        check(f"{what}: the dry run fails as mul does", dry.returncode != 0 and
              dry.returncode == real.returncode, (dry.returncode, real.returncode,
                                                  dry.stderr.decode()))


def main():
    with tempfile.TemporaryDirectory(prefix="gemmcli-plan.") as d:
        agreement(d)
        without_gpu(d)
        headers_only(d)
        tiles(d)
        routes(d)
        failures(d)
    return check.summary("plan")


if __name__ == "__main__":
    sys.exit(main())
