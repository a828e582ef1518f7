#!/usr/bin/env python3
"""The CLI end to end on a GPU: every registered kernel by name through
`gemmcli mul/transpose --verify` on files NumPy wrote, results checked by
NumPy too.  Prints 'cli-gpu: N passed, M failed'; 'skipped: ...' without a
device.

usage: cli_gpu.py [path/to/gemmcli]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
rng = np.random.default_rng(11)
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def run(*args, stdin=None):
    return subprocess.run([GEMMCLI, *map(str, args)], capture_output=True, input=stdin,
                          timeout=600)


def main():
    kernels = json.loads(run("kernels", "--json").stdout)
    probe = run("kernels", "--details")
    if b"no CUDA device" in probe.stderr:
        print("skipped: no CUDA device on this machine")
        return 0
    mul = [k["name"] for k in kernels if k["operation"] == "mul"]
    tra = [k["name"] for k in kernels if k["operation"] == "transpose"]
    with tempfile.TemporaryDirectory() as d:
        p = lambda n: os.path.join(d, n)
        for m, n, k in [(1, 1, 1), (33, 65, 17), (300, 200, 130)]:
            a = rng.standard_normal((m, k)).astype(np.float32)
            b = rng.standard_normal((k, n)).astype(np.float32)
            c0 = rng.standard_normal((m, n)).astype(np.float32)
            np.save(p("a.npy"), a)
            np.save(p("b.npy"), b)
            np.save(p("c0.npy"), c0)
            ref = 1.5 * (a.astype(np.float64) @ b) + 0.5 * c0
            for kern in mul + ["auto"]:
                r = run("mul", p("a.npy"), p("b.npy"), "-c", p("c0.npy"), "--alpha", "1.5",
                        "--beta", "0.5", "-o", p("c.npy"), "--kernel", kern, "--verify",
                        "--json", "--repeat", "2")
                ok = r.returncode == 0
                check(f"mul {kern} {m}x{n}x{k}", ok, r.stderr.decode()[-300:])
                if ok:
                    c = np.load(p("c.npy"))
                    err = np.linalg.norm(c - ref) / np.linalg.norm(ref)
                    check(f"mul {kern} {m}x{n}x{k} vs numpy", err < 1e-5, err)
                    rep = json.loads(r.stdout)
                    check(f"mul {kern} json", rep["verify"]["ok"] and rep["ms"]["kernel"] >= 0)
        # operands of other dtypes and orders, converted on the device
        a = rng.standard_normal((70, 45))
        b = rng.standard_normal((45, 33))
        c0 = rng.standard_normal((70, 33))
        cases = [("f64 A, Fortran-order B", a, np.asfortranarray(b.astype(np.float32)), None),
                 ("f16 A, int32 B, f64 C0", a.astype(np.float16), (b * 10).astype(np.int32), c0),
                 ("Fortran f64 A", np.asfortranarray(a), b.astype(np.float32), None)]
        for label, x, y, z in cases:
            np.save(p("x.npy"), x)
            np.save(p("y.npy"), y)
            args = ["mul", p("x.npy"), p("y.npy"), "-o", p("z.npy"), "--verify"]
            ref = x.astype(np.float32).astype(np.float64) @ y.astype(np.float32).astype(np.float64)
            if z is not None:
                np.save(p("c0.npy"), z)
                args += ["-c", p("c0.npy"), "--beta", "2"]
                ref = ref + 2 * z.astype(np.float32)
            r = run(*args)
            check(f"mul {label}", r.returncode == 0, r.stderr.decode()[-300:])
            if r.returncode == 0:
                got = np.load(p("z.npy"))
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                check(f"mul {label} vs numpy", err < 1e-5, err)
        for dtype in (np.float32, np.float64, np.float16):
            x = rng.standard_normal((301, 77)).astype(dtype)
            np.save(p("x.npy"), x)
            for kern in tra + ["auto"]:
                r = run("transpose", p("x.npy"), p("y.npy"), "--kernel", kern, "--verify")
                if r.returncode == 3 and b"cannot move" in r.stderr:
                    continue      # the kernel does not take this element size
                check(f"transpose {kern} {np.dtype(dtype).name}", r.returncode == 0,
                      r.stderr.decode()[-300:])
                if r.returncode == 0:
                    y = np.load(p("y.npy"))
                    check(f"transpose {kern} {np.dtype(dtype).name} values",
                          y.dtype == x.dtype and np.array_equal(y, x.T))
        # without --verify, results stream from the device to the file in
        # 8 MiB chunks: several chunks, a ragged last one, npy, raw, stdout
        a = rng.standard_normal((1777, 300)).astype(np.float32)
        b = rng.standard_normal((300, 2001)).astype(np.float32)
        np.save(p("a.npy"), a)
        np.save(p("b.npy"), b)
        ref = a.astype(np.float64) @ b
        for out, fmt in (("c.npy", []), ("c.bin", []), ("-", ["--format", "npy"])):
            r = run("mul", p("a.npy"), p("b.npy"), "-o", p(out) if out != "-" else "-", *fmt)
            check(f"streamed mul to {out}", r.returncode == 0, r.stderr.decode()[-300:])
            if r.returncode != 0:
                continue
            if out == "c.bin":
                got = np.fromfile(p(out), np.float32).reshape(1777, 2001)
            elif out == "-":
                import io
                got = np.load(io.BytesIO(r.stdout))
            else:
                got = np.load(p(out))
            err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
            check(f"streamed mul to {out} values", got.shape == (1777, 2001) and err < 1e-5, err)
        for dtype in (np.float64, np.int16):
            x = (rng.standard_normal((2100, 1300)) * 100).astype(dtype)
            np.save(p("x.npy"), x)
            r = run("transpose", p("x.npy"), p("y.npy"))
            check(f"streamed transpose {np.dtype(dtype).name}", r.returncode == 0
                  and np.array_equal(np.load(p("y.npy")), x.T), r.stderr.decode()[-300:])
        r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "--kernel", "cublas",
                "--device", "99")
        check("bad device ordinal -> 5", r.returncode == 5, r.returncode)
    print(f"cli-gpu: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
