#!/usr/bin/env python3
"""NumPy's matmul as the oracle for `gemmcli mul` (with --kernel cpu, so no
GPU is needed): the result dtype of every dtype pair, integer results bit
for bit (wrap-around included), 1-D operands, stacks and broadcasting, C0
broadcasting, the compute modes, --alpha and --beta of integer results
as NumPy 2's Python ints, and the errors; `transpose` of stacks against
.mT; N-D .npy and raw round trips; 0-d arrays.

    matmul_test.py [path/to/gemmcli]      (prints 'matmul: N passed, M failed')
"""
import io
import os
import subprocess
import sys
import tempfile

import numpy as np

from bf16 import from_bf16_bits, to_bf16_bits

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
passed = failed = 0
rng = np.random.default_rng(11)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def run(*args, cwd=None):
    return subprocess.run([GEMMCLI, *map(str, args)], capture_output=True, cwd=cwd, timeout=120)


def err(p):
    return p.stderr.decode(errors="replace").strip()


def sample(dtype, shape, wrap=False):
    """Values of `dtype`: integers over the type's whole range when `wrap`
    (so that products overflow and wrap), else small."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = (info.min, info.max) if wrap else (max(info.min, -50), min(info.max, 50))
        return rng.integers(lo, hi, shape, dtype=dt, endpoint=True)
    return rng.standard_normal(shape).astype(dt)


def same(got, want):
    """Integers and bool: equal bit for bit.  Floats: within a few units in
    the last place of the dtype, relative to the largest |want|."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind in "biu":
        return np.array_equal(got, want)
    eps = np.finfo(want.dtype).eps
    scale = max(float(np.max(np.abs(want.astype(np.float64)))) if want.size else 0.0, 1e-30)
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0)) \
        <= 4 * eps * scale


def mul(d, a, b, *extra, out="c.npy"):
    np.save(os.path.join(d, "a.npy"), a)
    np.save(os.path.join(d, "b.npy"), b)
    p = run("mul", "a.npy", "b.npy", "-o", out, "--kernel", "cpu", "-q", *extra, cwd=d)
    got = np.load(os.path.join(d, out)) if p.returncode == 0 and out.endswith(".npy") else None
    return p, got


def test_dtype_pairs(d):
    for ta in DTYPES:
        for tb in DTYPES:
            for wrap in (False, True):
                if wrap and (np.dtype(ta).kind not in "iu" or np.dtype(tb).kind not in "iu"):
                    continue
                a, b = sample(ta, (3, 7), wrap), sample(tb, (7, 2), wrap)
                with np.errstate(all="ignore"):
                    want = np.matmul(a, b)
                p, got = mul(d, a, b, "--verify")
                name = f"{ta} @ {tb}{' (wrapping)' if wrap else ''}"
                check(name + ": runs and verifies", p.returncode == 0, err(p))
                if got is not None:
                    check(name + f": dtype {want.dtype}", got.dtype == want.dtype, got.dtype)
                    check(name + ": values", same(got, want), (got, want))


def test_shapes(d):
    cases = [((5,), (5, 3)), ((8, 5), (5,)), ((5,), (5,)), ((4, 8, 5), (5, 3)),
             ((2, 1, 8, 5), (3, 5, 4)), ((5,), (4, 5, 3)), ((4, 5, 3), (3,)),
             ((1, 3, 4), (2, 1, 4, 2)), ((2, 3, 0, 4), (4, 5)), ((3, 0), (0, 2)),
             ((6, 1, 1, 2, 3), (1, 5, 3, 2))]
    for sa, sb in cases:
        a, b = sample("float32", sa), sample("float32", sb)
        want = np.matmul(a, b)
        p, got = mul(d, a, b, "--verify")
        check(f"{sa} @ {sb}: runs", p.returncode == 0, err(p))
        if got is not None:
            check(f"{sa} @ {sb}: shape {want.shape}", got.shape == want.shape, got.shape)
            check(f"{sa} @ {sb}: values", same(got, want), "values differ")
    # integers through a broadcast stack, exactly
    a, b = sample("int32", (2, 1, 6, 5), True), sample("int32", (3, 5, 4), True)
    p, got = mul(d, a, b)
    check("int32 broadcast stack, wrapping", got is not None and np.array_equal(got, a @ b), err(p))
    for sa, sb in [((2, 8, 5), (3, 5, 4)), ((8, 5), (4, 3)), ((5,), (4,))]:
        p, _ = mul(d, sample("float32", sa), sample("float32", sb))
        check(f"{sa} @ {sb}: refused with exit 3 naming both shapes", p.returncode == 3 and
              "x".join(map(str, sa)) in err(p) and "x".join(map(str, sb)) in err(p), err(p))


def test_c0(d):
    a, b = sample("float64", (3, 6, 4)), sample("float64", (4, 5))
    for shape in [(3, 6, 5), (6, 5), (1, 5), (5,), (3, 1, 5), (1, 1)]:
        c0 = sample("float64", shape)
        np.save(os.path.join(d, "c0.npy"), c0)
        p, got = mul(d, a, b, "-c", "c0.npy", "--alpha", "0.5", "--beta", "-2", "--verify")
        want = 0.5 * (a @ b) - 2 * c0
        check(f"C0 {shape} broadcasts", got is not None and same(got, want), err(p))
    np.save(os.path.join(d, "c0.npy"), sample("float64", (4, 5)))
    p, _ = mul(d, a, b, "-c", "c0.npy", "--beta", "1")
    check("C0 that does not broadcast: exit 3", p.returncode == 3 and "broadcast" in err(p), err(p))
    ai, bi = sample("int16", (4, 3), True), sample("int16", (3, 2), True)
    ci = sample("int16", (4, 2), True)
    np.save(os.path.join(d, "c0.npy"), ci)
    p, got = mul(d, ai, bi, "-c", "c0.npy", "--alpha", "3", "--beta", "-7", "--verify")
    with np.errstate(all="ignore"):
        want = (np.int16(3) * (ai @ bi) + np.int16(-7) * ci).astype(np.int16)
    check("int16 alpha, beta, C0: exact with wrap-around", got is not None and
          np.array_equal(got, want), err(p))
    p, _ = mul(d, ai, bi, "--alpha", "0.5")
    check("integer result, fractional alpha: exit 2", p.returncode == 2 and "--alpha" in err(p),
          err(p))


def numpy_scalars(alpha, beta, ab, c0):
    """alpha * (A@B) + beta * C0 as NumPy 2 computes it with Python ints:
    in the product's dtype, wrapping; None where NumPy refuses them."""
    try:
        with np.errstate(all="ignore"):
            return alpha * ab + beta * c0
    except OverflowError:
        return None


def test_integer_scalars(d):
    """--alpha and --beta of an integer result: exact integers (not through
    a double), in the result dtype's range as NumPy 2 takes a Python int,
    wrapping when applied; out of range refused, saying the range."""
    for dt in ["int8", "uint8", "int16", "uint32", "int64", "uint64"]:
        info = np.iinfo(dt)
        a, b, c0 = sample(dt, (4, 3), True), sample(dt, (3, 2), True), sample(dt, (4, 2), True)
        np.save(os.path.join(d, "c0.npy"), c0)
        for alpha, beta in [(info.max, info.min), (info.min, info.max), (info.max - 1, 3),
                            (-1 if info.min else 2, info.max)]:
            want = numpy_scalars(alpha, beta, a @ b, c0)
            p, got = mul(d, a, b, "-c", "c0.npy", "--alpha", alpha, "--beta", beta, "--verify")
            check(f"{dt} --alpha {alpha} --beta {beta}: NumPy's, exactly", want is not None and
                  got is not None and got.dtype == want.dtype and np.array_equal(got, want),
                  err(p))
        for opt, bad in [("--alpha", info.max + 1), ("--beta", info.min - 1)]:
            refused = numpy_scalars(bad, bad, a @ b, c0) is None
            p, _ = mul(d, a, b, "-c", "c0.npy", "--beta", "1", opt, bad)
            check(f"{dt} {opt} {bad}: refused (NumPy: OverflowError) -> 2, saying the range",
                  refused and p.returncode == 2 and opt in err(p) and
                  f"from {info.min} to {info.max}" in err(p), err(p))
    # Beyond 2^53: a double would round 2^53 + 1 to 2^53.
    a, b = sample("int64", (5, 4), True), sample("int64", (4, 3), True)
    for alpha in (9007199254740993, -9007199254740993, 2**62 + 1):
        p, got = mul(d, a, b, "--alpha", alpha, "--verify")
        with np.errstate(all="ignore"):
            want = alpha * (a @ b)
        check(f"int64 --alpha {alpha}: exactly NumPy's", got is not None and
              np.array_equal(got, want), err(p))
    small_a, small_b = sample("int64", (5, 4)), sample("int64", (4, 3))
    p, got = mul(d, small_a, small_b, "--alpha", 9007199254740993, "--verify")
    check("int64 below 2^53 (FP64 arithmetic), --alpha 2^53 + 1: exact", got is not None and
          np.array_equal(got, 9007199254740993 * (small_a @ small_b)), err(p))
    # An empty product: C0 alone, scaled exactly.
    c0 = sample("int64", (5, 3), True)
    np.save(os.path.join(d, "c0.npy"), c0)
    p, got = mul(d, sample("int64", (5, 0)), sample("int64", (0, 3)), "-c", "c0.npy", "--beta",
                 9007199254740993)
    with np.errstate(all="ignore"):
        want = 9007199254740993 * c0
    check("empty int64 product, --beta 2^53 + 1: C0 scaled exactly", got is not None and
          np.array_equal(got, want), err(p))
    # bool: True and False keep a bool product bool; another integer would
    # make NumPy's int64.
    x, y, c0 = sample("bool", (4, 3)), sample("bool", (3, 2)), sample("bool", (4, 2))
    np.save(os.path.join(d, "c0.npy"), c0)
    p, got = mul(d, x, y, "-c", "c0.npy", "--alpha", 1, "--beta", 1)
    want = np.True_ * (x @ y) + np.True_ * c0
    check("bool --alpha 1 --beta 1: NumPy's True * A@B + True * C0", got is not None and
          got.dtype == np.bool_ and np.array_equal(got, want), err(p))
    p, _ = mul(d, x, y, "--alpha", 2)
    check("bool --alpha 2: refused -> 2, saying 0 to 1", p.returncode == 2 and
          "from 0 to 1" in err(p), err(p))
    # A float scalar would make NumPy's product float64: refused, as 2.5 is.
    for text in ("2.0", "1e3", "0x10", "two"):
        p, _ = mul(d, a, b, "--alpha", text)
        check(f"int64 --alpha {text}: refused -> 2", p.returncode == 2 and "--alpha" in err(p),
              err(p))
    # A float result takes the scalar as NumPy converts a Python int: rounded.
    f, g = sample("float64", (4, 3)), sample("float64", (3, 2))
    p, got = mul(d, f, g, "--alpha", 9007199254740993, "--beta", 0)
    check("float64 --alpha 2^53 + 1: NumPy's float64 product", got is not None and
          same(got, 9007199254740993 * (f @ g)), err(p))


def test_compute(d):
    a, b = sample("float64", (30, 40)), sample("float64", (40, 20))
    want = a @ b
    p, got = mul(d, a, b, "--compute", "fp32")
    if got is not None:
        rel = np.linalg.norm(got - want) / np.linalg.norm(want)
        check("f64 with --compute fp32: f64 result, FP32 error", got.dtype == np.float64 and
              1e-12 < rel < 1e-5, rel)
    else:
        check("f64 with --compute fp32 runs", False, err(p))
    p, got = mul(d, a, b)
    check("f64: computed in FP64", got is not None and
          np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-14, err(p))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    p, got = mul(d, a32, b32, "--compute", "fp64")
    want64 = (a32.astype(np.float64) @ b32.astype(np.float64)).astype(np.float32)
    check("f32 with --compute fp64: f32 result rounded once", got is not None and
          got.dtype == np.float32 and np.array_equal(got, want64), err(p))
    p, _ = mul(d, a32, b32, "--compute", "exact")
    check("--compute exact on floats: exit 2", p.returncode == 2 and "exact" in err(p), err(p))
    p, _ = mul(d, a32, b32, "--compute", "tf64")
    check("unknown --compute: exit 2", p.returncode == 2, err(p))
    ai, bi = sample("int64", (5, 6), True), sample("int64", (6, 3), True)
    p, got = mul(d, ai, bi, "--verify")
    with np.errstate(all="ignore"):
        check("int64 beyond 2^53: exact, wrapping", got is not None and
              np.array_equal(got, ai @ bi), err(p))
    p, got = mul(d, ai, bi, "--compute", "exact", "--dtype", "f64")
    with np.errstate(all="ignore"):
        check("--dtype f64 converts the integer result", got is not None and
              got.dtype == np.float64 and np.array_equal(got, (ai @ bi).astype(np.float64)),
              err(p))


def test_16bit(d):
    # bfloat16 has no .npy: raw in (--in-dtype bf16), raw out, NumPy emulates it.
    a, b = rng.standard_normal((9, 13)), rng.standard_normal((13, 6))
    ab, bb = to_bf16_bits(a), to_bf16_bits(b)
    ab.tofile(os.path.join(d, "a.bin"))
    bb.tofile(os.path.join(d, "b.bin"))
    p = run("mul", "a.bin", "b.bin", "--shape", "9x13", "--shape", "13x6", "--in-dtype", "bf16",
            "-o", "c.bin", "--kernel", "cpu", "-q", "--verify", cwd=d)
    want = from_bf16_bits(ab).astype(np.float64) @ from_bf16_bits(bb).astype(np.float64)
    if p.returncode == 0:
        got = from_bf16_bits(np.fromfile(os.path.join(d, "c.bin"), np.uint16)).reshape(9, 6)
        ulp = np.abs(want) * 2.0 ** -7
        check("bf16 @ bf16: bf16 result, rounded once", np.all(np.abs(got - want) <= ulp + 1e-30),
              np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
    else:
        check("bf16 @ bf16 runs", False, err(p))
    p = run("mul", "a.bin", "b.bin", "--shape", "9x13", "--shape", "13x6", "--in-dtype", "bf16",
            "-o", "c.npy", "--kernel", "cpu", cwd=d)
    check("a bf16 result to .npy: exit 2 saying NumPy has none", p.returncode == 2 and
          "bfloat16" in err(p), err(p))
    np.save(os.path.join(d, "h.npy"), rng.standard_normal((13, 6)).astype(np.float16))
    p = run("mul", "a.bin", "h.npy", "--shape", "9x13", "--in-dtype", "bf16", "-o", "c.bin",
            "--kernel", "cpu", "-q", cwd=d)
    check("bf16 @ f16 runs", p.returncode == 0, err(p))
    # opt-in lossy arithmetic on float32 data: the result stays float32
    x, y = sample("float32", (40, 300)), sample("float32", (300, 30))
    want = x.astype(np.float64) @ y
    for mode, lo, hi in (("f16", 1e-5, 2e-3), ("bf16", 1e-4, 2e-2), ("fp32", 0, 1e-6)):
        p, got = mul(d, x, y, "--compute", mode, "--verify")
        if got is None:
            check(f"--compute {mode} on float32 runs", False, err(p))
            continue
        rel = np.linalg.norm(got - want) / np.linalg.norm(want)
        check(f"--compute {mode} on float32: float32 result, error {lo:g}..{hi:g}",
              got.dtype == np.float32 and lo <= rel <= hi, rel)
    p, _ = mul(d, sample("int32", (4, 5)), sample("int32", (5, 3)), "--compute", "fp32")
    check("integer data with --compute fp32: exit 2", p.returncode == 2 and "exact" in err(p),
          err(p))


def test_errors(d):
    np.save(os.path.join(d, "z.npy"), (rng.standard_normal((3, 4)) + 1j).astype(np.complex64))
    np.save(os.path.join(d, "b.npy"), sample("float32", (4, 2)))
    p = run("mul", "z.npy", "b.npy", "-o", "c.npy", "--kernel", "cpu", cwd=d)
    check("complex operand: exit 3", p.returncode == 3 and "complex" in err(p), err(p))
    np.save(os.path.join(d, "s.npy"), sample("float32", (2, 3, 4)))
    p = run("mul", "s.npy", "b.npy", "-o", "c.csv", "--kernel", "cpu", cwd=d)
    check("3-D result to CSV: exit 2 suggesting .npy", p.returncode == 2 and ".npy" in err(p) and
          not os.path.exists(os.path.join(d, "c.csv")), err(p))
    p = run("mul", "s.npy", "b.npy", "-o", "c.npy", "--kernel", "naive", "--compute", "fp64",
            cwd=d)
    check("a kernel that cannot compute it: exit 2 saying why", p.returncode == 2 and
          "naive" in err(p) and "f64" in err(p), err(p))


def test_transpose_and_formats(d):
    for shape, dtype in [((4, 3, 5), "float32"), ((2, 3, 4, 5), "int16"), ((3, 1, 7), "float64"),
                         ((2, 0, 3), "float32")]:
        x = sample(dtype, shape)
        np.save(os.path.join(d, "x.npy"), x)
        p = run("transpose", "x.npy", "y.npy", "--kernel", "cpu", "-q", "--verify", cwd=d)
        ok = p.returncode == 0 and np.array_equal(np.load(os.path.join(d, "y.npy")),
                                                   np.swapaxes(x, -1, -2))
        check(f"transpose {shape} is .mT", ok, err(p))
        p = run("convert", "-q", "x.npy", "-o", "x.bin", cwd=d)
        q = run("convert", "-q", "x.bin", "--shape", "x".join(map(str, shape)), "--in-dtype",
                dtype, "-o", "x2.npy", cwd=d)
        ok = p.returncode == 0 and q.returncode == 0 and \
            np.array_equal(np.load(os.path.join(d, "x2.npy")), x)
        check(f"{shape} {dtype} .npy -> raw -> .npy", ok, err(p) + err(q))
        p = run("info", "x.npy", cwd=d)
        check(f"info shows {shape}", "x".join(map(str, shape)).encode() in p.stdout, p.stdout)
    x = np.asfortranarray(sample("float32", (3, 4, 5)))
    np.save(os.path.join(d, "f.npy"), x)
    p, got = mul(d, x, sample("float32", (5, 2)))
    np.save(os.path.join(d, "b2.npy"), sample("float32", (5, 2)))
    p = run("mul", "f.npy", "b2.npy", "-o", "c.npy", "--kernel", "cpu", "-q", cwd=d)
    ok = p.returncode == 0 and same(np.load(os.path.join(d, "c.npy")),
                                    x @ np.load(os.path.join(d, "b2.npy")))
    check("3-D Fortran-order operand", ok, err(p))
    v = sample("float32", (6,))
    np.save(os.path.join(d, "v.npy"), v)
    p = run("convert", "-q", "v.npy", "-o", "v.csv", cwd=d)
    got = np.loadtxt(os.path.join(d, "v.csv"), dtype=np.float32) if p.returncode == 0 else None
    check("a vector to CSV: one value a line, as savetxt", got is not None and
          np.array_equal(got, v), err(p))


def numpy_refuses(f):
    try:
        f()
        return False
    except ValueError:
        return True


def test_zero_d(d):
    """0-d arrays (np.save of a NumPy scalar, vector @ vector): read and
    written where NumPy has them (info, convert to .npy and raw, C0, a
    result read back), refused where NumPy refuses them (matmul operands,
    .mT, np.savetxt)."""
    import json
    at = lambda name: os.path.join(d, name)
    for x in (np.float64(2.5), np.float32(-1.5), np.int8(-3), np.uint64(2**64 - 1),
              np.bool_(True), np.array(2.5, ">f8"), np.float16(0.5)):
        np.save(at("s.npy"), x)
        what = f"0-d {np.asarray(x).dtype.str}"
        p = run("info", "s.npy", cwd=d)
        check(f"{what}: info says scalar", p.returncode == 0 and b"scalar" in p.stdout, err(p))
        p = run("info", "--json", "s.npy", cwd=d)
        info = json.loads(p.stdout) if p.returncode == 0 else [{}]
        check(f"{what}: info --json shape []", info[0].get("shape") == [], (err(p), p.stdout))
        p = run("convert", "-q", "s.npy", "-o", "t.npy", cwd=d)
        got = np.load(at("t.npy")) if p.returncode == 0 else None
        np.save(at("want.npy"), np.asarray(x).astype(np.asarray(x).dtype.newbyteorder("=")))
        check(f"{what}: convert to .npy: np.save's bytes", got is not None and got.shape == ()
              and open(at("t.npy"), "rb").read() == open(at("want.npy"), "rb").read(), err(p))
        dt = np.asarray(x).dtype.newbyteorder("=").name
        p = run("convert", "-q", "s.npy", "-o", "t.bin", cwd=d)
        q = run("convert", "-q", "t.bin", "--shape", "scalar", "--in-dtype", dt, "-o", "u.npy",
                cwd=d)
        ok = p.returncode == 0 and q.returncode == 0 and np.load(at("u.npy")).shape == () and \
            np.array_equal(np.load(at("u.npy")), x)
        check(f"{what}: .npy -> raw -> .npy (--shape scalar)", ok, err(p) + err(q))
    # np.savetxt refuses a 0-d array: so does CSV output, writing nothing.
    np.save(at("s.npy"), np.float64(2.5))
    check("np.savetxt refuses 0-d", numpy_refuses(lambda: np.savetxt(io.StringIO(),
                                                                      np.array(2.5))))
    for out in ("s.csv", "s.csv.gz"):
        p = run("convert", "s.npy", "-o", out, cwd=d)
        check(f"0-d to {out}: exit 2, nothing written", p.returncode == 2 and "scalar" in err(p)
              and not os.path.exists(at(out)), err(p))
    # vector @ vector is 0-d, as NumPy's; gemmcli reads its own result back.
    v, w = sample("float64", (7,)), sample("float64", (7,))
    p, got = mul(d, v, w, "--verify", out="r.npy")
    check("vector @ vector: a 0-d result", got is not None and got.shape == () and
          same(got, v @ w), err(p))
    p = run("info", "r.npy", cwd=d)
    check("info reads the 0-d result", p.returncode == 0 and b"scalar" in p.stdout, err(p))
    p = run("convert", "-q", "r.npy", "-o", "r2.npy", cwd=d)
    check("convert reads the 0-d result", p.returncode == 0 and
          np.array_equal(np.load(at("r2.npy")), np.load(at("r.npy"))), err(p))
    iv = sample("int16", (9,), True)
    p, got = mul(d, iv, iv, out="ir.npy")
    check("int16 vector @ vector: 0-d, wrapping", got is not None and got.shape == () and
          got.dtype == np.int16 and got == iv @ iv, err(p))
    # C0 of shape () broadcasts to any result, as in NumPy.
    a, b = sample("float64", (3, 4)), sample("float64", (4, 2))
    np.save(at("c0.npy"), np.float64(-1.25))
    p, got = mul(d, a, b, "-c", "c0.npy", "--alpha", "0.5", "--beta", "2", "--verify")
    check("0-d C0 broadcasts", got is not None and same(got, 0.5 * (a @ b) + 2 * np.float64(-1.25)),
          err(p))
    ia, ib = sample("int16", (3, 4), True), sample("int16", (4, 2), True)
    p, got = mul(d, ia, ib, "-c", "ir.npy", "--beta", "-3", "--verify")
    with np.errstate(all="ignore"):
        want = ia @ ib + (-3) * np.load(at("ir.npy"))
    check("a 0-d integer result as C0, exact", got is not None and got.dtype == want.dtype and
          np.array_equal(got, want), err(p))
    # matmul refuses 0-d operands, naming the operand as NumPy does.
    s = np.float64(2.5)
    for i, (x, y) in enumerate(((s, a), (a, s))):
        refused = numpy_refuses(lambda: np.matmul(x, y))
        p, _ = mul(d, x, y)
        check(f"0-d operand {i}: refused as NumPy's matmul (exit 3)", refused and
              p.returncode == 3 and f"input operand {i} does not have enough dimensions" in err(p),
              err(p))
    # .mT needs two axes; a 0-d array has none.
    check("NumPy's .mT refuses 0-d", numpy_refuses(lambda: np.array(2.5).mT))
    os.remove(at("t.npy"))
    p = run("transpose", "s.npy", "-o", "t.npy", "--kernel", "cpu", cwd=d)
    check("transpose of 0-d: exit 3, nothing written", p.returncode == 3 and "0-d" in err(p) and
          not os.path.exists(at("t.npy")), err(p))


def main():
    for t in (test_dtype_pairs, test_shapes, test_c0, test_integer_scalars, test_compute, test_16bit, test_errors,
              test_transpose_and_formats, test_zero_d):
        with tempfile.TemporaryDirectory(prefix="gemmcli-matmul.") as d:
            t(d)
    print(f"matmul: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
