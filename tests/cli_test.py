#!/usr/bin/env python3
"""CLI tests: drive the real gemmcli binary with the CPU kernel (no GPU
needed) and check results with NumPy, every exit status, pipelines through
stdin/stdout, .npz members, and that failed runs leave no output file behind.

usage: cli_test.py [path/to/gemmcli]     (prints 'cli: N passed, M failed')
"""
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples")
passed = failed = 0
rng = np.random.default_rng(7)


def run(*args, stdin=None, env=None):
    return subprocess.run([GEMMCLI, *map(str, args)], input=stdin, capture_output=True,
                          env=env, timeout=120)


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def expect_status(name, proc, status, stderr_has=()):
    err = proc.stderr.decode(errors="replace")
    ok = proc.returncode == status and all(s in err for s in stderr_has)
    check(name, ok, f"exit {proc.returncode} (wanted {status}), stderr: {err.strip()[:400]}")
    if status != 0:
        check(name + " (message prefix)",
              any(line.startswith("gemmcli: ") for line in err.splitlines()), err[:200])


def rel_err(got, ref):
    ref = np.asarray(ref, np.float64)
    return np.linalg.norm(np.asarray(got, np.float64) - ref) / max(np.linalg.norm(ref), 1e-300)


def tmp(d, name):
    return os.path.join(d, name)


def test_mul(d):
    for m, n, k in [(1, 1, 1), (7, 13, 5), (33, 65, 17), (127, 129, 255), (2, 3, 1)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        np.save(tmp(d, "a.npy"), a)
        np.save(tmp(d, "b.npy"), b)
        p = run("mul", tmp(d, "a.npy"), tmp(d, "b.npy"), "-o", tmp(d, "c.npy"), "--kernel", "cpu",
                "--verify")
        expect_status(f"mul {m}x{n}x{k}", p, 0, ["verify against cpu"])
        if p.returncode == 0:
            c = np.load(tmp(d, "c.npy"))
            ref = a.astype(np.float64) @ b.astype(np.float64)
            check(f"mul {m}x{n}x{k} shape", c.shape == (m, n) and c.dtype == np.float32, c.shape)
            check(f"mul {m}x{n}x{k} values", rel_err(c, ref) < 1e-5, rel_err(c, ref))

    # alpha, beta and C0
    a = rng.standard_normal((20, 30)).astype(np.float32)
    b = rng.standard_normal((30, 10)).astype(np.float32)
    c0 = rng.standard_normal((20, 10)).astype(np.float32)
    for name, arr in (("a", a), ("b", b), ("c0", c0)):
        np.save(tmp(d, name + ".npy"), arr)
    p = run("mul", tmp(d, "a.npy"), tmp(d, "b.npy"), "-c", tmp(d, "c0.npy"), "--alpha", "0.5",
            "--beta", "-2", "-o", tmp(d, "c.npy"), "--kernel", "cpu", "--quiet")
    expect_status("mul alpha beta", p, 0)
    if p.returncode == 0:
        ref = 0.5 * (a.astype(np.float64) @ b) - 2 * c0.astype(np.float64)
        check("mul alpha beta values", rel_err(np.load(tmp(d, "c.npy")), ref) < 1e-5)
    check("mul --quiet prints nothing", p.stderr == b"" and p.stdout == b"", p.stderr[:200])

    # NumPy's empty products: (m,0)@(0,n) is an m x n matrix of zeros
    np.save(tmp(d, "e1.npy"), np.zeros((3, 0), np.float32))
    np.save(tmp(d, "e2.npy"), np.zeros((0, 4), np.float32))
    p = run("mul", tmp(d, "e1.npy"), tmp(d, "e2.npy"), "-o", tmp(d, "e.npy"), "--kernel", "cpu")
    expect_status("mul empty K", p, 0)
    if p.returncode == 0:
        e = np.load(tmp(d, "e.npy"))
        check("mul empty K result", e.shape == (3, 4) and not e.any(), e)

    # inputs in other formats and dtypes: raw with --shape, CSV, gzip CSV, f64, Fortran order
    s = SAMPLES
    A = np.load(os.path.join(s, "a.npy")).astype(np.float64)
    B = np.load(os.path.join(s, "b.npy")).astype(np.float64)
    for label, args in [
        ("raw", [os.path.join(s, "a.bin"), os.path.join(s, "b.bin"), "--shape", "96x64",
                 "--shape", "64x80"]),
        ("csv+gz", [os.path.join(s, "a.csv"), os.path.join(s, "b.csv.gz")]),
        ("fortran+f64", [os.path.join(s, "a_fortran.npy"), os.path.join(s, "b_f64.npy")]),
    ]:
        p = run("mul", *args, "-o", tmp(d, "c.npy"), "--kernel", "cpu", "--quiet")
        expect_status(f"mul {label} inputs", p, 0)
        if p.returncode == 0:
            check(f"mul {label} values", rel_err(np.load(tmp(d, "c.npy")), A @ B) < 1e-5)

    # output dtype
    p = run("mul", os.path.join(s, "a.npy"), os.path.join(s, "b.npy"), "-o", tmp(d, "c64.npy"),
            "--kernel", "cpu", "--dtype", "f64", "--quiet")
    expect_status("mul --dtype f64", p, 0)
    if p.returncode == 0:
        check("mul --dtype f64 dtype", np.load(tmp(d, "c64.npy")).dtype == np.float64)


def npz_arrays():
    """What the .npz tests store: float16 to float64, int8 (whose products
    wrap), Fortran order, a vector, a scalar, a stack, an empty matrix."""
    return {
        "a": rng.standard_normal((5, 7)).astype(np.float32),
        "b": rng.standard_normal((7, 3)).astype(np.float32),
        "h": rng.standard_normal((4, 6)).astype(np.float16),
        "h2": rng.standard_normal((6, 2)).astype(np.float16),
        "i": rng.integers(-128, 128, (3, 40), dtype=np.int8),
        "j": rng.integers(-128, 128, (40, 5), dtype=np.int8),
        "w": np.asfortranarray(rng.standard_normal((7, 3))),
        "v": rng.standard_normal(7).astype(np.float32),
        "s": np.float64(2.5),
        "t": rng.integers(0, 1000, (2, 3, 4)).astype(np.int32),
        "e": np.zeros((0, 4), np.float32),
    }


def npy_of(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def test_npz(d):
    """.npz operands (np.savez and np.savez_compressed), NumPy the oracle."""
    arrays = npz_arrays()
    products = [("a", "b"), ("h", "h2"), ("i", "j"), ("a", "w"), ("a", "v"), ("a.npy", "b.npy")]
    for kind, save in (("stored", np.savez), ("deflated", np.savez_compressed)):
        z = tmp(d, f"{kind}.npz")
        save(z, **arrays)
        ref = np.load(z)
        for x, y in products:
            p = run("mul", f"{z}:{x}", f"{z}:{y}", "-o", tmp(d, "c.npy"), "--kernel", "cpu", "-q")
            expect_status(f"mul {kind} {x} @ {y}", p, 0)
            if p.returncode == 0:
                want = np.matmul(ref[x.removesuffix(".npy")], ref[y.removesuffix(".npy")])
                got = np.load(tmp(d, "c.npy"))
                exact = want.dtype.kind in "iu"
                check(f"mul {kind} {x} @ {y}: NumPy's dtype, shape and values",
                      got.dtype == want.dtype and got.shape == want.shape and
                      (np.array_equal(got, want) if exact else rel_err(got, want) < 2e-3),
                      (got.dtype, want.dtype, got.shape, want.shape))
        for x in ("t", "w", "e", "i"):
            p = run("transpose", f"{z}:{x}", tmp(d, "t.npy"), "--kernel", "cpu", "-q")
            expect_status(f"transpose {kind} {x}", p, 0)
            if p.returncode == 0:
                got, want = np.load(tmp(d, "t.npy")), np.swapaxes(ref[x], -1, -2)
                check(f"transpose {kind} {x}: bit for bit", got.dtype == want.dtype and
                      np.array_equal(got, want), (got.shape, want.shape))
        p = run("convert", f"{z}:s", "-o", tmp(d, "s.npy"), "-q")
        check(f"convert {kind} 0-d", p.returncode == 0 and np.load(tmp(d, "s.npy")) == 2.5,
              p.stderr[:300])
        expect_status(f"mul {kind} of a 0-d member: NumPy refuses it",
                      run("mul", f"{z}:s", f"{z}:a", "-o", tmp(d, "c.npy"), "--kernel", "cpu"),
                      3, ["s"])
        # info: a line for the archive, one per member as for PATH:NAME
        p = run("info", z)
        lines = p.stdout.decode().splitlines()
        check(f"info {kind}: the archive, then each member", p.returncode == 0 and
              lines[0] == f"{z}: npz, {len(arrays)} arrays, {os.path.getsize(z)} bytes" and
              [ln.split(": ", 1)[0] for ln in lines[1:]] == [f"{z}:{k}" for k in arrays],
              lines[:3])
        check(f"info {kind}: stored or deflated", all(
            ("deflated to" in ln) == (kind == "deflated") for ln in lines[1:]), lines[1:3])
        p = run("info", "--json", z, f"{z}:w.npy")
        doc = json.loads(p.stdout) if p.returncode == 0 else [{}, {}]
        members = doc[0].get("members", [])
        check(f"info --json {kind}: every member as NumPy has it", p.returncode == 0 and
              doc[0]["format"] == "npz" and
              [(m["file"], m["member"], m["dtype"], m["shape"], m["format"]) for m in members] ==
              [(f"{z}:{k}", k + ".npy", np.dtype(v.dtype).name.replace("float", "f")
                .replace("int", "i"), list(np.shape(v)), "npy") for k, v in arrays.items()],
              members[:2])
        w = doc[1]
        check(f"info --json {kind}:w.npy: as for an .npy, with where it lies",
              w.get("file") == f"{z}:w" and w.get("order") == "F" and
              w.get("shape") == [7, 3] and w.get("archive") == z and
              w.get("compression") == ("deflate" if kind == "deflated" else "stored") and
              w.get("file_bytes") == len(npy_of(arrays["w"])), w)
    z = tmp(d, "stored.npz")
    # one member: no name needed; several: named, or the members are listed
    np.savez(tmp(d, "one.npz"), arrays["t"])
    p = run("convert", tmp(d, "one.npz"), "-o", tmp(d, "one.npy"), "-q")
    check("the only member, unnamed", p.returncode == 0 and
          np.array_equal(np.load(tmp(d, "one.npy")), arrays["t"]), p.stderr[:300])
    os.remove(tmp(d, "t.npy"))
    p = run("transpose", z, tmp(d, "t.npy"), "--kernel", "cpu")
    expect_status("several members, none named", p, 3,
                  [f"{z}: holds {len(arrays)} arrays (a, b, h, h2, i, j, w, v, ...",
                   f"name one as {z}:NAME"])
    check("several members, none named: nothing on stdout or on disk", p.stdout == b"" and
          not os.path.exists(tmp(d, "t.npy")))
    os.remove(tmp(d, "s.npy"))
    np.savez(tmp(d, "none.npz"))
    p = run("info", tmp(d, "none.npz"))
    check("an empty archive: info says so", p.returncode == 0 and
          p.stdout.decode() == f"{tmp(d, 'none.npz')}: npz, 0 arrays, 22 bytes\n", p.stdout)
    expect_status("an empty archive: nothing to read", run("convert", tmp(d, "none.npz"), "-o",
                                                           tmp(d, "x.npy")), 3,
                  ["none.npz: holds no arrays"])
    p = run("info", f"{z}:zz")
    expect_status("no such member", p, 3, [f"{z}: no array named 'zz' (it holds a, b, h"])
    check("no such member: nothing on stdout", p.stdout == b"")
    # .npz is read, never written
    for args in (["-o", tmp(d, "out.npz")], ["-o", tmp(d, "out"), "--format", "npz"]):
        p = run("convert", f"{z}:a", *args)
        expect_status(f"write {' '.join(args[1:])}", p, 2, ["npz", "read, not written"])
    check("no .npz written", not os.path.exists(tmp(d, "out.npz")) and
          not os.path.exists(tmp(d, "out")))
    expect_status("--in-format npy for a member", run("info", f"{z}:a", "--in-format", "npy"),
                  2, ["npz"])
    # a pipeline: a member in, .npy out; an archive on stdin, read into memory
    p = run("convert", f"{z}:a", "-o", "-")
    check("member -> stdout: .npy", p.returncode == 0 and
          np.array_equal(np.load(io.BytesIO(p.stdout)), arrays["a"]), p.stderr[:300])
    with open(z, "rb") as f:
        data = f.read()
    p = run("transpose", "-o", "-", "--kernel", "cpu", "-q", "--", "-:w", stdin=data)
    check("-:NAME from stdin", p.returncode == 0 and
          np.array_equal(np.load(io.BytesIO(p.stdout)), arrays["w"].T), p.stderr[:300])
    with open(tmp(d, "one.npz"), "rb") as f:
        p = run("info", "-", stdin=f.read())
    check("one-member archive on stdin", p.returncode == 0 and b"-:arr_0: npy" in p.stdout,
          p.stdout + p.stderr)
    expect_status("two members from stdin", run("mul", "-o", tmp(d, "c.npy"), "--", "-:a", "-:b",
                                                stdin=data), 2, ["stdin"])
    p = run("mul", "--dry-run", f"{z}:a", f"{z}:b", "-o", tmp(d, "c.npy"))
    check("--dry-run reads the members' headers", p.returncode == 0 and b"5x7" in p.stdout,
          p.stdout[:300] + p.stderr[:300])
    # PATH:NAME: a file that exists is that file; else the last ':' after an archive
    np.save(tmp(d, "m:a.npy"), arrays["a"])
    p = run("info", tmp(d, "m:a.npy"))
    check("a name holding ':' that exists is the file", p.returncode == 0 and
          p.stdout.startswith(f"{tmp(d, 'm:a.npy')}: npy".encode()), p.stdout + p.stderr)
    os.mkdir(tmp(d, "dir:x"))
    np.savez(tmp(d, "dir:x/y.npz"), **{"p:q": arrays["v"], "r": arrays["v"]})
    p = run("convert", tmp(d, "dir:x/y.npz:p:q"), "-o", tmp(d, "pq.npy"), "-q")
    check("colons in the path and in the member's name", p.returncode == 0 and
          np.array_equal(np.load(tmp(d, "pq.npy")), arrays["v"]), p.stderr[:300])
    expect_status("a missing archive", run("info", tmp(d, "nosuch.npz:a")), 3,
                  ["nosuch.npz:a: cannot open"])
    # more than 65535 members: np.savez ends the archive with zip64's records
    many = tmp(d, "many.npz")
    np.savez(many, **{f"m{i}": np.array([i], np.int32) for i in range(65537)})
    with open(many, "rb") as f:
        f.seek(-42, os.SEEK_END)
        zip64 = f.read(4) == b"PK\x06\x07"
    p = run("info", many)
    q = run("convert", f"{many}:m65536", "-o", tmp(d, "m.npy"), "-q")
    check("65537 members (zip64's end record): listed, each read", zip64 and
          p.returncode == 0 and p.stdout.startswith(f"{many}: npz, 65537 arrays".encode()) and
          p.stdout.count(b"\n") == 65538 and q.returncode == 0 and
          np.load(tmp(d, "m.npy")).tolist() == [65536], (zip64, p.stderr[:200], q.stderr[:200]))


def tf32(x):
    """x (float32) rounded to TF32: to nearest, ties away from zero, on the bits."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return r.view(np.float32)


def test_compute_modes(d):
    """--compute tf32 and tf32x3 on the host kernel: tf32 rounds the operands
    to TF32 (the sums are exact there), tf32x3 is FP32-accurate."""
    a = rng.standard_normal((40, 70)).astype(np.float32)
    b = rng.standard_normal((70, 30)).astype(np.float32)
    np.save(tmp(d, "a.npy"), a)
    np.save(tmp(d, "b.npy"), b)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    rounded = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    p = run("mul", tmp(d, "a.npy"), tmp(d, "b.npy"), "-o", tmp(d, "c.npy"), "--kernel", "cpu",
            "--compute", "tf32", "--quiet")
    expect_status("mul --compute tf32", p, 0)
    if p.returncode == 0:
        c = np.load(tmp(d, "c.npy"))
        check("tf32: the operands rounded to TF32", rel_err(c, rounded) < 1e-6, rel_err(c, rounded))
        check("tf32: lossy against the exact product", 1e-5 < rel_err(c, exact) < 2e-3,
              rel_err(c, exact))
    p = run("mul", tmp(d, "a.npy"), tmp(d, "b.npy"), "-o", tmp(d, "c.npy"), "--kernel", "cpu",
            "--compute", "tf32x3", "--verify")
    expect_status("mul --compute tf32x3", p, 0, ["3xTF32"])
    if p.returncode == 0:
        c = np.load(tmp(d, "c.npy"))
        check("tf32x3: FP32-accurate", rel_err(c, exact) < 1e-6, rel_err(c, exact))
    np.save(tmp(d, "i.npy"), np.arange(12, dtype=np.int32).reshape(3, 4))
    np.save(tmp(d, "j.npy"), np.arange(12, dtype=np.int32).reshape(4, 3))
    p = run("mul", tmp(d, "i.npy"), tmp(d, "j.npy"), "-o", tmp(d, "c.npy"), "--kernel", "cpu",
            "--compute", "tf32x3")
    expect_status("tf32x3 refuses integer data", p, 2, ["computed exactly"])
    p = run("mul", tmp(d, "a.npy"), tmp(d, "b.npy"), "-o", tmp(d, "c.npy"), "--compute", "tf33")
    expect_status("--compute lists tf32x3", p, 2, ["tf32x3"])
    p = run("mul", tmp(d, "a.npy"), tmp(d, "b.npy"), "-o", tmp(d, "c.npy"), "--kernel", "tf32x3")
    expect_status("--kernel tf32x3 without --compute tf32x3", p, 2, ["--compute"])
    np.save(tmp(d, "thin_a.npy"), np.ones((33, 5), dtype=np.float32))
    np.save(tmp(d, "thin_b.npy"), np.ones((5, 33), dtype=np.float32))
    p = run("mul", tmp(d, "thin_a.npy"), tmp(d, "thin_b.npy"), "-o", tmp(d, "c.npy"), "--kernel", "thin")
    expect_status("thin refuses 33 x 33", p, 2, ["M <= 32 or N <= 32", "33 x 33"])


def test_transpose(d):
    for dtype in (np.float32, np.float64, np.float16, np.int32, np.int64, np.int16):
        x = (rng.standard_normal((37, 11)) * 100).astype(dtype)
        np.save(tmp(d, "x.npy"), x)
        p = run("transpose", tmp(d, "x.npy"), tmp(d, "y.npy"), "--kernel", "cpu", "--verify")
        expect_status(f"transpose {np.dtype(dtype).name}", p, 0)
        if p.returncode == 0:
            y = np.load(tmp(d, "y.npy"))
            check(f"transpose {np.dtype(dtype).name} keeps dtype and bits",
                  y.dtype == x.dtype and np.array_equal(y, x.T), (y.dtype, y.shape))
    # square raw input, shape inferred (the brief's own example)
    sq = np.fromfile(os.path.join(SAMPLES, "square.bin"), np.float32).reshape(64, 64)
    p = run("transpose", os.path.join(SAMPLES, "square.bin"), tmp(d, "sq.bin"), "--kernel", "cpu")
    expect_status("transpose raw square", p, 0)
    if p.returncode == 0:
        got = np.fromfile(tmp(d, "sq.bin"), np.float32).reshape(64, 64)
        check("transpose raw square values", np.array_equal(got, sq.T))
    # in place: the input is the output
    x = rng.standard_normal((5, 9)).astype(np.float32)
    np.save(tmp(d, "inplace.npy"), x)
    p = run("transpose", tmp(d, "inplace.npy"), "-o", tmp(d, "inplace.npy"), "--kernel", "cpu")
    expect_status("transpose x.npy -o x.npy", p, 0)
    check("transpose x.npy -o x.npy values", np.array_equal(np.load(tmp(d, "inplace.npy")), x.T))



ALL_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "float16", "int32", "uint32",
              "float32", "int64", "uint64", "float64")


def random_array(dtype, shape):
    """Random bit patterns of dtype (NaNs and all), or 0/1 for bool."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    count = int(np.prod(shape, dtype=np.int64))
    return np.frombuffer(rng.bytes(count * np.dtype(dtype).itemsize), dtype).reshape(shape)


def same_bits(got, want):
    return (got.dtype == want.dtype and got.shape == want.shape and
            np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes())


def test_transpose_dtypes(d):
    """Every dtype NumPy writes to .npy is transposed by the host kernel bit
    for bit as NumPy's .mT: matrices, stacks, a 1-D row, Fortran order, one
    large enough for the threaded path; every kernel row says which element
    sizes it moves, a kernel named for another size is refused (2), and the
    default kernel finds one for every dtype (without a GPU: status 5, as
    for float32, never 3)."""
    for dt in ALL_DTYPES:
        for shape, order in [((37, 11), "C"), ((37, 11), "F"), ((3, 5, 7), "C"),
                             ((2, 3, 4, 5), "F"), ((9,), "C")]:
            x = random_array(dt, shape)
            x = np.asfortranarray(x) if order == "F" else x
            want = x.reshape(-1, 1) if x.ndim == 1 else np.swapaxes(x, -1, -2)
            np.save(tmp(d, "tx.npy"), x)
            p = run("transpose", tmp(d, "tx.npy"), "-o", tmp(d, "ty.npy"), "--kernel", "cpu",
                    "--verify", "-q")
            label = f"transpose --kernel cpu {dt} {shape} {order}"
            expect_status(label, p, 0)
            if p.returncode == 0:
                got = np.load(tmp(d, "ty.npy"))
                check(label + " matches NumPy bit for bit", same_bits(got, want),
                      (got.dtype, got.shape))
    for dt in ("int8", "bool", "uint16"):
        x = random_array(dt, (2500, 2100))          # past the host kernel's threads threshold
        np.save(tmp(d, "tx.npy"), x)
        p = run("transpose", tmp(d, "tx.npy"), "-o", "-", "--format", "npy", "--kernel", "cpu")
        expect_status(f"transpose --kernel cpu {dt} 2500x2100 to stdout", p, 0)
        if p.returncode == 0:
            check(f"transpose --kernel cpu {dt} 2500x2100 values",
                  same_bits(np.load(io.BytesIO(p.stdout)), x.T))

    kernels = json.loads(run("kernels", "--json").stdout)
    rows = [k for k in kernels if k["operation"] in ("transpose", "copy")]
    sizes, floats = {}, {}
    for k in rows:
        # "1,2,4,8-byte": moves bits; "f32,f64": moves float values (geam).
        ok = k["types"].endswith("-byte") or k["types"] == "f32,f64"
        check(f"kernels: {k['name']} lists its element sizes or dtypes", ok, k["types"])
        floats[k["name"]] = k["types"] == "f32,f64"
        sizes[k["name"]] = ({4, 8} if floats[k["name"]] else
                            {int(v) for v in k["types"][:-5].split(",")} if ok else set())
    check("kernels: the host transpose moves 1, 2, 4 and 8-byte elements",
          sizes.get("cpu") == {1, 2, 4, 8}, sizes.get("cpu"))
    for es in (1, 2, 4, 8):
        check(f"kernels: a GPU transpose of our own moves {es}-byte elements",
              any(es in sizes[k["name"]] for k in rows if k["operation"] == "transpose"
                  and k["runs_on"] == "gpu" and k["source"] != "cuBLAS"), sizes)
    f32 = random_array("float32", (5, 3))
    np.save(tmp(d, "tf.npy"), f32)
    base = run("transpose", tmp(d, "tf.npy"), "-o", tmp(d, "ty.npy")).returncode
    # a GPU kernel's status on float32: 0 on a GPU, 5 without one
    gpu_base = run("transpose", tmp(d, "tf.npy"), "-o", tmp(d, "ty.npy"), "--kernel",
                   "naive").returncode
    for dt in ALL_DTYPES:
        x = random_array(dt, (5, 3))
        np.save(tmp(d, "tx.npy"), x)
        es = x.dtype.itemsize
        p = run("transpose", tmp(d, "tx.npy"), "-o", tmp(d, "ty.npy"))
        check(f"transpose {dt}, default kernel: status as float32's ({base})",
              p.returncode == base and b"moves" not in p.stderr,
              (p.returncode, p.stderr.decode()[-200:]))
        for k in rows:
            if k["operation"] != "transpose" or k["runs_on"] != "gpu":
                continue
            p = run("transpose", tmp(d, "tx.npy"), "-o", tmp(d, "ty.npy"), "--kernel", k["name"])
            label = f"transpose {dt} --kernel {k['name']}"
            if floats[k["name"]] and x.dtype.kind != "f" and es in sizes[k["name"]]:
                # An integer's bits may read as a NaN that float arithmetic rewrites.
                expect_status(label + " is refused", p, 2, ["takes f32 and f64 only"])
            elif es in sizes[k["name"]]:
                # Taken: 0 on a GPU, 5 without one.
                check(label + " is taken", p.returncode == gpu_base and
                      b"cannot move" not in p.stderr,
                      (p.returncode, p.stderr.decode()[-200:]))
                if p.returncode == 0:
                    check(label + " values", same_bits(np.load(tmp(d, "ty.npy")), x.T))
            else:
                expect_status(label + " is refused", p, 2, [f"cannot move {es}-byte"])


def test_pipelines(d):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    text = "\n".join(",".join(repr(float(v)) for v in row) for row in x).encode() + b"\n"
    p = run("transpose", "-", "-o", "-", "--format", "csv", "--kernel", "cpu", stdin=text)
    expect_status("csv stdin -> stdout", p, 0)
    if p.returncode == 0:
        got = np.loadtxt(p.stdout.decode().splitlines(), delimiter=",", ndmin=2)
        check("csv stdin -> stdout values", np.array_equal(got.astype(np.float32), x.T), got)
    import gzip
    p = run("transpose", "-", "-o", "-", "--format", "csv", "--kernel", "cpu",
            stdin=gzip.compress(text))
    expect_status("gzip csv stdin -> stdout", p, 0)
    # .npy through stdin and stdout
    import io
    buf = io.BytesIO()
    np.save(buf, x)
    p = run("transpose", "-", "-o", "-", "--format", "npy", "--kernel", "cpu", "--json",
            stdin=buf.getvalue())
    expect_status("npy stdin -> stdout", p, 0)
    if p.returncode == 0:
        y = np.load(io.BytesIO(p.stdout))
        check("npy stdout carries only the matrix", np.array_equal(y, x.T))
        check("--json goes to stderr when stdout carries the matrix",
              p.stderr.decode().lstrip().startswith("{\"command\": \"transpose\""), p.stderr[:100])
    p = run("mul", "-", os.path.join(SAMPLES, "b.npy"), "-o", "-", "--format", "csv",
            "--kernel", "cpu", "--quiet",
            stdin=open(os.path.join(SAMPLES, "a.npy"), "rb").read())
    expect_status("mul A from stdin", p, 0)
    # Without --format, standard output keeps the first input's format,
    # told by its magic bytes, then its name, then its content.
    a_npy = open(os.path.join(SAMPLES, "a.npy"), "rb").read()
    want = np.load(os.path.join(SAMPLES, "a.npy")) @ np.load(os.path.join(SAMPLES, "b.npy"))
    p = run("mul", "-", os.path.join(SAMPLES, "b.npy"), "-o", "-", "--kernel", "cpu", "--quiet",
            stdin=a_npy)
    expect_status("npy stdin, no --format", p, 0)
    check("npy stdin gives npy stdout", p.stdout[:6] == b"\x93NUMPY", p.stdout[:20])
    if p.stdout[:6] == b"\x93NUMPY":
        got = np.load(io.BytesIO(p.stdout))
        check("npy stdin gives npy stdout: values", got.dtype == want.dtype and
              np.allclose(got, want, rtol=1e-5, atol=1e-5), got.dtype)
    p = run("mul", os.path.join(SAMPLES, "a.npy"), os.path.join(SAMPLES, "b.npy"), "-o", "-",
            "--kernel", "cpu", "--quiet")
    check("npy file gives npy stdout", p.returncode == 0 and p.stdout[:6] == b"\x93NUMPY",
          p.stdout[:20] + p.stderr[:200])
    p = run("transpose", "-", "-o", "-", "--kernel", "cpu", "--quiet", stdin=text)
    expect_status("csv stdin, no --format", p, 0)
    if p.returncode == 0:
        got = np.loadtxt(p.stdout.decode().splitlines(), delimiter=",", ndmin=2)
        check("csv stdin gives csv stdout", np.array_equal(got.astype(np.float32), x.T), got)
    p = run("transpose", "-", "-o", "-", "--kernel", "cpu", "--quiet", stdin=gzip.compress(text))
    expect_status("csv.gz stdin, no --format", p, 0)
    check("csv.gz stdin gives gzip stdout", p.stdout[:2] == b"\x1f\x8b", p.stdout[:10])
    if p.stdout[:2] == b"\x1f\x8b":
        got = np.loadtxt(gzip.decompress(p.stdout).decode().splitlines(), delimiter=",",
                         ndmin=2)
        check("csv.gz stdin gives csv.gz stdout: values",
              np.array_equal(got.astype(np.float32), x.T), got)
    p = run("transpose", "-", "-o", "-", "--kernel", "cpu", "--quiet", "--shape", "6x4",
            stdin=x.tobytes())
    expect_status("raw stdin, no --format", p, 0)
    check("raw stdin gives raw stdout", p.stdout == np.ascontiguousarray(x.T).tobytes(),
          p.stdout[:40])
    p = run("convert", "-", "-o", "-", "--quiet", stdin=a_npy)
    check("convert: npy stdin gives npy stdout", p.returncode == 0 and p.stdout == a_npy
          or (p.stdout[:6] == b"\x93NUMPY" and
              np.array_equal(np.load(io.BytesIO(p.stdout)),
                             np.load(os.path.join(SAMPLES, "a.npy")))), p.stderr[:200])
    p = run("transpose", "-", "-o", "-", "--format", "csv", "--kernel", "cpu", "--quiet",
            stdin=buf.getvalue())
    check("--format still decides stdout", p.returncode == 0 and p.stdout[:1] != b"\x93",
          p.stdout[:20])
    # convert both ways through the text formats
    np.save(tmp(d, "x.npy"), x)
    for ext in ("csv", "csv.gz", "bin", "npy"):
        p = run("convert", tmp(d, "x.npy"), "-o", tmp(d, "x." + ext), "--quiet")
        expect_status(f"convert npy -> {ext}", p, 0)
        # Text reads as float64 unless float32 is asked for, as np.loadtxt.
        back = (["--shape", "6x4"] if ext == "bin" else
                ["--in-dtype", "f32"] if ext.startswith("csv") else [])
        p = run("convert", tmp(d, "x." + ext), "-o", tmp(d, "back.npy"), "--quiet", *back)
        expect_status(f"convert {ext} -> npy", p, 0)
        if p.returncode == 0:
            got = np.load(tmp(d, "back.npy"))
            check(f"convert round trip via {ext}", got.dtype == x.dtype and
                  np.array_equal(got, x))
    p = run("info", tmp(d, "x.npy"), tmp(d, "x.csv"))
    expect_status("info", p, 0)
    check("info shows shape and dtype", b"6x4" in p.stdout and b"f32" in p.stdout, p.stdout)


def npy_odd_header(a):
    """a as .npy with its header padded to an odd length, so that the payload
    starts at an odd offset (NumPy reads any header length)."""
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (a.dtype.str, a.shape)
    pad = 3 + ((10 + len(text) + 3 + 1) % 2 == 0)
    header = (text + " " * pad + "\n").encode()
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + a.tobytes()


def test_large_binary(d):
    """Payloads past the size where reads and writes of regular files go to
    several threads (pread, pwrite) give the same bytes and the same errors
    whatever --threads says, and pipes still get them in order."""
    import io
    x = rng.standard_normal((1001, 10477)).astype(np.float32)   # 40 MiB, an odd count
    src = tmp(d, "big.npy")
    with open(src, "wb") as f:
        f.write(npy_odd_header(x))
    check("big .npy as NumPy reads it", np.array_equal(np.load(src), x))
    buf = io.BytesIO()
    np.save(buf, x)
    want = {"npy": buf.getvalue(), "bin": x.tobytes()}

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    for t in (["--threads", "1"], ["--threads", "2"], ["--threads", "7"], []):
        label = " ".join(t) or "default --threads"
        for ext in ("npy", "bin"):
            out = tmp(d, "big_out." + ext)
            p = run("convert", src, "-o", out, "--quiet", *t)
            expect_status(f"big npy -> {ext}, {label}", p, 0)
            got = read(out) if p.returncode == 0 else b""
            check(f"big npy -> {ext}, {label}: the bytes", got == want[ext], len(got))
        p = run("convert", tmp(d, "big_out.bin"), "-o", tmp(d, "big_back.npy"), "--quiet",
                "--shape", "1001x10477", *t)
        expect_status(f"big raw -> npy, {label}", p, 0)
        got = read(tmp(d, "big_back.npy")) if p.returncode == 0 else b""
        check(f"big raw -> npy, {label}: the bytes", got == want["npy"], len(got))

    # A short and a long file: the same failure with one thread or seven.
    with open(tmp(d, "big_short.npy"), "wb") as f:
        f.write(read(src)[:-5])
    with open(tmp(d, "big_long.npy"), "wb") as f:
        f.write(read(src) + b"xyz")
    for name, says in (("big_short.npy", "truncated"), ("big_long.npy", "3 trailing bytes")):
        errs = []
        for t in ("1", "7"):
            p = run("convert", tmp(d, name), "-o", tmp(d, "never.npy"), "--threads", t)
            expect_status(f"{name}, --threads {t}", p, 3, [name, says])
            errs.append(p.stderr)
        check(f"{name}: one message whatever the threads", errs[0] == errs[1], errs)
    check("no output from a bad big file", not os.path.exists(tmp(d, "never.npy")))

    # Pipes, both ways, keep their order.
    p = run("convert", src, "-o", "-", "--threads", "7", "--quiet")
    check("big npy -> stdout pipe", p.returncode == 0 and p.stdout == want["npy"],
          p.stderr[:200])
    p = run("convert", src, "-o", "-", "--format", "raw", "--threads", "7", "--quiet")
    check("big npy -> raw stdout pipe", p.returncode == 0 and p.stdout == want["bin"],
          p.stderr[:200])
    p = run("convert", "-", "-o", tmp(d, "from_pipe.npy"), "--threads", "7", "--quiet",
            stdin=read(src))
    check("big npy from a stdin pipe", p.returncode == 0 and
          read(tmp(d, "from_pipe.npy")) == want["npy"], p.stderr[:200])

    # Standard output on a regular file: written after what the file already
    # holds, at its offset, or at its end when it was opened to append.
    for mode, before in (("wb", b"head"), ("ab", b"old")):
        path = tmp(d, "stdout_file")
        with open(path, "wb") as f:
            f.write(b"old")
        with open(path, mode) as f:
            if mode == "wb":
                f.write(before)
                f.flush()
            p = subprocess.run([GEMMCLI, "convert", src, "-o", "-", "--threads", "7", "--quiet"],
                               stdout=f, stderr=subprocess.PIPE, timeout=120)
        got = read(path)
        check(f"big npy -> stdout on a file opened '{mode}'",
              p.returncode == 0 and got == before + want["npy"], (len(got), p.stderr[:200]))


def read_pty(master):
    """What a pseudo-terminal's other side wrote, to its end."""
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out


def in_terminal(args, columns):
    """gemmcli with a terminal of `columns` columns on stdout: its status
    and what it printed there (lines without the terminal's \\r)."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    p = subprocess.Popen([GEMMCLI, *args], stdout=slave, stderr=subprocess.DEVNULL,
                         close_fds=True)
    os.close(slave)
    out = read_pty(master)
    os.close(master)
    return p.wait(timeout=60), out.decode().replace("\r", "")


def test_kernels_table():
    """gemmcli kernels on a terminal fits its width (IDEA cut, SOURCE with
    --details); into a pipe every line is whole."""
    names = [k["name"] for k in json.loads(run("kernels", "--json").stdout)]
    piped = run("kernels").stdout.decode()
    check("kernels into a pipe: whole lines with SOURCE", piped.startswith("NAME") and
          "SOURCE" in piped.splitlines()[0] and "cuBLAS: SGEMM" in piped, piped[:200])
    for columns in (80, 120):
        rc, text = in_terminal(["kernels"], columns)
        lines = text.splitlines()
        wide = [ln for ln in lines if len(ln) > columns]
        listed = [ln.split()[0] for ln in lines[1:] if ln.strip()]
        check(f"kernels on a terminal of {columns} columns: fits", rc == 0 and not wide and
              "SOURCE" not in lines[0] and listed == names, (rc, wide[:2], lines[:2]))
    rc, text = in_terminal(["kernels", "--wide"], 80)
    lines = text.splitlines()
    check("kernels --wide on a terminal of 80 columns: every column whole",
          rc == 0 and "SOURCE" in lines[0] and any(len(ln) > 80 for ln in lines) and
          "cuBLAS: SGEMM" in text and lines == piped.splitlines(), (rc, lines[:2]))
    rc, text = in_terminal(["kernels", "--details"], 400)
    check("kernels --details on a terminal: SOURCE", rc == 0 and "SOURCE" in text.splitlines()[0],
          text[:200])


def test_completion(d):
    """gemmcli completion bash: the script bash completes from, asked as
    bash asks it."""
    p = run("completion", "bash")
    check("completion bash", p.returncode == 0 and b"complete " in p.stdout, p.stderr[:200])
    script = tmp(d, "gemmcli.bash")
    with open(script, "wb") as f:
        f.write(p.stdout)

    def complete(*words):
        line = " ".join("'%s'" % w for w in words)
        r = subprocess.run(["bash", "-c", f'source "{script}"; COMP_WORDS=(gemmcli {line}); '
                            f'COMP_CWORD={len(words)}; _gemmcli; printf "%s\\n" "${{COMPREPLY[@]}}"'],
                           capture_output=True, timeout=60)
        return sorted(w for w in r.stdout.decode().split("\n") if w)

    kernels = json.loads(run("kernels", "--json").stdout)
    mul_kernels = sorted(["auto"] + [k["name"] for k in kernels if k["operation"] == "mul"])
    tr_kernels = sorted(["auto"] + [k["name"] for k in kernels if k["operation"] == "transpose"])
    cases = [
        (("mu",), ["mul"]),
        (("help", "tr"), ["transpose"]),
        (("mul", "--ker"), ["--kernel"]),
        (("mul", "a.npy", "--kernel", "mma_sync_1"), ["mma_sync_128x128", "mma_sync_128x64"]),
        (("mul", "--kernel", ""), mul_kernels),
        (("transpose", "--kernel", ""), tr_kernels),
        (("transpose", "x", "--kernel", "na"), ["naive"]),
        (("mul", "--format", "c"), ["csv", "csv.gz", "csv.zst"]),
        (("mul", "--format", "n"), ["npy", "npy.zst"]),
        (("info", "--in-format", "n"), ["npy", "npy.zst", "npz"]),
        (("info", "--in-d"), ["--in-dtype"]),
        (("info", "--dt"), []),
        (("convert", "--dtype", "f1"), ["f16"]),
        (("mul", "a.n"), []),
    ]
    for words, want in cases:
        got = complete(*words)
        check(f"completion of {' '.join(words) or repr('')}", got == want, (got[:8], want[:8]))
    expect_status("completion of another shell", run("completion", "fish"), 2, ["bash"])
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([GEMMCLI, "completion", "bash"], stdout=full,
                               stderr=subprocess.PIPE, timeout=60)
        expect_status("completion to a full disk", p, 4, ["<stdout>: write error"])


def test_without_gpu(d):
    """A machine that shows no GPU (CUDA_VISIBLE_DEVICES empty, as a
    machine without NVIDIA's driver): mul and transpose with the default
    kernel run on the CPU, say so once (not with --quiet), and give NumPy's
    answer; a GPU kernel named still needs a GPU."""
    no_gpu = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    s = SAMPLES
    a, b = np.load(os.path.join(s, "a.npy")), np.load(os.path.join(s, "b.npy"))
    out = tmp(d, "nogpu.npy")
    p = run("mul", os.path.join(s, "a.npy"), os.path.join(s, "b.npy"), "-o", out, env=no_gpu)
    notes = p.stderr.decode().count("no GPU on this machine")
    expect_status("mul without a GPU", p, 0)
    check("mul without a GPU says so once", notes == 1, p.stderr[-300:])
    if p.returncode == 0:
        got = np.load(out)
        check("mul without a GPU: NumPy's product", got.shape == (a.shape[0], b.shape[1]) and
              rel_err(got, a.astype(np.float64) @ b.astype(np.float64)) < 1e-6, got.shape)
    p = run("mul", os.path.join(s, "a.npy"), os.path.join(s, "b.npy"), "-o", out, "--json",
            "-q", env=no_gpu)
    check("mul -q --json without a GPU: silent, on the host",
          p.returncode == 0 and p.stderr == b"" and
          json.loads(p.stdout)["kernel"] in ("cpu", "blas"),
          (p.returncode, p.stderr[:200], p.stdout[:200]))
    p = run("transpose", os.path.join(s, "a.npy"), out, env=no_gpu)
    expect_status("transpose without a GPU", p, 0, ["no GPU on this machine"])
    if p.returncode == 0:
        check("transpose without a GPU: bit for bit", same_bits(np.load(out), a.T))
    # the README's pipeline: data alone on stdout
    with open(os.path.join(s, "b.csv.gz"), "rb") as f:
        import gzip
        text = gzip.decompress(f.read())
    p = run("transpose", "-", "-o", "-", "--format", "csv", stdin=text, env=no_gpu)
    expect_status("csv pipeline without a GPU", p, 0)
    if p.returncode == 0:
        got = np.loadtxt(io.BytesIO(p.stdout), delimiter=",", ndmin=2)
        want = np.loadtxt(io.BytesIO(text), delimiter=",", ndmin=2).T
        check("csv pipeline without a GPU: the transpose", got.shape == want.shape and
              np.array_equal(got, want), got.shape)
    os.unlink(out)
    # OpenBLAS where it is installed and has the type, else the cpu kernel
    probe = run("mul", os.path.join(s, "a.npy"), os.path.join(s, "b.npy"), "-o", out,
                "--kernel", "blas", "-q")
    has_blas = probe.returncode == 0
    check("blas: runs, or says OpenBLAS is missing", has_blas or
          (probe.returncode == 2 and b"OpenBLAS" in probe.stderr), probe.stderr[-200:])
    r = np.random.default_rng(11)
    cases = [("float32", (70, 50), (50, 30)), ("float64", (3, 40, 60), (60, 20)),
             ("int64", (20, 30), (30, 10)), ("float16", (20, 30), (30, 10))]
    for dt, sa, sb in cases:
        x = (r.standard_normal(sa) * 4).astype(dt)
        y = (r.standard_normal(sb) * 4).astype(dt)
        np.save(tmp(d, "xa.npy"), x)
        np.save(tmp(d, "xb.npy"), y)
        p = run("mul", tmp(d, "xa.npy"), tmp(d, "xb.npy"), "-o", out, "--json", "-q",
                env=no_gpu)
        want_kernel = "blas" if has_blas and dt in ("float32", "float64") else "cpu"
        got_kernel = json.loads(p.stdout)["kernel"] if p.returncode == 0 else None
        check(f"mul {dt} without a GPU: kernel {want_kernel}",
              p.returncode == 0 and got_kernel == want_kernel, (got_kernel, p.stderr[-200:]))
        if p.returncode == 0:
            got, ref = np.load(out), np.matmul(x, y)
            ok = (np.array_equal(got, ref) if dt == "int64" else
                  got.dtype == ref.dtype and rel_err(got, np.matmul(
                      x.astype(np.float64), y.astype(np.float64))) < (2e-3 if dt == "float16"
                                                                      else 1e-6))
            check(f"mul {dt} without a GPU: NumPy's answer", ok, got.dtype)
    if has_blas:
        c0 = r.standard_normal((96, 80)).astype(np.float32)
        np.save(tmp(d, "c0.npy"), c0)
        p = run("mul", os.path.join(s, "a.npy"), os.path.join(s, "b.npy"), "-o", out,
                "--kernel", "blas", "-c", tmp(d, "c0.npy"), "--alpha", "0.5", "--beta", "-2",
                "--verify", "-q")
        expect_status("blas with alpha, beta and C0, verified", p, 0)
        if p.returncode == 0:
            want = 0.5 * (a.astype(np.float64) @ b) - 2 * c0
            check("blas alpha, beta, C0: values", rel_err(np.load(out), want) < 1e-6)
        big = [r.integers(-2**40, 2**40, sh) for sh in ((20, 30), (30, 10))]
        for i, m in enumerate(big):
            np.save(tmp(d, f"i{i}.npy"), m)
        p = run("mul", tmp(d, "i0.npy"), tmp(d, "i1.npy"), "-o", out, "-q", env=no_gpu)
        expect_status("int64 past 2^53 without a GPU", p, 0)
        if p.returncode == 0:
            check("int64 past 2^53 without a GPU: NumPy's wrap-around",
                  np.array_equal(np.load(out), big[0] @ big[1]))
        expect_status("blas refuses int64 past 2^53",
                      run("mul", tmp(d, "i0.npy"), tmp(d, "i1.npy"), "-o", out, "--kernel",
                          "blas"), 2, ["blas"])
    if os.path.exists(out):
        os.unlink(out)
    for insist in (("--kernel", "naive"), ("--device", "0"), ("--devices", "0")):
        p = run("mul", os.path.join(s, "a.npy"), os.path.join(s, "b.npy"), "-o", out,
                *insist, env=no_gpu)
        expect_status(f"mul {' '.join(insist)} without a GPU", p, 5, ["CUDA device"])
        check(f"mul {' '.join(insist)} without a GPU: no output", not os.path.exists(out), out)


def test_errors(d):
    s = SAMPLES
    a, b = os.path.join(s, "a.npy"), os.path.join(s, "b.npy")
    out = tmp(d, "never.npy")
    # usage errors: 2
    expect_status("no command", run(), 2)
    expect_status("unknown command", run("frobnicate"), 2, ["unknown command"])
    expect_status("unknown option", run("mul", a, b, "-o", out, "--nope"), 2, ["--nope"])
    expect_status("missing -o", run("mul", a, b), 2, ["-o"])
    expect_status("one operand", run("mul", a, "-o", out), 2)
    expect_status("bad --repeat", run("mul", a, b, "-o", out, "--repeat", "0"), 2, ["--repeat"])
    expect_status("unknown kernel", run("mul", a, b, "-o", out, "--kernel", "nope"), 2, ["nope"])
    # a mistyped name: the nearest one, and none where nothing is near
    expect_status("mistyped command", run("mull"), 2, ["did you mean 'mul'?"])
    expect_status("swapped letters", run("trasnpose", a, out), 2, ["did you mean 'transpose'?"])
    expect_status("mistyped option", run("mul", a, b, "-o", out, "--kernal", "cpu"), 2,
                  ["'--kernal'", "did you mean '--kernel'?"])
    expect_status("mistyped mul kernel", run("mul", a, b, "-o", out, "--kernel", "cpuu"), 2,
                  ["'cpuu'", "did you mean 'cpu'?"])
    expect_status("mistyped transpose kernel", run("transpose", a, out, "--kernel", "naiv"), 2,
                  ["did you mean 'naive'?"])
    far = run("mul", a, b, "-o", out, "--kernel", "zzzzzz")
    expect_status("kernel far from any name", far, 2, ["zzzzzz"])
    check("no suggestion far from any name", b"did you mean" not in far.stderr, far.stderr[:200])
    check("no output after a mistyped name", not os.path.exists(out), out)
    # gemmcli help CMD is CMD --help
    for cmd in ("mul", "transpose", "info", "kernels"):
        h, h2 = run("help", cmd), run(cmd, "--help")
        check(f"help {cmd}", h.returncode == 0 and h.stdout == h2.stdout and
              h.stdout.startswith(f"usage: gemmcli {cmd} ".encode()), h.stdout[:200])
    top, top2 = run("help"), run("--help")
    check("help alone", top.returncode == 0 and top.stdout == top2.stdout, top.stdout[:200])
    # a command's help lists the exit statuses it returns: no GPU error
    # where it opens no GPU, no failed verification where it verifies none
    for cmd, has1, has5 in (("mul", True, True), ("info", False, False),
                            ("convert", False, False), ("kernels", False, True)):
        h = run(cmd, "--help").stdout.decode()
        text = " ".join(h.split("Exit status:", 1)[-1].split())
        check(f"{cmd} --help exit statuses",
              ("1 verification failed" in text) == has1 and ("5 GPU error" in text) == has5 and
              "0 success" in text and "2 usage error" in text, text)
    # every help fits a terminal of 80 columns
    for cmd in ("mul", "transpose", "convert", "info", "kernels", "bench", "tune", None):
        h = run(cmd, "--help") if cmd else top
        wide = [ln for ln in h.stdout.decode().splitlines() if len(ln) > 80]
        check(f"{cmd or 'gemmcli'} --help within 80 columns", h.returncode == 0 and not wide,
              wide[:2])
    expect_status("help of a mistyped command", run("help", "mull"), 2, ["did you mean 'mul'?"])
    expect_status("help of two commands", run("help", "mul", "info"), 2, ["one command"])
    expect_status("bad --shape", run("transpose", a, out, "--shape", "3by4"), 2, ["--shape"])
    expect_status("unknown output extension", run("mul", a, b, "-o", tmp(d, "c.xyz"),
                                                  "--kernel", "cpu"), 2, ["c.xyz"])
    expect_status("--beta without C0", run("mul", a, b, "-o", out, "--beta", "1"), 2, ["-c"])
    # bad input: 3
    expect_status("inner dimensions", run("mul", a, a, "-o", out, "--kernel", "cpu"), 3,
                  ["96x64", "inner dimensions"])
    expect_status("missing input", run("mul", tmp(d, "none.npy"), b, "-o", out), 3, ["none.npy"])
    with open(tmp(d, "trunc.npy"), "wb") as f:
        f.write(open(a, "rb").read()[:1000])
    expect_status("truncated npy", run("mul", tmp(d, "trunc.npy"), b, "-o", out, "--kernel", "cpu"),
                  3, ["trunc.npy"])
    with open(tmp(d, "ragged.csv"), "w") as f:
        f.write("1,2,3\n4,5\n")
    expect_status("ragged csv", run("transpose", tmp(d, "ragged.csv"), out, "--kernel", "cpu"), 3,
                  ["ragged.csv:2"])
    expect_status("raw size mismatch", run("transpose", os.path.join(s, "a.bin"), out,
                                           "--shape", "10x10", "--kernel", "cpu"), 3, ["a.bin"])
    # output errors: 4
    expect_status("missing output directory", run("mul", a, b, "-o", tmp(d, "no/such/c.npy"),
                                                  "--kernel", "cpu"), 4, ["no/such"])
    if os.path.exists("/dev/full"):
        expect_status("/dev/full", run("mul", a, b, "-o", "/dev/full", "--format", "npy",
                                       "--kernel", "cpu", "--quiet"), 4, ["/dev/full"])
    # A reader that has gone ends the run quietly, killed by SIGPIPE as a
    # Unix filter is; a caller that ignores SIGPIPE gets a write error.
    for ignored in (False, True):
        r, w = os.pipe()
        os.close(r)
        pre = (lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)) if ignored else None
        p = subprocess.run([GEMMCLI, "convert", a, "-o", "-", "--format", "csv", "--quiet"],
                           stdout=w, stderr=subprocess.PIPE, timeout=60, preexec_fn=pre)
        os.close(w)
        if ignored:
            check("closed stdout pipe, SIGPIPE ignored: exit 4", p.returncode == 4 and
                  b"<stdout>" in p.stderr, (p.returncode, p.stderr[:200]))
        else:
            check("closed stdout pipe: killed by SIGPIPE, silent",
                  p.returncode == -signal.SIGPIPE and p.stderr == b"",
                  (p.returncode, p.stderr[:200]))
    # verification failure: 1, and the result is not written
    p = run("mul", a, b, "-o", out, "--kernel", "cpu", "--verify", "--tol", "0")
    expect_status("--verify above --tol", p, 1, ["verification failed"])
    # no GPU (or an unusable device ordinal): 5, with a hint
    p = run("mul", a, b, "-o", out, "--device", "1000")
    expect_status("no such device", p, 5, ["CUDA device"])
    check("no output file after any failure", not os.path.exists(out), out)

    # a failed run leaves an existing file alone, and leaves no temporary file
    keep = tmp(d, "keep.npy")
    with open(keep, "wb") as f:
        f.write(b"precious")
    run("mul", a, a, "-o", keep, "--kernel", "cpu")
    check("failed run keeps the existing output", open(keep, "rb").read() == b"precious")
    leftovers = [f for f in os.listdir(d) if f.startswith(".gemmcli-")]
    check("no temporary files left", not leftovers, leftovers)


def test_tune(d):
    """The tune cache's commands with XDG_CACHE_HOME in a temporary directory."""
    cache = tmp(d, "xdg")
    os.makedirs(cache, exist_ok=True)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    path = os.path.join(cache, "gemmcli", "tune.txt")
    p = run("tune", "--show", env=env)
    expect_status("tune --show, no file", p, 0)
    check("tune --show names the path", path.encode() in p.stdout and b"no entries" in p.stdout,
          p.stdout)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("# gemmcli tune cache 1\n"
                "NVIDIA_H200 9.0 132 f32 1/1 q48/8 q48/8 q48/8 edge_peel 2.8731 2.7012 "
                "2026-11-22T10:31:05Z\n"
                "NVIDIA_H200 9.0 132 f16 1/1 q48/8 q48/8 q48/8 cluster_multicast 0.201 0.19 "
                "2026-11-22T10:32:00Z\n"
                "not an entry\n")
    p = run("tune", "--show", env=env)
    expect_status("tune --show", p, 0)
    out = p.stdout.decode()
    check("tune --show lists the entries", "2 entries" in out and "edge_peel" in out and
          "cluster_multicast" in out and "q48/8" in out and "94%" in out and
          "1 malformed line" in out, out)
    check("tune --show writes nothing to stderr", p.stderr == b"", p.stderr)
    # auto's measured rates beside it: one line a GPU model's file, said
    # stale where another build measured them, or not a rates file at all.
    rates = os.path.join(cache, "gemmcli", "rates-NVIDIA_H100_80GB_HBM3-90-132.txt")
    with open(rates, "w") as f:
        f.write("# gemmcli rates 8\ndevice NVIDIA_H100_80GB_HBM3 9.0 132 1980 3352 13000\n"
                "build 0000000000000000 2026-11-26T00:31:16Z 2932.0 1.8\n"
                "rate f32 edge_peel 46.1 0.0 1.0 1.3 20.3 0.0 0.0 0.0 0.0 0.0 0.0\n"
                "rate f16 mma_sync 496.6 2512.2 0.96 1.2 9.4 3.8 2.1 0.0 0.0 0.7 0.0\n")
    junk = os.path.join(cache, "gemmcli", "rates-X-90-1.txt")
    with open(junk, "w") as f:
        f.write("junk\n")
    out = run("tune", "--show", env=env).stdout.decode()
    line = next((x for x in out.splitlines() if rates in x), "")
    check("tune --show lists the measured rates", "NVIDIA_H100_80GB_HBM3" in line and
          "132 SMs" in line and "driver 13.0" in line and "2 kernels" in line and
          "another build" in line, out)
    line = next((x for x in out.splitlines() if junk in x), "")
    check("tune --show says a file is not rates", "not a rates file" in line, out)
    os.remove(rates)
    os.remove(junk)

    # kernels --for --rates FILE: the plan for the GPU whose rates the file
    # holds, with those rates, on this machine (no GPU here); the file's
    # rates decide auto's choice, its SMs the estimates.
    build = json.loads(run("kernels", "--for", "64x64x64", "--json").stdout)["rates"]["build"]
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 86400))
    other = tmp(d, "rates-other.txt")

    def rates_file(stamp, fast, slow, sms=66):
        with open(other, "w") as f:
            f.write(f"# gemmcli rates 8\ndevice Test_GPU_X 9.0 {sms} 1500 2000 13000\n"
                    f"build {build} {stamp} 1800.0 1.0\n"
                    f"rate f32 {fast} 40.0 0.0 1.0 1.0 9.0 0.0 0.0 0.0 0.0 0.0 0.0\n"
                    f"rate f32 {slow} 10.0 0.0 1.0 1.0 9.0 0.0 0.0 0.0 0.0 0.0 0.0\n")

    picks = {}
    for fast, slow in (("stream_k", "edge_peel"), ("edge_peel", "stream_k")):
        rates_file(when, fast, slow)
        p = run("kernels", "--for", "4096x4096x4096", "--rates", other, "--json")
        expect_status(f"kernels --for --rates ({fast} the faster)", p, 0)
        out = json.loads(p.stdout or b"{}")
        r = out.get("rates", {})
        picks[fast] = out.get("auto")
        check(f"kernels --for --rates ({fast}): the file's GPU and rates",
              "Test_GPU_X" in (out.get("device") or "") and "66 SMs" in out.get("device", "") and
              r.get("source") == "measured" and r.get("measured_on") == "Test_GPU_X" and
              r.get("file") == other and r.get("date") == when, out)
    check("kernels --for --rates: the file's rates pick the kernel",
          picks == {"stream_k": "stream_k", "edge_peel": "edge_peel"}, picks)
    # (100 tiles of 128 x 128, two a slot: one wave of 132 slots on 66 SMs,
    # 38% of one on 132, at the same rate for the whole GPU)
    est = {}
    for sms in (66, 132):
        rates_file(when, "cp_async", "edge_peel", sms)
        out = json.loads(run("kernels", "--for", "1280x1280x4096", "--rates", other,
                             "--json").stdout or b"{}")
        est[sms] = next((c["ms"] for c in out.get("candidates", [])
                         if c["kernel"] == "cp_async"), None)
    check("kernels --for --rates: the estimate is for the file's SMs",
          est[66] and est[132] and est[132] > 1.3 * est[66], est)
    p = run("kernels", "--for", "4096x4096x4096", "--rates", other)
    check("kernels --for --rates names the file and its GPU",
          p.returncode == 0 and b"read from " + other.encode() in p.stdout and
          b"Test_GPU_X (132 SMs" in p.stdout, p.stdout[:400])
    rates_file("2020-01-01T00:00:00Z", "stream_k", "edge_peel")
    p = run("kernels", "--for", "4096x4096x4096", "--rates", other)
    expect_status("kernels --for --rates, rates of long ago", p, 3, [other, "days ago"])
    with open(other, "w") as f:
        f.write("# gemmcli rates 8\ndevice Test_GPU_X 9.0 66 1500 2000 13000\n"
                f"build 0000000000000000 {when} 1800.0 1.0\n"
                "rate f32 stream_k 40.0 0.0 1.0 1.0 9.0 0.0 0.0 0.0 0.0 0.0 0.0\n")
    p = run("kernels", "--for", "4096x4096x4096", "--rates", other)
    expect_status("kernels --for --rates, another build's", p, 3, [other, "another build"])
    with open(other, "w") as f:
        f.write("junk\n")
    p = run("kernels", "--for", "4096x4096x4096", "--rates", other)
    expect_status("kernels --for --rates, not a rates file", p, 3, [other, "not a rates file"])
    p = run("kernels", "--for", "4096x4096x4096", "--rates", tmp(d, "no-such-rates.txt"))
    expect_status("kernels --for --rates, no such file", p, 3, ["no-such-rates.txt"])
    p = run("kernels", "--for", "4096x4096x4096", "--rates", d)
    expect_status("kernels --for --rates, a directory", p, 3, [d, "directory"])
    p = run("kernels", "--rates", other)
    expect_status("kernels --rates without --for", p, 2, ["--for"])
    check("kernels --rates without --for prints nothing", p.stdout == b"", p.stdout)
    with open(path, "w") as f:
        f.write("# gemmcli tune cache 999\n")
    p = run("tune", "--show", env=env)
    expect_status("tune --show, another version", p, 0)
    check("tune --show says the file is not this format", b"no entries" in p.stdout and
          b"not a tune cache" in p.stdout, p.stdout)
    p = run("tune", "--clear", env=env)
    expect_status("tune --clear", p, 0)
    check("tune --clear removes the file", not os.path.exists(path) and b"removed" in p.stdout,
          p.stdout)
    p = run("tune", "--clear", env=env)
    expect_status("tune --clear, no file", p, 0)
    check("tune --clear says there was nothing", b"nothing to remove" in p.stdout, p.stdout)
    os.makedirs(path)
    p = run("tune", "--clear", env=env)
    expect_status("tune --clear, a directory at the path", p, 4, [path])
    p = run("tune", "--show", env=env)
    expect_status("tune --show, a directory at the path", p, 0)
    os.rmdir(path)
    # No location at all: said so, not an error.
    bare = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME")}
    for args in (("--show",), ("--clear",)):
        p = run("tune", *args, env=bare)
        expect_status(f"tune {args[0]} without HOME", p, 0)
        check(f"tune {args[0]} without HOME says so", b"no tune cache" in p.stdout, p.stdout)
    p = run("tune", "--show", env=dict(bare, XDG_CACHE_HOME="relative/dir", HOME=cache))
    check("a relative XDG_CACHE_HOME falls back to HOME",
          os.path.join(cache, ".cache", "gemmcli", "tune.txt").encode() in p.stdout, p.stdout)

    # Usage errors come before any device is looked for.
    for args, word in ((("tune",), "sizes"), (("tune", "4x4"), "4x4"),
                       (("tune", "64", "--dtype", "f99"), "f99"),
                       (("tune", "--compute", "exact", "64"), "exact"),
                       (("tune", "--show", "64"), "--show"),
                       (("tune", "--show", "--clear"), "--clear"),
                       (("tune", "0x64x64"), "0x64x64"),
                       (("tune", "--tune", "64"), "--tune")):
        expect_status(" ".join(args), run(*args, env=env), 2, [word])
    # No device: the usual GPU error, and nothing stored.
    p = run("tune", "64", "--device", "1000", env=env)
    expect_status("tune without the device", p, 5, ["CUDA device"])
    if b"no CUDA device" in run("kernels", "--details").stderr:
        p = run("tune", "--dtype", "f32,f16", "64", "2x32x32x32", env=env)
        expect_status("tune without a GPU", p, 5, ["no CUDA device"])
        check("tune without a GPU prints no table", p.stdout == b"", p.stdout)
    check("nothing stored without a device", not os.path.exists(path))

    # mul: --tune goes with auto only.
    a, b = os.path.join(SAMPLES, "a.npy"), os.path.join(SAMPLES, "b.npy")
    for kern in ("cpu", "smem", "cublas"):
        p = run("mul", a, b, "-o", tmp(d, "t.npy"), "--tune", "--kernel", kern, env=env)
        expect_status(f"mul --tune --kernel {kern}", p, 2, ["--tune", kern])
    check("no output after the usage error", not os.path.exists(tmp(d, "t.npy")))
    # A cache that cannot be written changes nothing for a product.
    plain = tmp(d, "plain-file")
    with open(plain, "w") as f:
        f.write("x")
    for where in (plain, os.path.join(plain, "below")):
        broken = dict(os.environ, XDG_CACHE_HOME=where)
        p = run("mul", a, b, "-o", "-", "--format", "csv", "--kernel", "cpu", env=broken)
        expect_status(f"mul with the cache at {where}", p, 0)
        ref = np.load(a).astype(np.float64) @ np.load(b).astype(np.float64)
        try:
            got = np.loadtxt(p.stdout.decode().splitlines(), delimiter=",", ndmin=2)
            check("stdout holds the matrix alone", got.shape == ref.shape and
                  rel_err(got, ref) < 1e-5, got.shape)
        except ValueError as e:
            check("stdout holds the matrix alone", False, e)
        check("no warning about the cache", b"warning" not in p.stderr, p.stderr)
    p = run("tune", "--show", env=dict(os.environ, XDG_CACHE_HOME=plain))
    expect_status("tune --show under a file", p, 0)


def slow_stdin_run(d, stderr_tty):
    """transpose from a stdin that stays silent for 1.6 s; returns stderr."""
    import io
    import pty
    import time
    buf = io.BytesIO()
    np.save(buf, rng.standard_normal((8, 5)).astype(np.float32))
    master, slave = pty.openpty() if stderr_tty else (None, None)
    p = subprocess.Popen([GEMMCLI, "transpose", "-", "-o", tmp(d, "slow.npy"), "--kernel", "cpu"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=slave if stderr_tty else subprocess.PIPE)
    time.sleep(1.6)
    p.stdin.write(buf.getvalue())
    p.stdin.close()
    if not stderr_tty:
        err = p.stderr.read()
        p.wait(timeout=60)
        return p.returncode, err
    os.close(slave)
    p.wait(timeout=60)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    return p.returncode, err


def test_progress(d):
    rc, err = slow_stdin_run(d, True)
    check("progress line on a terminal", rc == 0 and b"gemmcli: reading <stdin> ... 1." in err
          and b"\r\x1b[K" in err, err[:300])
    rc, err = slow_stdin_run(d, False)
    check("no progress line when stderr is not a terminal", rc == 0 and b"\x1b[K" not in err
          and b"..." not in err, err[:300])


def test_terminal_output(d):
    """Bytes that are not text never go to a terminal: .npy, raw and the
    compressed bytes of csv.gz, csv.zst and npy.zst are refused there
    (status 2), CSV is written."""
    import pty
    a = tmp(d, "tty.npy")
    np.save(a, np.eye(2, dtype=np.float32))
    for fmt, binary in (("npy", True), ("raw", True), ("csv", False), ("csv.gz", True),
                        ("csv.zst", True), ("npy.zst", True)):
        master, slave = pty.openpty()
        p = subprocess.run([GEMMCLI, "convert", a, "-o", "-", "--format", fmt, "--quiet"],
                           stdout=slave, stderr=subprocess.PIPE, timeout=60)
        os.close(slave)
        shown = read_pty(master)
        os.close(master)
        if binary:
            expect_status(f"{fmt} to a terminal: refused", p, 2, ["terminal"])
            check(f"{fmt} to a terminal: nothing written", shown == b"", shown[:60])
        else:
            expect_status(f"{fmt} to a terminal: written", p, 0)
            check(f"{fmt} to a terminal: the text", shown.replace(b"\r", b"") == b"1,0\n0,1\n",
                  shown[:60])


def test_bench_signatures():
    """bench --dtype takes each signature the kernels list (by its name, or
    its dtype's NumPy name) except the integer ones (i64, i8, i16, i32) and
    ozaki and ozaki32, which it does not time (tests/int_rate.py, tests/i64_rate.py
    and tests/ozaki_rate.py do), and its refusal names every other; without a device the
    ones it takes end at the device (status 5), after the options were
    read."""
    import json
    rows = json.loads(run("kernels", "--json").stdout)
    sigs = sorted({t for r in rows if r["operation"] == "mul" for t in r["types"].split(",")})
    check("the kernels list the signatures", {"f32", "f64", "i64", "tf32x3"} <= set(sigs), sigs)
    no_gpu = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    for name in sigs + ["float16", "FLOAT64"]:
        p = run("bench", "--op", "mul", "--sizes", "64", "--dtype", name, env=no_gpu)
        untimed = ("i64", "i8", "i16", "i32", "ozaki", "ozaki32")
        if name in untimed:
            timed = [s for s in sigs if s not in untimed]
            expect_status(f"bench --dtype {name}: refused", p, 2, [f"not '{name}'"] + timed)
        else:
            expect_status(f"bench --dtype {name}: taken", p, 5, ["device"])


def test_help():
    p = run("--help")
    expect_status("--help", p, 0)
    check("--help lists commands and exit statuses",
          all(w in p.stdout for w in (b"mul", b"transpose", b"convert", b"info", b"kernels",
                                      b"Exit status")), p.stdout[:200])
    # Every command the table lists answers its own --help, whatever the
    # list holds: the listing is the table's.
    listed = p.stdout.decode().split("\ncommands:\n", 1)[-1].split("\n\n", 1)[0]
    commands = [line.split()[0] for line in listed.splitlines()
                if line.startswith("  ") and not line.startswith("   ")]
    check("--help lists the commands", len(commands) >= 7 and "mul" in commands, listed)
    formats = p.stdout.decode().split("\nformats", 1)[-1].split("\n\n", 1)[0]
    check("--help lists every format, .npz among them", all(
        f"\n  {name} (" in formats for name in ("npy", "raw", "csv", "csv.gz", "npz")) and
        "read only" in " ".join(formats.split()), formats)
    for cmd in commands:
        p = run(cmd, "--help")
        expect_status(f"{cmd} --help", p, 0)
        check(f"{cmd} --help shows usage", p.stdout.startswith(b"usage: gemmcli " + cmd.encode()))
        check(f"{cmd} --help lists its options", b"--help" in p.stdout and
              b"Exit status" in p.stdout, p.stdout[:300])
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            for args in (("--help",), ("mul", "--help"), ("--version",)):
                p = subprocess.run([GEMMCLI, *args], stdout=full, stderr=subprocess.PIPE,
                                   timeout=60)
                expect_status(f"{' '.join(args)} to a full disk", p, 4, ["<stdout>: write error"])
    p = run("--version")
    check("--version", p.returncode == 0 and p.stdout.startswith(b"gemmcli "), p.stdout)
    p = run("kernels")
    check("kernels lists the ladder", all(w in p.stdout for w in
                                          (b"naive", b"coalesced", b"smem", b"cublas", b"cpu",
                                           b"geam")), p.stdout[:300])
    p = run("kernels", "--json")
    import json
    try:
        rows = json.loads(p.stdout)
        check("kernels --json", any(r["name"] == "cublas" for r in rows))
        import re
        man = open(os.path.join(SAMPLES, "..", "man", "gemmcli.1")).read()
        named = set()
        for line in man.splitlines():
            if line.startswith((".Cm ", ".It Cm ")):
                named.update(re.findall(r"[A-Za-z0-9_]+", line))
        missing = [r["name"] for r in rows if r["name"] not in named]
        check("every registered kernel is in the man page", not missing, missing)
    except ValueError as e:
        check("kernels --json parses", False, e)


def main():
    with tempfile.TemporaryDirectory() as d:
        test_help()
        test_mul(d)
        test_compute_modes(d)
        test_transpose(d)
        test_transpose_dtypes(d)
        test_pipelines(d)
        test_npz(d)
        test_large_binary(d)
        test_errors(d)
        test_completion(d)
        test_kernels_table()
        test_without_gpu(d)
        test_tune(d)
        test_progress(d)
        test_terminal_output(d)
        test_bench_signatures()
    print(f"cli: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
