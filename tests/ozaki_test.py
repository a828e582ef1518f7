"""--compute ozaki on the host (kernels/reference/ozaki_cpu.c) and, with a
GPU, on the int8 tensor cores (i8_ozaki, kernels/igemm/igemm_05_ozaki.cu)
against the exact product (Python's fractions) and against NumPy's
float64 matmul on the same data, for each kind of data of the accuracy
study: the error of each element relative to the sum of its terms'
magnitudes, the largest.  Where the scheme keeps every bit (rows and
columns of one magnitude), its error must stay within twice float64's;
where rows span a wide range of exponents it loses bits, and the table
says how many.  Integers are exact; infinities and NaNs come out as
float64 GEMM gives them.  On the GPU also: a K past 65536 (the int8
products in pieces), a stack with alpha and beta, and ragged sides.

    python3 tests/ozaki_test.py ./gemmcli [--gpu]
        (prints 'ozaki: N passed, M failed'; without a device the GPU's
        cases say they were skipped, and with --gpu they fail)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np

from checks import Checks

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
GEMMCLI = os.path.abspath(ARGS[0] if ARGS else "./gemmcli")
check = Checks()
M, K, N = 12, 160, 10


def data(kind, rng, tiny=(-1060, 60)):
    if kind == "normal":
        return rng.standard_normal((M, K)), rng.standard_normal((K, N))
    if kind == "uniform":
        return rng.random((M, K)), rng.random((K, N))
    if kind == "wide":
        # exponents spread over 2^-20 .. 2^20 within each row and column
        return (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-20, 21, (M, K)),
                rng.standard_normal((K, N)) * 2.0 ** rng.integers(-20, 21, (K, N)))
    if kind == "cancel":
        # each row of A against its own negation down half of K: sums far
        # smaller than their terms
        a = rng.standard_normal((M, K))
        b = rng.standard_normal((K, N))
        b[K // 2:] = b[:K // 2] * (1 + 1e-9 * rng.standard_normal((K // 2, N)))
        a[:, K // 2:] = -a[:, :K // 2]
        return a, b
    if kind == "integers":
        return (rng.integers(-1000, 1001, (M, K)).astype(np.float64),
                rng.integers(-1000, 1001, (K, N)).astype(np.float64))
    if kind == "subnormal":
        # A's values subnormal (about 2^tiny[0]: 14 bits left of float64's
        # 53 at 2^-1060, 10 of float32's 24 at 2^-140), B's 2^tiny[1] times
        # N(0, 1), so that C is normal: A's rows take about the largest
        # scale there is (2^1113 for ozaki, its two steps' limit 2^1127);
        # from a generator of its own, so that the other kinds draw what
        # they drew before it was added
        rng = np.random.default_rng(-tiny[0])
        return (rng.standard_normal((M, K)) * 2.0 ** tiny[0],
                rng.standard_normal((K, N)) * 2.0 ** tiny[1])
    raise ValueError(kind)


def exact(a, b):
    fa = [[Fraction(x) for x in row] for row in a]
    fb = [[Fraction(x) for x in row] for row in b.T]
    return [[sum(x * y for x, y in zip(ra, cb)) for cb in fb] for ra in fa]


def worst(c, ex, scale):
    """The largest |c - exact| over the sum of the terms' magnitudes."""
    most = 0.0
    for i in range(M):
        for j in range(N):
            if scale[i, j] > 0:
                most = max(most, float(abs(Fraction(c[i, j]) - ex[i][j])) / scale[i, j])
    return most


def run(a, b, tmp, kernel, *more, mode="ozaki"):
    pa, pb, pc = (os.path.join(tmp, n) for n in ("a.npy", "b.npy", "c.npy"))
    np.save(pa, a)
    np.save(pb, b)
    p = subprocess.run([GEMMCLI, "mul", pa, pb, "-o", pc, "--compute", mode, "--kernel",
                        kernel, "-q", *more], capture_output=True, timeout=120)
    return (np.load(pc) if p.returncode == 0 else None), p


def gpu_cases(tmp, rng):
    """i8_ozaki beyond the study's small products: K in pieces, a stack
    with alpha and beta (C0), ragged sides; each against NumPy's float64
    product, within a few float64 roundings of the sum of the terms'
    magnitudes."""
    def close(got, want, scale, what):
        err = float(np.max(np.abs(got - want) / scale)) if got is not None else None
        check(f"i8_ozaki {what}: within float64's error", err is not None and err < 1e-14, err)
    # (150 x 264: whole warps' rows and a whole 256 columns, the product's
    # digits staged and stored a row at a time, beside the edge's digits
    # stored one by one, each folding two pieces)
    a = rng.standard_normal((150, 70001))
    b = rng.standard_normal((70001, 264))
    c, p = run(a, b, tmp, "i8_ozaki")
    check("i8_ozaki: K = 70001 (two pieces) runs", c is not None, p.stderr[:300])
    close(c, a @ b, np.abs(a) @ np.abs(b) + 1e-300, "K = 70001")
    a = rng.standard_normal((3, 129, 300))
    b = rng.standard_normal((300, 77))
    c0 = rng.standard_normal((3, 129, 77))
    pc0 = os.path.join(tmp, "c0.npy")
    np.save(pc0, c0)
    c, p = run(a, b, tmp, "i8_ozaki", "-c", pc0, "--alpha", "1.5", "--beta", "-0.25")
    check("i8_ozaki: a stack with alpha and beta runs", c is not None, p.stderr[:300])
    close(c, 1.5 * (a @ b) - 0.25 * c0, 1.5 * (np.abs(a) @ np.abs(b)) + 0.25 * np.abs(c0),
          "a stack, alpha 1.5, beta -0.25")
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    c032 = c0.astype(np.float32)
    np.save(pc0, c032)
    c, p = run(a32, b32, tmp, "i8_ozaki", "-c", pc0, "--alpha", "1.5", "--beta", "-0.25",
               mode="ozaki32")
    check("i8_ozaki ozaki32: a stack with alpha and beta runs", c is not None, p.stderr[:300])
    if c is not None:
        want = 1.5 * (a32.astype(np.float64) @ b32) - 0.25 * c032
        scale = 1.5 * (np.abs(a32.astype(np.float64)) @ np.abs(b32)) + 0.25 * np.abs(c032)
        err = float(np.max(np.abs(c - want) / scale))
        check("i8_ozaki ozaki32: a stack, within float32's error", err < 2e-6, err)
    for m, k, n in ((1, 1, 1), (7, 13, 5), (257, 1000, 263), (300, 500, 520)):
        a = rng.standard_normal((m, k))
        b = rng.standard_normal((k, n))
        c, p = run(a, b, tmp, "i8_ozaki")
        check(f"i8_ozaki: {m}x{k}x{n} runs", c is not None, p.stderr[:300])
        close(c, a @ b, np.abs(a) @ np.abs(b), f"{m}x{k}x{n}")


def test_kernel(kernel, tmp, rng, rows):
    for kind in ("normal", "uniform", "wide", "cancel", "integers", "subnormal"):
        a, b = data(kind, rng)
        c, p = run(a, b, tmp, kernel)
        kind = f"{kernel} {kind}" if kernel != "cpu" else kind
        check(f"{kind}: ozaki runs", c is not None, p.stderr[:300])
        if c is None:
            continue
        ex = exact(a, b)
        scale = np.abs(a) @ np.abs(b)
        oz, fp64 = worst(c, ex, scale), worst(a @ b, ex, scale)
        rows.append((kernel, kind.split()[-1], oz, fp64))
        if kind.endswith("integers"):
            check(f"{kind}: exact", oz == 0.0, oz)
        elif not kind.endswith("wide"):
            check(f"{kind}: within twice float64's error", oz <= 2 * max(fp64, 2 ** -53),
                  f"ozaki {oz:.3g}, float64 {fp64:.3g}")
    # Infinities and NaNs: their rows and columns as float64 GEMM has them.
    a, b = data("normal", rng)
    a[3, 7] = np.inf
    a[5, 2] = np.nan
    b[9, 4] = -np.inf
    c, p = run(a, b, tmp, kernel)
    check(f"{kernel} inf/nan: ozaki runs", c is not None, p.stderr[:300])
    if c is not None:
        with np.errstate(invalid="ignore"):
            want = a @ b
        same = np.array_equal(np.isnan(c), np.isnan(want)) and \
            np.array_equal(np.isinf(c), np.isinf(want)) and \
            np.array_equal(c[np.isinf(c)], want[np.isinf(want)])
        finite = np.isfinite(want)
        close = np.allclose(c[finite], want[finite], rtol=1e-12, atol=0)
        check(f"{kernel} inf/nan: NaNs and infinities where float64 GEMM has them",
              same and close, (np.argwhere(np.isnan(c) != np.isnan(want))[:4]))


def test_kernel32(kernel, tmp, rng, rows):
    """ozaki32 on float32 data: within twice float32 GEMM's error (NumPy's
    float32 matmul, OpenBLAS's SGEMM) on data of one magnitude a row, and
    the float32 result's own rounding at least; inf and NaN as a float32
    GEMM has them."""
    for kind in ("normal", "uniform", "wide", "cancel", "integers", "subnormal"):
        a, b = (x.astype(np.float32) for x in data(kind, rng, (-140, 20)))
        c, p = run(a, b, tmp, kernel, mode="ozaki32")
        name = f"{kernel} ozaki32 {kind}"
        check(f"{name}: runs", c is not None and c.dtype == np.float32, p.stderr[:300])
        if c is None:
            continue
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ex = exact(a64, b64)
        scale = np.abs(a64) @ np.abs(b64)
        oz = worst(c.astype(np.float64), ex, scale)
        fp32 = worst((a @ b).astype(np.float64), ex, scale)
        rows.append((kernel + "/32", kind, oz, fp32))
        if kind != "wide":
            check(f"{name}: within twice float32's error", oz <= 2 * max(fp32, 2 ** -24),
                  f"ozaki32 {oz:.3g}, float32 {fp32:.3g}")
    a, b = (x.astype(np.float32) for x in data("normal", rng))
    a[3, 7] = np.inf
    a[5, 2] = np.nan
    b[9, 4] = -np.inf
    c, p = run(a, b, tmp, kernel, mode="ozaki32")
    check(f"{kernel} ozaki32 inf/nan: runs", c is not None, p.stderr[:300])
    if c is not None:
        with np.errstate(invalid="ignore"):
            want = a @ b
        same = np.array_equal(np.isnan(c), np.isnan(want)) and \
            np.array_equal(c[np.isinf(c)], want[np.isinf(want)])
        check(f"{kernel} ozaki32 inf/nan: where float32 GEMM has them", same,
              np.argwhere(np.isnan(c) != np.isnan(want))[:4])


def verify_cases(kernel, tmp):
    """--verify's own numbers against the exact product's: the relative
    Frobenius error and the largest relative error of the result written,
    computed here from the exact sums rounded once to float64.  On data
    whose products fall near or below float64's subnormal range (where a
    double-double reference loses its low parts unless it scales them)
    and on data near its top (where unscaled sums of squares overflow)."""
    kinds = {"normal": (0, 0), "subnormal": (-1060, 60), "tiny": (-1060, 0),
             "huge": (900, 100)}
    run_kernel = "f64_dmma" if kernel == "i8_ozaki" else "cpu"
    rng = np.random.default_rng(1074)
    for kind, (ea, eb) in kinds.items():
        a = rng.standard_normal((M, K)) * 2.0 ** ea
        b = rng.standard_normal((K, N)) * 2.0 ** eb
        pa, pb, pc = (os.path.join(tmp, n) for n in ("va.npy", "vb.npy", "vc.npy"))
        np.save(pa, a)
        np.save(pb, b)
        p = subprocess.run([GEMMCLI, "mul", pa, pb, "-o", pc, "--compute", "fp64", "--kernel",
                            run_kernel, "--verify", "--tol", "1e30", "--json"],
                           capture_output=True, text=True, timeout=120)
        what = f"--verify of {run_kernel} on {kind} data (2^{ea} x 2^{eb})"
        if p.returncode != 0:
            check(f"{what} runs", False, p.stderr[-300:])
            continue
        v = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])["verify"]
        c = np.load(pc)
        ex = exact(a, b)
        ref = [[Fraction(float(x)) for x in row] for row in ex]
        largest = max(abs(x) for row in ref for x in row)
        d2 = sum((Fraction(c[i, j]) - ref[i][j]) ** 2 for i in range(M) for j in range(N))
        r2 = sum(x * x for row in ref for x in row)
        fro = math.sqrt(d2 / r2)
        rel = max((abs(Fraction(c[i, j]) - ref[i][j]) / abs(ref[i][j])
                   for i in range(M) for j in range(N) if abs(ref[i][j]) > largest / 10**6),
                  default=Fraction(0))
        rel = float(rel)
        check(f"{what}: the result has an error to measure", fro > 0 and rel > 0, (fro, rel))
        got = (v["rel_frobenius_error"], v["max_rel_error"])
        check(f"{what}: its errors {got[0]:.4g} / {got[1]:.4g} are the exact product's "
              f"{fro:.4g} / {rel:.4g}",
              abs(got[0] - fro) <= 0.05 * fro and abs(got[1] - rel) <= 0.05 * rel, got)


def main():
    rng = np.random.default_rng(29)
    kernels = ["cpu"]
    probe = subprocess.run([GEMMCLI, "kernels", "--details"], capture_output=True)
    if b"no CUDA device" not in probe.stderr:
        kernels.append("i8_ozaki")
    elif "--gpu" in sys.argv:
        check("a GPU answers (--gpu)", False, probe.stderr[-200:])
    else:
        print("i8_ozaki: its GPU cases not run (no CUDA device on this machine); the host's ran")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in kernels:
            test_kernel(kernel, tmp, rng, rows)
            test_kernel32(kernel, tmp, rng, rows)
            verify_cases(kernel, tmp)
        if "i8_ozaki" in kernels:
            gpu_cases(tmp, rng)
    print(f"ozaki vs float64, ozaki32 (kernel/32) vs float32 ({M}x{K} @ {K}x{N}): "
          "largest |error| / sum |terms|")
    for kernel, kind, oz, native in rows:
        print(f"  {kernel:12s} {kind:9s} ozaki {oz:9.3g}   native {native:9.3g}")
    return check.summary("ozaki")


if __name__ == "__main__":
    sys.exit(main())
