#!/usr/bin/env python3
"""Text input as NumPy reads it, and the element types of inputs: CSV and
gzip CSV read as np.loadtxt(f, dtype=T) reads them (float64 by default,
integers exactly, NumPy's refusals as errors at FILE:LINE:COLUMN);
--in-dtype for what is read, --dtype for what is written; gzip whatever
its member layout, in time linear in the text; host memory running out
while writing text; empty-matrix marks NumPy could not hold.  NumPy is the
oracle throughout.

    text_test.py [path/to/gemmcli]        (prints 'text: N passed, M failed')
"""
import gzip
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
check = Checks()
rng = np.random.default_rng(25)

INT_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
             "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


def run(*args, cwd=None, stdin=None, timeout=120, limit_as=None):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    return subprocess.run([GEMMCLI, *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, timeout=timeout,
                          preexec_fn=limit if limit_as else None)


def err(p):
    return p.stderr.decode(errors="replace").strip()[:400]


def loadtxt(text, dtype=float):
    return np.loadtxt(io.StringIO(text), delimiter=",", dtype=dtype, ndmin=2)


def read_as(d, text, *opts, gz=False):
    """(array, process) of `convert` of `text` to .npy, or (None, process)."""
    path = os.path.join(d, "t.csv.gz" if gz else "t.csv")
    data = text.encode()
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if gz else data)
    out = os.path.join(d, "t.npy")
    if os.path.exists(out):
        os.remove(out)
    p = run("convert", "-q", path, "-o", out, *opts)
    return (np.load(out) if p.returncode == 0 else None), p


def same(got, want):
    return got is not None and got.dtype == want.dtype and got.shape == want.shape and \
        np.array_equal(got, want, equal_nan=want.dtype.kind == "f")


def test_float_text(d):
    # float64 unless asked: 0.123456789012345 is not 0.12345679.
    text = "0.123456789012345,16777217,1e-320\n-0,nan,-inf\n9007199254740993,1.5,2.5e308\n"
    for gz in (False, True):
        got, p = read_as(d, text, gz=gz)
        check(f"float64 by default (gz {gz})", same(got, loadtxt(text)), (err(p), got))
    # Correctly rounded float32 when asked, on digits that round either way.
    vals = rng.standard_normal((50, 20)) * 10.0 ** rng.integers(-30, 30, (50, 20))
    text = "\n".join(",".join(repr(float(x)) for x in row) for row in vals) + "\n"
    for name, dt in (("f32", np.float32), ("f64", np.float64), ("f16", np.float16)):
        got, p = read_as(d, text, "--in-dtype", name)
        with np.errstate(over="ignore"):
            want = loadtxt(text, dt)
        check(f"--in-dtype {name}: np.loadtxt's values", same(got, want), err(p))
    # mul of two CSV files: float64, as np.loadtxt and @ give.
    a, b = rng.standard_normal((7, 5)), rng.standard_normal((5, 3))
    for name, m in (("a", a), ("b", b)):
        np.savetxt(os.path.join(d, name + ".csv"), m, delimiter=",", fmt="%.17g")
    p = run("mul", "a.csv", "b.csv", "-o", "c.npy", "--kernel", "cpu", "-q", cwd=d)
    want = np.loadtxt(os.path.join(d, "a.csv"), delimiter=",") @ \
        np.loadtxt(os.path.join(d, "b.csv"), delimiter=",")
    got = np.load(os.path.join(d, "c.npy")) if p.returncode == 0 else None
    check("mul a.csv b.csv is float64, as np.loadtxt + @", got is not None and
          got.dtype == np.float64 and np.allclose(got, want, rtol=1e-13, atol=0), err(p))


def sig_digits(text):
    """(significant digits, exponent of the last one) of a number's text."""
    mant, _, exp = text.lstrip("-").replace("E", "e").partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    e = int(exp or 0) - len(frac)
    stripped = digits.rstrip("0")
    return stripped, e + len(digits) - len(stripped)


def layout(v, digits_of):
    """gemmcli's text for v from its shortest digits (digits_of(v) gives
    Python's): positional or scientific, whichever is shorter, positional
    on a tie; no '+' and no leading zeros in the exponent."""
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    sign = "-" if np.signbit(v) else ""
    if v == 0:
        return sign + "0"
    d, e = digits_of(v)
    x = len(d) - 1 + e                       # exponent of the first digit
    sci = d[0] + ("." + d[1:] if len(d) > 1 else "") + "e" + str(x)
    if x >= len(d) - 1:
        pos = d + "0" * (x - len(d) + 1)
    elif x >= 0:
        pos = d[:x + 1] + "." + d[x + 1:]
    else:
        pos = "0." + "0" * (-x - 1) + d
    return sign + (pos if len(pos) <= len(sci) else sci)


def special_f64(n):
    """n float64 values with the hard ones in: random bits, subnormals,
    every power of two and its neighbours, the extremes, ties between two
    nearest shortest candidates (c / 8 with c = 2 mod 4 near 2^52),
    standard normal values and ratios of small integers."""
    bits = rng.integers(0, 2**64, n // 2, dtype=np.uint64, endpoint=False)
    sub = rng.integers(1, 2**52, n // 10, dtype=np.uint64)
    pow2 = np.ldexp(1.0, np.arange(-1074, 1024))
    edges = np.array([np.finfo(float).max, np.finfo(float).tiny, 5e-324, 0.0, -0.0, 1.0,
                      0.1, 0.2, 0.30000000000000004, 1e23, 9007199254740992.0, np.inf, -np.inf])
    ties = (2.0**52 + 2 + 4 * rng.integers(0, 2**40, 1000)) / 8
    vals = np.concatenate([bits.view(np.float64), sub.view(np.float64), pow2,
                           np.nextafter(pow2, 0), np.nextafter(pow2, np.inf), edges, ties,
                           -ties, rng.standard_normal(n // 5),
                           rng.integers(-10**6, 10**6, n // 10) / rng.integers(1, 1000, n // 10)])
    vals = vals[~np.isnan(vals)]
    return vals[: len(vals) // 8 * 8].reshape(-1, 8)


def test_shortest_digits(d):
    # float64 written as the shortest text that reads back, the nearest of
    # those (Python's repr digits), in gemmcli's layout; float32 likewise
    # with NumPy's shortest float32 digits.
    def repr_digits(v):
        return sig_digits(repr(float(v)))

    def f32_digits(v):
        return sig_digits(np.format_float_scientific(v, unique=True))

    a64 = special_f64(200_000)
    a32 = np.concatenate([rng.integers(0, 2**32, 100_000, dtype=np.uint64)
                          .astype(np.uint32).view(np.float32),
                          rng.standard_normal(50_000).astype(np.float32),
                          np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)])
    a32 = a32[~np.isnan(a32)]
    a32 = a32[: len(a32) // 8 * 8].reshape(-1, 8)
    for name, a, digits_of in (("float64", a64, repr_digits), ("float32", a32, f32_digits)):
        np.save(os.path.join(d, "v.npy"), a)
        p = run("convert", "-q", "v.npy", "-o", "v.csv", cwd=d)
        check(f"{name}: {a.size} values written", p.returncode == 0, err(p))
        if p.returncode:
            continue
        with open(os.path.join(d, "v.csv")) as f:
            fields = [x for line in f for x in line.split(",")]
        fields = [x.strip() for x in fields]
        wrong = [(x, v) for x, v in zip(fields, a.ravel()) if x != layout(v, digits_of)]
        check(f"{name}: shortest nearest digits, gemmcli's layout ({len(a.ravel())} values)",
              len(fields) == a.size and not wrong, wrong[:5])
        back = np.array([float(x) for x in fields], dtype=a.dtype)
        check(f"{name}: every value reads back exactly (float())",
              np.array_equal(back.view(np.uint8), a.ravel().view(np.uint8)))


def hard_decimals():
    """Decimal strings float64 parsing must round correctly: the exact
    midpoints between neighbouring doubles (up to 767 digits), the same cut
    to 16-20 digits and moved a unit either way, 17-20 digit mantissas at
    every exponent, the edges of the range and long runs of digits."""
    from decimal import Decimal, getcontext
    getcontext().prec = 800
    out = ["1e-400", "1e309", "-1e309", "2.2250738585072011e-308", "2.2250738585072012e-308",
           "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
           "7.4109846876186981e-324", "7.4109846876186982e-324", "1.7976931348623158e308",
           "1.7976931348623159e308", "9007199254740993", "9007199254740993.00000000001",
           "18446744073709551615", "18446744073709551616", "99999999999999999999e-20",
           "0." + "3" * 400, "1" + "0" * 308 + ".5", "0." + "0" * 330 + "24703282292062328",
           "123456789012345678901234567890e-40"]
    lo = rng.integers(1, 0x7fefffffffffffff, 3000, dtype=np.uint64).view(np.float64)
    for v in lo:
        mid = (Decimal(float(v)) + Decimal(float(np.nextafter(v, np.inf)))) / 2
        exact = format(mid, "e")
        out.append(exact)
        for n in (16, 17, 18, 19, 20):
            cut = format(mid, f".{n - 1}e")
            out.append(cut)
            m, _, e = cut.partition("e")
            unit = Decimal(10) ** (int(e) - (n - 1))
            out.extend(format(Decimal(cut) + k * unit, f".{n - 1}e") for k in (-1, 1))
    for _ in range(20000):
        n = int(rng.integers(17, 21))
        m = int(rng.integers(10 ** (n - 1), 10 ** n, dtype=np.uint64)) if n < 20 else \
            int(rng.integers(10 ** 18, 10 ** 19, dtype=np.uint64)) * 10 + int(rng.integers(0, 10))
        out.append(f"{m}e{int(rng.integers(-345, 310))}")
    return out


def test_hard_parsing(d):
    # float64 text read as Python's float() reads it: correctly rounded,
    # bit for bit, subnormals, overflow to inf and underflow to 0 included.
    texts = hard_decimals()
    body = "\n".join(texts) + "\n"
    got, p = read_as(d, body)
    want = np.array([float(t) for t in texts]).reshape(-1, 1)
    ok = got is not None and got.shape == want.shape
    wrong = [] if not ok else [(t, float(g), float(w)) for t, g, w in
                               zip(texts, got.ravel(), want.ravel())
                               if np.float64(g).tobytes() != np.float64(w).tobytes()]
    check(f"{len(texts)} hard decimals read as float() reads them", ok and not wrong,
          (err(p), wrong[:5]))


def int_text(dt, rows=40, cols=7):
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    a = rng.integers(lo, hi, (rows, cols), dtype=dt, endpoint=True)
    a[0, :2] = lo, hi
    lines = []
    for i, row in enumerate(a):
        fields = [str(int(x)) for x in row]
        if i % 3 == 1:
            fields = [f.replace("-", "-00") if f.startswith("-") else "+" + f for f in fields]
        lines.append(" , ".join(fields))
    return "\n".join(lines) + "\n"


def test_integer_text(d):
    # Each integer type exactly, extremes included, as np.loadtxt reads it.
    for name, dt in INT_TYPES.items():
        text = int_text(dt)
        for gz in (False, True):
            got, p = read_as(d, text, "--in-dtype", name, gz=gz)
            check(f"--in-dtype {name} (gz {gz}): np.loadtxt's values", same(got, loadtxt(
                text, dt)), err(p))
    text = "0,-5,-0\n9223372036854775807,-9223372036854775808,1\n"
    got, p = read_as(d, text, "--in-dtype", "bool")
    check("bool: int64 literals, nonzero is true", same(got, loadtxt(text, np.bool_)), err(p))
    # Integers past 2^24 and 2^53 stay exact, and so does their product.
    text = "16777217,9007199254740993\n-3,2\n"
    got, p = read_as(d, text, "--in-dtype", "i64")
    check("i64 text stays exact", same(got, loadtxt(text, np.int64)), err(p))
    with open(os.path.join(d, "i.csv"), "w") as f:
        f.write(text)
    p = run("mul", "i.csv", "i.csv", "-o", "c.npy", "--in-dtype", "i64", "--kernel", "cpu", "-q",
            cwd=d)
    want = loadtxt(text, np.int64) @ loadtxt(text, np.int64)
    check("mul of i64 text: NumPy's exact product", p.returncode == 0 and
          same(np.load(os.path.join(d, "c.npy")), want), err(p))
    p = run("info", "i.csv", "--in-dtype", "i64", cwd=d)
    check("info --in-dtype i64 checks and names it", p.returncode == 0 and
          b"csv, i64, 2x2" in p.stdout, p.stdout + p.stderr)
    # Text over many parse chunks, 1 and 2 threads: the same bytes.
    big = rng.integers(-2**62, 2**62, (4000, 30), dtype=np.int64)
    path = os.path.join(d, "big.csv")
    np.savetxt(path, big, delimiter=",", fmt="%d")
    outs = []
    for t in (1, 2):
        p = run("convert", "-q", path, "-o", "-", "--format", "npy", "--in-dtype", "i64",
                "--threads", t)
        outs.append(p.stdout if p.returncode == 0 else None)
    check("i64 text on 1 and 2 threads: NumPy's values, same bytes", outs[0] is not None and
          outs[0] == outs[1] and same(np.load(io.BytesIO(outs[0])), big), err(p))


def test_integer_refusals(d):
    # What NumPy 2's loadtxt refuses for the dtype, gemmcli refuses at the
    # field's line and column, and writes nothing.
    cases = [("i64", "nan"), ("i64", "inf"), ("i64", "1.5"), ("i64", "1e3"), ("i64", "5."),
             ("i64", "9223372036854775808"), ("i64", "-9223372036854775809"),
             ("u64", "18446744073709551616"), ("u64", "-1"), ("i8", "300"), ("i8", "-129"),
             ("u8", "-1"), ("u8", "-0"), ("u8", "256"), ("i32", "0x10"), ("bool", "True"),
             ("bool", "1.0"), ("i16", "1_000")]
    for name, field in cases:
        text = f"1,2\n3,{field}\n"
        dt = INT_TYPES.get(name, np.bool_)
        try:
            loadtxt(text, dt)
            numpy_refuses = False
        except ValueError:
            numpy_refuses = True
        for gz in (False, True):
            got, p = read_as(d, text, "--in-dtype", name, gz=gz)
            where = "t.csv.gz:2:3: " if gz else "t.csv:2:3: "
            check(f"--in-dtype {name} refuses {field!r} (gz {gz}) as NumPy does",
                  numpy_refuses and p.returncode == 3 and where in err(p) and
                  repr(field) in err(p) and name in err(p) and
                  not os.path.exists(os.path.join(d, "t.npy")),
                  f"numpy refuses: {numpy_refuses}; exit {p.returncode}: {err(p)}")


def test_in_dtype(d):
    # --dtype converts the output; --in-dtype says what raw bytes are.
    a = rng.standard_normal((300, 100)).astype(np.float32)
    path = os.path.join(d, "a.bin")
    a.tofile(path)
    p = run("convert", path, "--shape", "300x100", "--dtype", "f64", "-o", "x.npy", "-q", cwd=d)
    check("convert a.bin --dtype f64: float32 read, float64 written", p.returncode == 0 and
          same(np.load(os.path.join(d, "x.npy")), a.astype(np.float64)), err(p))
    p = run("convert", path, "--shape", "150x100", "--in-dtype", "f64", "-o", "y.npy", "-q",
            cwd=d)
    check("convert a.bin --in-dtype f64: the bytes as float64", p.returncode == 0 and
          same(np.load(os.path.join(d, "y.npy")), np.fromfile(path, np.float64).reshape(150, 100)),
          err(p))
    p = run("convert", path, "--shape", "300x100", "--dtype", "f64", "--in-dtype", "f64",
            "-o", "z.npy", cwd=d)
    check("--in-dtype f64 on float32 bytes of 300x100: refused as short", p.returncode == 3 and
          "f64" in err(p) and not os.path.exists(os.path.join(d, "z.npy")), err(p))
    np.save(os.path.join(d, "i.npy"), a)
    p = run("convert", "i.npy", "--in-dtype", "i8", "-o", "j.npy", "-q", cwd=d)
    check(".npy keeps its own dtype whatever --in-dtype says", p.returncode == 0 and
          same(np.load(os.path.join(d, "j.npy")), a), err(p))
    p = run("transpose", path, "t.npy", "--shape", "300x100", "--kernel", "cpu", "--dtype", "f64",
            "-q", cwd=d)
    check("transpose raw --dtype f64: float32 read, float64 written", p.returncode == 0 and
          same(np.load(os.path.join(d, "t.npy")), a.T.astype(np.float64)), err(p))
    p = run("info", path, "--shape", "150x100", "--in-dtype", "f64", cwd=d)
    check("info --in-dtype f64 of raw", p.returncode == 0 and b"raw, f64, 150x100" in p.stdout,
          p.stdout + p.stderr)
    p = run("info", path, "--shape", "300x100", "--dtype", "f64", cwd=d)
    check("info has no --dtype (nothing is written)", p.returncode == 2, err(p))


def stored_member(chunk):
    """One gzip member holding chunk in a stored deflate block."""
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    n = len(chunk)
    block = b"\x01" + n.to_bytes(2, "little") + (n ^ 0xffff).to_bytes(2, "little")
    tail = zlib.crc32(chunk).to_bytes(4, "little") + n.to_bytes(4, "little")
    return head + block + chunk + tail


def test_gzip_members(d):
    # One 8 MB line, and many short lines, in 30-byte members: reading
    # stays linear in the text (a search of the line so far per member, or
    # a thread per member, took tens of seconds).
    vals = rng.integers(0, 1000, 2_000_000) / 8
    line = (",".join(repr(float(x)) for x in vals) + "\n").encode()
    rows = np.arange(1_800_000).reshape(-1, 3) / 4
    lines = "".join("%r,%r,%r\n" % tuple(r) for r in rows.tolist()).encode()
    for name, text, want in (("one long line", line, vals.reshape(1, -1)),
                             ("short lines", lines, rows)):
        path = os.path.join(d, "m.csv.gz")
        with open(path, "wb") as f:
            f.write(b"".join(stored_member(text[i:i + 30]) for i in range(0, len(text), 30)))
        with open(path, "rb") as f:
            data = f.read()
        for how in ("file", "pipe"):
            t0 = time.monotonic()
            try:
                if how == "file":
                    p = run("convert", "-q", path, "-o", "-", "--format", "npy", timeout=5)
                else:
                    p = run("convert", "-q", "--in-format", "csv.gz", "-", "-o", "-", "--format",
                            "npy", stdin=data, timeout=5)
            except subprocess.TimeoutExpired:
                check(f"{name} in 30-byte members ({how}): under 5 s", False, "timed out")
                continue
            took = time.monotonic() - t0
            got = np.load(io.BytesIO(p.stdout)) if p.returncode == 0 else None
            check(f"{name} in 30-byte members ({how}): np.loadtxt's values in {took:.2f} s",
                  same(got, np.loadtxt(io.StringIO(text.decode()), delimiter=",", ndmin=2)) and
                  same(got, want), err(p))


def test_short_gzip(d):
    # Too short for a header, but gzip's magic as far as it goes.
    for data in (b"\x1f", b"\x1f\x8b", b"\x1f\x8b\x08\x00\x00"):
        path = os.path.join(d, "s.csv.gz")
        with open(path, "wb") as f:
            f.write(data)
        for p in (run("convert", path, "-o", "s.npy", cwd=d),
                  run("convert", "--in-format", "csv.gz", "-", "-o", "s.npy", cwd=d, stdin=data)):
            check(f"{len(data)}-byte gzip: truncated, exit 3", p.returncode == 3 and
                  "truncated gzip data" in err(p) and "not gzip" not in err(p) and
                  not os.path.exists(os.path.join(d, "s.npy")), err(p))


def test_one_member_threads(d):
    # One gzip member, as np.savetxt, gzip and pandas write it, large enough
    # (over 2 MB compressed) to be inflated on several threads: the same
    # .npy at every --threads as on one, and NumPy's values, at gzip levels
    # 1, 6 and 9; rows that repeat (long back-references across chunk
    # borders) and a member of stored blocks too.
    a = rng.standard_normal((450, 500))
    buf = io.StringIO()
    np.savetxt(buf, a)
    text = buf.getvalue().encode()
    pool = rng.standard_normal((40, 60))
    rows = pool[rng.integers(0, len(pool), 24000)]
    buf = io.StringIO()
    np.savetxt(buf, rows)
    cases = [(f"np.savetxt text, level {lv}", text, lv, a) for lv in (1, 6, 9)]
    cases += [("repeating rows, level 6", buf.getvalue().encode(), 6, rows),
              ("stored blocks (level 0)", text[:text.rindex(b"\n", 0, 3_000_000) + 1], 0, None)]
    for name, data, level, want in cases:
        path = os.path.join(d, "one.csv.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(data, compresslevel=level, mtime=0))
        if want is None:
            want = np.loadtxt(io.StringIO(data.decode()), ndmin=2)
        size = os.path.getsize(path)
        outs = {}
        for threads in (1, 2, 3, 8):
            out = os.path.join(d, f"t{threads}.npy")
            p = run("convert", "-q", "--delimiter", " ", "--threads", threads, path, "-o", out)
            outs[threads] = open(out, "rb").read() if p.returncode == 0 else err(p)
        check(f"{name} ({size >> 20} MB): NumPy's values",
              isinstance(outs[1], bytes) and same(np.load(io.BytesIO(outs[1])), want), outs[1])
        for threads in (2, 3, 8):
            check(f"{name}: --threads {threads} gives the .npy --threads 1 does",
                  outs[threads] == outs[1], outs[threads] if isinstance(outs[threads], str) else
                  "different bytes")


def test_empty_marks(d):
    # A mark is taken only for a shape NumPy can make in the dtype read.
    cases = [((2**63 - 1, 0), [], False), ((2**60, 0), [], False), ((0, 2**60), [], False),
             ((2**60 - 1, 0), [], True), ((2**63 - 1, 0), ["--in-dtype", "u8"], True),
             ((0, 2**61 - 1), ["--in-dtype", "f32"], True), ((0, 2**61), ["--in-dtype", "f32"],
                                                             False)]
    for shape, opts, ok in cases:
        path = os.path.join(d, "mark.csv")
        with open(path, "w") as f:
            f.write("# empty matrix: shape (%d, %d)\n" % shape)
        for ext in ("npy", "bin", "csv"):
            out = os.path.join(d, "e." + ext)
            p = run("convert", "-q", path, "-o", out, *opts)
            if ok:
                back = np.load(out).shape if ext == "npy" and p.returncode == 0 else shape
                check(f"mark {shape} {opts} -> .{ext}", p.returncode == 0 and back == shape,
                      err(p))
            else:
                check(f"mark {shape} {opts} -> .{ext}: refused on reading, exit 3",
                      p.returncode == 3 and "too large for" in err(p) and
                      not os.path.exists(out), err(p))
            if os.path.exists(out):
                os.remove(out)
    # What NumPy itself refuses to make, for comparison.
    try:
        np.empty((2**63 - 1, 0))
        check("NumPy refuses a float64 (2^63-1, 0)", False)
    except ValueError:
        check("NumPy refuses a float64 (2^63-1, 0)", True)
    np.empty((2**60 - 1, 0))


def test_write_memory(d):
    # Host memory running out while the CSV writer gets its buffers is
    # status 3, as any host memory failure: a 1 x 4M row needs 132 MB of
    # text room, and the address space allowed is what converting to .npy
    # needs, found here, plus 32 MiB.
    src = os.path.join(d, "row.npy")
    np.save(src, rng.standard_normal((1, 4_000_000)))
    limit = None
    for mib in range(64, 2048, 16):
        p = run("convert", "-q", "--threads", "1", src, "-o", "row2.npy", cwd=d,
                limit_as=mib << 20)
        if p.returncode == 0:
            limit = (mib + 32) << 20
            break
    check("convert to .npy runs under some address-space limit", limit is not None)
    if limit is None:
        return
    for ext in ("csv", "csv.gz"):
        out = os.path.join(d, "row." + ext)
        p = run("convert", "-q", "--threads", "1", src, "-o", out, limit_as=limit)
        check(f"out of host memory writing .{ext}: exit 3, nothing written",
              p.returncode == 3 and "out of host memory" in err(p) and
              not os.path.exists(out) and
              not [f for f in os.listdir(d) if f.startswith(".gemmcli")], err(p))
    p = run("convert", "-q", "--threads", "1", src, "-o", os.path.join(d, "row.csv"))
    check("... and with memory, it is written", p.returncode == 0, err(p))


def main():
    with tempfile.TemporaryDirectory() as d:
        for test in (test_float_text, test_shortest_digits, test_hard_parsing, test_integer_text,
                     test_integer_refusals, test_in_dtype, test_gzip_members, test_short_gzip,
                     test_one_member_threads, test_empty_marks, test_write_memory):
            with tempfile.TemporaryDirectory(dir=d) as sub:
                test(sub)
    return check.summary("text")


if __name__ == "__main__":
    sys.exit(main())
