#!/usr/bin/env python3
"""NumPy <-> gemmcli interoperability, through the real binary.

NumPy writes .npy files of every dtype, order, format version and byte
order, .npz archives of them (np.savez and np.savez_compressed), CSV and
gzip CSV the ways np.savetxt and gzip write them, and raw files; `gemmcli
info` must describe them and `gemmcli convert` must turn them into files
that NumPy reads back to the same values.  Exits 1 on the first
group of mismatches, listing them.

    tests/interop.py [./gemmcli]
"""
import concurrent.futures
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import zipcraft as zc

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
DTYPES = ["f4", "f8", "f2", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"]
NAMES = {"f4": "f32", "f8": "f64", "f2": "f16", "i1": "i8", "i2": "i16", "i4": "i32",
         "i8": "i64", "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64", "b1": "bool"}

failures = []


def fail(what):
    failures.append(what)


def run(args, stdin=None, expect=0):
    p = subprocess.run([GEMMCLI] + args, input=stdin, capture_output=True)
    if p.returncode != expect:
        fail("gemmcli %s: exit %d, expected %d: %s" % (
            " ".join(args), p.returncode, expect, p.stderr.decode(errors="replace").strip()))
        return None
    return p


def sample(dt, shape, seed):
    """Values that exercise the dtype: signs, extremes, fractions."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dt)
    if dt.kind == "f":
        a = rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 4, shape)
        a = a.astype(dt)
        flat = a.reshape(-1)
        specials = [np.finfo(dt).max, np.finfo(dt).tiny, -0.0, np.finfo(dt).smallest_subnormal]
        flat[:min(len(flat), len(specials))] = specials[:len(flat)]
        return a
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    flat = a.reshape(-1)
    flat[:min(len(flat), 2)] = [info.min, info.max][:len(flat)]
    return a


def same(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True) and np.array_equal(
            np.signbit(a.astype(np.float64)), np.signbit(b.astype(np.float64)))
    return np.array_equal(a, b)


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def as_read(a):
    """The array gemmcli reads: any number of dimensions, as NumPy has it."""
    return a


def check_npy_case(tmp, dt, order, version, endian, shape, seed):
    tag = "%s%s %s v%d.0 %s" % (endian, dt, order, version, shape)
    base = np.ascontiguousarray(sample(dt, shape, seed))
    a = base.astype(np.dtype(dt).newbyteorder(endian)) if np.dtype(dt).itemsize > 1 else base
    a = np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)
    name = "in_%s%s_%s_v%d_%s" % ({"<": "le", ">": "be"}[endian], dt, order, version,
                                   "x".join(map(str, shape)))
    src = os.path.join(tmp, name + ".npy")
    with open(src, "wb") as f:
        np.lib.format.write_array(f, a, version=(version, 0))

    p = run(["info", "--json", src])
    if p:
        info = json.loads(p.stdout)[0]
        m = as_read(base)
        want_order = "F" if (order == "F" and sum(d > 1 for d in m.shape) > 1) else "C"
        got = (info["dtype"], info["shape"], info["order"], info["npy_version"],
               info["big_endian"])
        want = (NAMES[dt], list(m.shape), want_order, "%d.0" % version,
                endian == ">" and np.dtype(dt).itemsize > 1)
        if got != want:
            fail("info %s: %s, want %s" % (tag, got, want))

    out = os.path.join(tmp, name + ".out.npy")
    if run(["convert", "-q", src, "-o", out]):
        native = np.ascontiguousarray(as_read(base)).astype(np.dtype(dt).newbyteorder("<"))
        with open(out, "rb") as f:
            data = f.read()
        if data != npy_bytes(native):
            fail("convert %s -> .npy: not byte-identical to np.save of the same array" % tag)
        if not same(np.load(out), native):
            fail("convert %s -> .npy: values differ" % tag)


def check_npz_case(tmp, dt, seed):
    """Every dtype, both orders and byte orders, in archives as np.savez,
    np.savez_compressed and a zip64 directory (tests/zipcraft.py) lay
    them out: each member as its .npy would be."""
    arrays = {}
    for order in ["C", "F"]:
        for endian in ["<", ">"]:
            base = np.ascontiguousarray(sample(dt, (5, 7), seed))
            a = base.astype(np.dtype(dt).newbyteorder(endian))
            arrays["%s_%s" % (order, {"<": "le", ">": "be"}[endian])] = (
                np.asfortranarray(a) if order == "F" else a)
    arrays["vector"] = sample(dt, (6,), seed + 1)
    arrays["stack"] = sample(dt, (2, 3, 4), seed + 2)
    paths = []
    for kind, save in (("savez", np.savez), ("savez_compressed", np.savez_compressed)):
        paths.append(os.path.join(tmp, "%s_%s.npz" % (kind, dt)))
        save(paths[-1], **arrays)
    paths.append(os.path.join(tmp, "zip64_%s.npz" % dt))
    with open(paths[-1], "wb") as f:
        f.write(zc.archive([zc.member(k + ".npy", npy_bytes(v), deflate=i % 2 == 1)
                            for i, (k, v) in enumerate(arrays.items())], zip64=True))
    for path in paths:
        tag = "%s (%s)" % (os.path.basename(path), dt)
        p = run(["info", "--json", path])
        if p:
            got = [(m["dtype"], m["shape"], m["order"], m["big_endian"])
                   for m in json.loads(p.stdout)[0]["members"]]
            want = [(NAMES[dt], list(a.shape),
                     "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C",
                     a.dtype.byteorder == ">") for a in arrays.values()]
            if got != want:
                fail("info %s: %s, want %s" % (tag, got, want))
        for key, a in arrays.items():
            out = os.path.join(tmp, "%s.%s.npy" % (os.path.basename(path), key))
            if run(["convert", "-q", "%s:%s" % (path, key), "-o", out]):
                native = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"))
                with open(out, "rb") as f:
                    if f.read() != npy_bytes(native):
                        fail("convert %s:%s -> .npy: not np.save's bytes" % (tag, key))


def check_text_outputs(tmp, dt, seed):
    """.npy of each dtype to CSV, gzip CSV, raw, and to the other float dtypes."""
    a = sample(dt, (6, 5), seed)
    src = os.path.join(tmp, "t_%s.npy" % dt)
    np.save(src, np.asfortranarray(a))
    for ext in ["csv", "csv.gz"]:
        out = os.path.join(tmp, "t_%s.%s" % (dt, ext))
        if run(["convert", "-q", src, "-o", out]):
            opener = gzip.open if ext == "csv.gz" else open
            with opener(out, "rt") as f:
                text = f.read()
            kind = np.dtype(dt).kind
            back = np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2,
                              dtype=np.float64 if kind == "f" else np.dtype(dt))
            # Shortest float32 text need not equal the float32 as a double.
            if not same(back.astype(a.dtype), a) or (dt == "f8" and not same(back, a)):
                fail("convert %s -> .%s: values differ" % (dt, ext))
    out = os.path.join(tmp, "t_%s.bin" % dt)
    if run(["convert", "-q", src, "-o", out]):
        if not same(np.fromfile(out, dtype=np.dtype(dt).newbyteorder("<")).reshape(a.shape), a):
            fail("convert %s -> .bin: values differ (raw output is row-major)" % dt)
    for to in ["f32", "f64", "f16"]:
        out = os.path.join(tmp, "t_%s_to_%s.npy" % (dt, to))
        if run(["convert", "-q", "--dtype", to, src, "-o", out]):
            with np.errstate(over="ignore"):
                want = a.astype({"f32": np.float32, "f64": np.float64, "f16": np.float16}[to])
            if not same(np.load(out), want):
                fail("convert %s --dtype %s: values differ" % (dt, to))


def check_csv_inputs(tmp):
    a = sample("f4", (40, 9), 7)
    variants = [
        ("comma", dict(delimiter=",", fmt="%.9g"), []),
        ("sci", dict(delimiter=",", fmt="%.18e"), []),
        ("space", dict(delimiter=" ", fmt="%.9g"), ["--delimiter", " "]),
        ("tab", dict(delimiter="\t", fmt="%.9g"), ["--delimiter", "tab"]),
        # savetxt's defaults (blanks, %.18e) and tabs, with no --delimiter.
        ("savetxt", dict(), []),
        ("tab-found", dict(delimiter="\t", fmt="%.9g"), []),
        ("header", dict(delimiter=",", fmt="%.9g", header="a,b,c,d,e,f,g,h,i", comments=""),
         ["--header"]),
        ("comments", dict(delimiter=",", fmt="%.9g", header="made by savetxt",
                          footer="the end"), []),
        ("crlf", dict(delimiter=",", fmt="%.9g", newline="\r\n"), []),
    ]
    for name, kw, args in variants:
        buf = io.StringIO()
        np.savetxt(buf, a, **kw)
        text = buf.getvalue().encode()
        for packed, data in [("csv", text), ("csv.gz", gzip.compress(text))]:
            src = os.path.join(tmp, "c_%s.%s" % (name, packed))
            with open(src, "wb") as f:
                f.write(data)
            # float64 by default, as np.loadtxt reads it; float32 asked for.
            want = np.loadtxt(io.StringIO(text.decode()), ndmin=2, skiprows=int(name == "header"),
                              delimiter=None if kw.get("delimiter", " ") == " " else kw["delimiter"])
            for in_dtype, expect in [([], want), (["--in-dtype", "f32"], a)]:
                out = src + ".npy"
                if run(["convert", "-q"] + args + in_dtype + [src, "-o", out]):
                    got = np.load(out)
                    if got.dtype != expect.dtype or not same(got, expect):
                        fail("CSV %s (%s) %s: values differ" % (name, packed, in_dtype))
    # A BOM, nan/inf spellings, a gzip file of two members, and stdin.
    text = "\ufeff1.5,nan,-INF\n+Infinity,-0,1e-45\n".encode()
    want = np.array([[1.5, np.nan, -np.inf], [np.inf, -0.0, 1e-45]])
    two = gzip.compress(text[:20]) + gzip.compress(text[20:])
    for name, data in [("bom", text), ("two_members", two)]:
        for dt in [np.float64, np.float32]:
            p = run(["convert", "-q", "-", "-o", "-", "--format", "npy", "--in-dtype",
                     np.dtype(dt).name], stdin=data)
            if p and not same(np.load(io.BytesIO(p.stdout)), want.astype(dt)):
                fail("CSV from stdin (%s, %s): values differ" % (name, np.dtype(dt).name))
    p = run(["convert", "-q", "-", "-o", "-", "--format", "npy"], stdin=npy_bytes(want))
    if p and p.stdout != npy_bytes(want):
        fail(".npy through stdin and stdout: bytes differ")
    p = run(["convert", "-q", "-", "-o", "-", "--format", "npy"],
            stdin=b"0.1,3.141592653589793,1e-320\n")
    if p and not same(np.load(io.BytesIO(p.stdout)),
                      np.array([[0.1, 3.141592653589793, 1e-320]])):
        fail("CSV read as f64 by default: values differ")


def check_shortest(tmp):
    """Our CSV digits are never more than NumPy's shortest repr needs."""
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2 ** 32, 4000, dtype=np.uint64).astype(np.uint32)
    a = bits.view(np.float32)
    a = a[np.isfinite(a)].reshape(1, -1)
    src = os.path.join(tmp, "short.npy")
    np.save(src, a)
    p = run(["convert", "-q", src, "-o", "-", "--format", "csv"])
    if not p:
        return
    texts = p.stdout.decode().strip().split(",")
    back = np.array(texts, dtype=np.float64).astype(np.float32)
    if not same(back, a[0]):
        fail("shortest float32 text does not round-trip")

    def digits(s):
        m = s.lstrip("-").split("e")[0].replace(".", "").lstrip("0").rstrip("0")
        return max(len(m), 1)
    longer = [(t, repr(v)) for t, v in zip(texts, a[0])
              if digits(t) > digits(np.format_float_positional(v, unique=True)
                                    if abs(v) >= 1e-4 else
                                    np.format_float_scientific(v, unique=True))]
    if longer:
        fail("float32 text longer than NumPy's shortest: %s" % longer[:5])
    d = rng.standard_normal((3, 4))
    src = os.path.join(tmp, "prec.npy")
    np.save(src, d)
    for prec in [1, 3, 6, 9, 12, 17]:
        p = run(["convert", "-q", src, "-o", "-", "--format", "csv", "--precision", str(prec)])
        if p:
            got = np.loadtxt(io.StringIO(p.stdout.decode()), delimiter=",")
            want = np.array([[float("%.*g" % (prec, x)) for x in row] for row in d])
            if not same(got, want):
                fail("--precision %d differs from %%.%dg" % (prec, prec))


def check_raw(tmp):
    for dt, name in [("f4", "f32"), ("f8", "f64"), ("f2", "f16")]:
        a = sample(dt, (5, 3), 11)
        for order in ["C", "F"]:
            src = os.path.join(tmp, "r_%s_%s.bin" % (dt, order))
            a.tofile(src) if order == "C" else a.T.copy().tofile(src)
            out = src + ".npy"
            if run(["convert", "-q", "--shape", "5x3", "--in-dtype", name, "--order", order,
                    src, "-o", out]):
                if not same(np.load(out), a.astype(np.float32 if name == "f32" else a.dtype)
                            if name != "f32" else a):
                    fail("raw %s order %s: values differ" % (name, order))
    sq = sample("f4", (4, 4), 5)
    src = os.path.join(tmp, "square.bin")
    sq.tofile(src)
    p = run(["convert", "-q", src, "-o", src + ".npy"])
    if p and not same(np.load(src + ".npy"), sq):
        fail("raw square inferred from the size: values differ")


def main():
    if not os.access(GEMMCLI, os.X_OK):
        print("interop: %s is not built" % GEMMCLI, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gemmcli-interop.") as tmp:
        jobs = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            seed = 0
            for dt in DTYPES:
                for order in ["C", "F"]:
                    for version in [1, 2, 3]:
                        for endian in ["<", ">"]:
                            seed += 1
                            jobs.append(pool.submit(check_npy_case, tmp, dt, order, version,
                                                    endian, (5, 7), seed))
                for shape in [(1, 6), (6, 1), (0, 3), (6,), (2, 3, 4), (3, 1, 2, 5)]:
                    seed += 1
                    jobs.append(pool.submit(check_npy_case, tmp, dt, "C", 1, "<", shape, seed))
                jobs.append(pool.submit(check_text_outputs, tmp, dt, seed))
                jobs.append(pool.submit(check_npz_case, tmp, dt, seed))
            jobs.append(pool.submit(check_csv_inputs, tmp))
            jobs.append(pool.submit(check_shortest, tmp))
            jobs.append(pool.submit(check_raw, tmp))
            for j in jobs:
                j.result()
    if failures:
        for f in failures:
            print("interop: FAIL " + f, file=sys.stderr)
        print("interop: %d of %d groups failed" % (len(failures), len(jobs)), file=sys.stderr)
        return 1
    print("interop: %d groups passed (NumPy %s)" % (len(jobs), np.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
