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
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from bf16 import from_bf16_bits, to_bf16_bits

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
rng = np.random.default_rng(11)
# gemmcli processes at once: each spends most of its life starting the GPU
# and the host's side, so several share one GPU well.
WORKERS = min(16, os.cpu_count() or 4)
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


def uploads_while_read(p):
    """Operands of 32 MiB and more, read from regular files into page-locked
    slots that are copied to the device as they fill: the summary counts
    them, and the results match NumPy's."""
    a = rng.standard_normal((3001, 4099)).astype(np.float32)          # 49 MB
    b = np.asfortranarray(rng.standard_normal((4099, 2100)).astype(np.float32))  # Fortran
    np.save(p("ua.npy"), a)
    np.save(p("ub.npy"), b)
    a.tofile(p("ua.bin"))
    small = rng.standard_normal((4099, 300)).astype(np.float32)
    np.save(p("us.npy"), small)
    ref = a.astype(np.float64) @ b
    cases = [("npy, Fortran B", [p("ua.npy"), p("ub.npy")], 2, ref),
             ("raw A", [p("ua.bin"), p("ub.npy"), "--shape", "3001x4099"], 2, ref),
             ("one thread", [p("ua.npy"), p("ub.npy"), "--threads", "1"], 2, ref),
             ("a small B", [p("ua.npy"), p("us.npy")], 1, a.astype(np.float64) @ small)]
    for name, args, want, expect in cases:
        for verify in ([], ["--verify"]):
            r = run("mul", *args, "-o", p("uc.npy"), "--json", *verify)
            ok = r.returncode == 0
            rep = json.loads(r.stdout) if ok else {}
            check(f"upload while read, {name} {verify}", ok and
                  rep.get("uploaded_while_read") == want and
                  (not verify or rep["verify"]["ok"]), (r.stderr.decode()[-300:], rep))
            if ok:
                got = np.load(p("uc.npy"))
                err = np.linalg.norm(got - expect) / np.linalg.norm(expect)
                check(f"upload while read, {name} {verify} values",
                      got.shape == expect.shape and err < 1e-5, err)
    # float16 goes as it is stored; integers are read on the host.
    h = rng.standard_normal((6000, 3000)).astype(np.float16)          # 36 MB
    np.save(p("uh.npy"), h)
    hb = rng.standard_normal((3000, 64)).astype(np.float16)
    np.save(p("uhb.npy"), hb)
    r = run("mul", p("uh.npy"), p("uhb.npy"), "-o", p("uhc.npy"), "--json", "--verify")
    check("upload while read, float16", r.returncode == 0 and
          json.loads(r.stdout)["uploaded_while_read"] == 1, r.stderr.decode()[-300:])
    n = rng.integers(-50, 50, (3000, 3000), dtype=np.int32)           # 36 MB
    np.save(p("un.npy"), n)
    r = run("mul", p("un.npy"), p("un.npy"), "-o", p("unc.npy"), "--json")
    check("integers are read on the host", r.returncode == 0 and
          json.loads(r.stdout)["uploaded_while_read"] == 0 and
          np.array_equal(np.load(p("unc.npy")), n.astype(np.int64) @ n), r.stderr.decode()[-300:])
    # transpose: any dtype, without --verify (which checks on the host).
    for x in (rng.standard_normal((4500, 4000)).astype(np.float32),
              rng.integers(-9, 9, (8000, 2500), dtype=np.int16),
              rng.integers(-128, 128, (6000, 7001), dtype=np.int8)):
        np.save(p("ux.npy"), x)
        for verify in ([], ["--verify"]):
            r = run("transpose", p("ux.npy"), p("uy.npy"), "--json", *verify)
            ok = r.returncode == 0
            check(f"transpose upload while read {x.dtype} {verify}", ok and
                  json.loads(r.stdout)["uploaded_while_read"] == (0 if verify else 1) and
                  np.array_equal(np.load(p("uy.npy")), x.T), r.stderr.decode()[-300:])
    # A payload cut short is found before anything is uploaded.
    with open(p("ua.npy"), "rb") as f:
        whole = f.read()
    with open(p("ut.npy"), "wb") as f:
        f.write(whole[:-4096])
    r = run("mul", p("ut.npy"), p("ub.npy"), "-o", p("ut_out.npy"))
    check("truncated large operand -> 3", r.returncode == 3 and b"truncated" in r.stderr and
          not os.path.exists(p("ut_out.npy")), r.stderr.decode()[-300:])


def verify_like_with_like(p):
    """--verify beside a 16-bit result: cuBLAS's errors are those of its
    float32 output rounded to the result's dtype as the result is, so that
    the two carry the same output rounding (NumPy's rounding of the exact
    product is the floor under both), and its errors before that rounding,
    the FP32 accumulator's, are given apart and are smaller.  A float32
    result has nothing before a rounding to give."""
    for t, (m, n, k) in [("f16", (1024, 1024, 1024)), ("f16", (513, 771, 1000)),
                         ("bf16", (1024, 1024, 1024))]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        if t == "f16":
            a, b = a.astype(np.float16), b.astype(np.float16)
            np.save(p("la.npy"), a)
            np.save(p("lb.npy"), b)
            ins = [p("la.npy"), p("lb.npy"), "-o", p("lc.npy")]
        else:
            a, b = from_bf16_bits(to_bf16_bits(a)), from_bf16_bits(to_bf16_bits(b))
            to_bf16_bits(a).tofile(p("la.bin"))
            to_bf16_bits(b).tofile(p("lb.bin"))
            ins = [p("la.bin"), p("lb.bin"), "--in-dtype", "bf16", "--dtype", "bf16", "--shape",
                   f"{m}x{k}", "--shape", f"{k}x{n}", "-o", p("lc.bin")]
        ref = a.astype(np.float64) @ b.astype(np.float64)
        rel = lambda x: np.linalg.norm(x - ref) / np.linalg.norm(ref)
        floor = rel(ref.astype(np.float16) if t == "f16" else
                    from_bf16_bits(to_bf16_bits(ref.astype(np.float32))))
        label = f"--verify {t} {m}x{n}x{k}: cuBLAS"
        r = run("mul", *ins, "--verify", "--json")
        check(label + " runs", r.returncode == 0, r.stderr.decode()[-300:])
        if r.returncode != 0:
            continue
        v = json.loads(r.stdout)["verify"]
        got = (np.load(p("lc.npy")) if t == "f16" else
               from_bf16_bits(np.fromfile(p("lc.bin"), np.uint16)).reshape(m, n))
        ours, theirs = v["rel_frobenius_error"], v["timed_rel_frobenius_error"]
        acc = v["timed_accumulator_rel_frobenius_error"]
        check(label + " timed, its float32 output apart", v["timed"] == "cublas" and
              v["timed_accumulator_dtype"] == "f32" and acc is not None, v)
        if theirs is None or acc is None:
            continue
        check(label + " the result's error is NumPy's", abs(rel(got) - ours) <= 0.01 * ours,
              (rel(got), ours))
        check(label + " error at the result's dtype carries its rounding",
              theirs >= floor / 2, (theirs, floor))
        check(label + " and the result's within 4x of each other",
              theirs / 4 <= ours <= 4 * theirs, (ours, theirs))
        # (the Frobenius error: the largest relative error is an element's
        # near 0, which the rounding can bring nearer or farther either way)
        check(label + " the FP32 accumulator's error is smaller", acc < theirs / 4,
              (acc, theirs, v["timed_accumulator_max_rel_error"], v["timed_max_rel_error"]))
        r = run("mul", *ins, "--verify")
        text = r.stderr.decode()
        check(label + " summary labels both", r.returncode == 0 and
              f"its output rounded to {t} as this result is" in text and
              "errors before that rounding (its f32 output, the accumulator's)" in text, text)
    np.save(p("la.npy"), rng.standard_normal((300, 200)).astype(np.float32))
    np.save(p("lb.npy"), rng.standard_normal((200, 100)).astype(np.float32))
    r = run("mul", p("la.npy"), p("lb.npy"), "-o", p("lc.npy"), "--verify", "--json")
    v = json.loads(r.stdout)["verify"] if r.returncode == 0 else {}
    check("--verify f32: cuBLAS's errors as they are, nothing before a rounding",
          v.get("timed_rel_frobenius_error") is not None and
          v.get("timed_accumulator_dtype", 0) is None and
          v.get("timed_accumulator_rel_frobenius_error", 0) is None, (r.stderr.decode()[-300:], v))


def mul_operands(t, dt, m, n, k):
    """A case's operands, C0, scalars and NumPy's answer for signature t."""
    if t in ("i8", "i16", "i32"):
        # the type's whole range: the limbs' top digit 128 and the sums'
        # wrap-around among them
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        a, b = rng.integers(lo, hi, (m, k), dt, True), rng.integers(lo, hi, (k, n), dt, True)
        c0 = rng.integers(lo, hi, (m, n), dt, True)
        return a, b, c0, "3", "-2", 3 * (a.astype(np.int64) @ b) - 2 * c0
    if t == "i64":
        a = rng.integers(-1000, 1000, (m, k)).astype(dt)
        b = rng.integers(-1000, 1000, (k, n)).astype(dt)
        c0 = rng.integers(-1000, 1000, (m, n)).astype(dt)
        return a, b, c0, "3", "-2", 3 * (a.astype(np.int64) @ b) - 2 * c0
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    c0 = rng.standard_normal((m, n)).astype(dt)
    if t == "bf16":
        a, b, c0 = (from_bf16_bits(to_bf16_bits(x)) for x in (a, b, c0))
    return a, b, c0, "1.5", "0.5", 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 0.5 * c0


# The messages of a kernel that refuses a shape, and whether the shape
# deserves the refusal.
REFUSALS = [
    (b"must be multiples of 8", lambda m, n, k: k % 8 or n % 8, "refused: 16-byte rows"),
    (b"gemv computes a vector", lambda m, n, k: m != 1 and n != 1, "refused (not a vector product)"),
    (b"thin computes products with M <= 32", lambda m, n, k: min(m, n) > 32,
     "refused (no thin side)"),
    (b"small_k computes products with K <= 32", lambda m, n, k: k > 32,
     "refused (K beyond small_k's)"),
    (b"computes products with M, N, K <= 64", lambda m, n, k: max(m, n, k) > 64,
     "refused (beyond the small stages' limit)"),
    (b"computes products of at most 32 rows", lambda m, n, k: m > 32,
     "refused (rows beyond splitk_32x128's tile)"),
    (b"needs rows of A in 4-byte units", lambda m, n, k: k % 2,
     "refused (an odd K on mma_sync_128x64's tile)"),
    (b"int8 reference takes M, N and K multiples of 256", lambda m, n, k: m % 256 or n % 256 or k % 256,
     "refused (cuBLAS int8: sides not multiples of 256)"),
    (b"mma_thin computes products with M <= 16 and N >= 64, or N <= 16 and M >= 64",
     lambda m, n, k: not ((m <= 16 and n >= 64) or (n <= 16 and m >= 64)),
     "refused (neither a few rows over a wide B nor a tall A over a few columns)"),
]


def mul_by_name(d, tol, idx, kern, t, shape, a, b, c0, alpha, beta, ref):
    """One kernel in one signature through `mul --kernel NAME --verify`, in
    a folder of its own; returns the checks as (name, cond, detail)."""
    m, n, k = shape
    sub = os.path.join(d, f"mul{idx}")
    os.mkdir(sub)
    p = lambda name: os.path.join(sub, name)
    out = []
    np.save(p("c0.npy"), c0)
    if t == "bf16":
        to_bf16_bits(a).tofile(p("a.bin"))
        to_bf16_bits(b).tofile(p("b.bin"))
        ins = [p("a.bin"), p("b.bin"), "--in-dtype", "bf16", "--dtype", "bf16", "--shape",
               f"{m}x{k}", "--shape", f"{k}x{n}", "-o", p("c.bin")]
    else:
        np.save(p("a.npy"), a)
        np.save(p("b.npy"), b)
        ins = [p("a.npy"), p("b.npy"), "-o", p("c.npy")]
    mode = ["--compute", t] if t in ("tf32", "tf32x3", "ozaki", "ozaki32") else []
    r = run("mul", *ins, "-c", p("c0.npy"), "--alpha", alpha, "--beta", beta,
            "--kernel", kern, "--verify", "--json", "--repeat", "2", *mode)
    label = f"mul {kern} {t} {m}x{n}x{k}"
    if r.returncode == 2:
        for words, deserved, what in REFUSALS:
            if words in r.stderr:
                return [(f"{label} {what}", bool(deserved(m, n, k)), r.stderr.decode()[-200:])]
    out.append((label, r.returncode == 0, r.stderr.decode()[-300:]))
    if r.returncode != 0:
        return out
    if t == "bf16":
        raw = np.fromfile(p("c.bin"), np.uint16)
        out.append((label + " size", raw.size == m * n, raw.size))
        if raw.size != m * n:
            return out
        c = from_bf16_bits(raw).reshape(m, n)
    else:
        c = np.load(p("c.npy"))
        out.append((label + " dtype", c.dtype == a.dtype, c.dtype))
    if t in ("i64", "i8", "i16", "i32"):
        out.append((label + " exact", np.array_equal(c, ref.astype(a.dtype)), ""))
    else:
        err = np.linalg.norm(c - ref) / np.linalg.norm(ref)
        out.append((label + " vs numpy", err < tol[t], err))
    rep = json.loads(r.stdout)
    out.append((label + " json", rep["verify"]["ok"] and rep["ms"]["kernel"] >= 0, ""))
    if kern == "auto" and t in ("tf32", "tf32x3"):
        out.append((label + " runs " + t, rep["kernel"] == t, rep["kernel"]))
    return out


def transpose_by_name(d, idx, kern, sizes, x, name):
    """One transpose kernel on one matrix, in a folder of its own; a kernel
    may refuse only the element sizes its row leaves out."""
    sub = os.path.join(d, f"tra{idx}")
    os.mkdir(sub)
    src, dst = os.path.join(sub, "x.npy"), os.path.join(sub, "y.npy")
    np.save(src, x)
    r = run("transpose", src, dst, "--kernel", kern, "--verify")
    if kern != "auto":
        takes = sizes[kern]
        if isinstance(takes, list):
            refused = not (x.dtype.kind == "f" and f"f{x.dtype.itemsize * 8}" in takes)
        else:
            refused = x.dtype.itemsize not in takes
        if refused:
            return [(f"transpose {kern} {name} refused", r.returncode == 2 and
                     (b"cannot move" in r.stderr or b"takes f32 and f64 only" in r.stderr),
                     r.stderr.decode()[-300:])]
    out = [(f"transpose {kern} {name}", r.returncode == 0, r.stderr.decode()[-300:])]
    if r.returncode == 0:
        y = np.load(dst)
        out.append((f"transpose {kern} {name} values",
                    y.dtype == x.dtype and np.array_equal(y, x.T), ""))
    return out


def main():
    kernels = json.loads(run("kernels", "--json").stdout)
    probe = run("kernels", "--details")
    if b"no CUDA device" in probe.stderr:
        print("skipped: no CUDA device on this machine")
        return 0
    mul = [(k["name"], k["types"].split(",")) for k in kernels if k["operation"] == "mul"
           and k["runs_on"] == "gpu"]
    tra = [k["name"] for k in kernels if k["operation"] == "transpose"]
    # The data each kernel signature computes in its own precision.
    # bfloat16 (no NumPy dtype): float32 data rounded to it, read raw.
    # tf32, tf32x3, ozaki32 (float32 data) and ozaki (float64), asked for
    # with --compute.
    data = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "f64": np.float64,
            "i64": np.int32, "tf32": np.float32, "tf32x3": np.float32, "i8": np.int8,
            "i16": np.int16, "i32": np.int32, "ozaki": np.float64, "ozaki32": np.float32}
    tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2, "f64": 1e-13, "i64": 0, "tf32": 2e-3,
           "tf32x3": 1e-5, "i8": 0, "i16": 0, "i32": 0, "ozaki": 1e-13, "ozaki32": 1e-5}
    with tempfile.TemporaryDirectory() as d:
        p = lambda n: os.path.join(d, n)
        # Rows of 16 bytes in the last shape (K, N multiples of 8): the
        # Hopper stages that need them refuse the others, saying so.  The
        # operands are drawn here, in order; the runs go side by side.
        jobs = []
        for m, n, k in [(1, 1, 1), (33, 65, 17), (300, 200, 130), (130, 136, 72)]:
            for kern, types in mul + [("auto", ["f32", "f16", "bf16", "f64", "i64", "tf32x3",
                                                 "i8", "i16", "i32"])]:
                for t in types:
                    jobs.append((len(jobs), kern, t, (m, n, k)) + mul_operands(t, data[t], m, n, k))
        with ThreadPoolExecutor(WORKERS) as pool:
            for results in pool.map(lambda j: mul_by_name(d, tol, *j), jobs):
                for r in results:
                    check(*r)
        # NumPy's semantics on the device: dtypes, vectors, broadcast stacks.
        cases = [("f64 @ f32", rng.standard_normal((70, 45)),
                  rng.standard_normal((45, 33)).astype(np.float32)),
                 ("Fortran f32", np.asfortranarray(rng.standard_normal((70, 45)).astype(np.float32)),
                  rng.standard_normal((45, 33)).astype(np.float32)),
                 ("f16 @ int8", rng.standard_normal((40, 30)).astype(np.float16),
                  rng.integers(-9, 9, (30, 20)).astype(np.int8)),
                 ("int64 wrapping", rng.integers(-2**62, 2**62, (20, 30)),
                  rng.integers(-2**62, 2**62, (30, 10))),
                 ("uint8 @ int8", rng.integers(0, 255, (33, 17)).astype(np.uint8),
                  rng.integers(-128, 127, (17, 9)).astype(np.int8)),
                 ("int16 @ int16, whole range", rng.integers(-2**15, 2**15, (130, 300)).astype(np.int16),
                  rng.integers(-2**15, 2**15, (300, 140)).astype(np.int16)),
                 ("int32 @ int32, whole range", rng.integers(-2**31, 2**31, (130, 300)).astype(np.int32),
                  rng.integers(-2**31, 2**31, (300, 140)).astype(np.int32)),
                 ("uint16 @ uint16", rng.integers(0, 2**16, (70, 260)).astype(np.uint16),
                  rng.integers(0, 2**16, (260, 90)).astype(np.uint16)),
                 ("int8 @ int16 stacks", rng.integers(-128, 128, (3, 64, 200)).astype(np.int8),
                  rng.integers(-2**15, 2**15, (200, 72)).astype(np.int16)),
                 ("uint8 @ uint8", rng.integers(0, 256, (96, 500)).astype(np.uint8),
                  rng.integers(0, 256, (500, 80)).astype(np.uint8)),
                 ("bool @ bool", rng.integers(0, 2, (9, 8)).astype(bool),
                  rng.integers(0, 2, (8, 7)).astype(bool)),
                 ("matrix @ vector", rng.standard_normal((50, 40)).astype(np.float32),
                  rng.standard_normal(40).astype(np.float32)),
                 ("vector @ matrix", rng.standard_normal(300).astype(np.float32),
                  rng.standard_normal((300, 1000)).astype(np.float32)),
                 ("broadcast stacks", rng.standard_normal((2, 1, 30, 20)).astype(np.float32),
                  rng.standard_normal((3, 20, 10)).astype(np.float32)),
                 ("stack of 1000 8x8", rng.standard_normal((1000, 8, 8)),
                  rng.standard_normal((1000, 8, 8)))]
        for label, x, y in cases:
            np.save(p("x.npy"), x)
            np.save(p("y.npy"), y)
            with np.errstate(all="ignore"):
                want = np.matmul(x, y)
            r = run("mul", p("x.npy"), p("y.npy"), "-o", p("z.npy"), "--verify")
            check(f"mul {label}", r.returncode == 0, r.stderr.decode()[-300:])
            if r.returncode == 0:
                got = np.load(p("z.npy"))
                check(f"mul {label} shape and dtype", got.shape == want.shape and
                      got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype))
                if want.dtype.kind in "biu":
                    check(f"mul {label} exact", np.array_equal(got, want))
                else:
                    w = want.astype(np.float64)
                    err = np.linalg.norm(got.astype(np.float64) - w) / np.linalg.norm(w)
                    bound = 2e-3 if want.dtype == np.float16 else 1e-5
                    check(f"mul {label} vs numpy", err < bound, err)
        # auto keeps float16 and bfloat16 products of whole 16-byte rows off
        # the CUDA-core tiles where the device has a tensor-core kernel: on
        # the tensor cores, or on a memory-bound stage where the shape is one
        # (77 x 5: a thin side).  Where rows are not 16-byte units (513 x
        # 771), this GPU's measured rates decide (its tensor-core paths run
        # several times slower there): the run takes what `kernels --for`
        # plans, in the signature it names.
        avail = json.loads(run("kernels", "--json", "--details").stdout)
        tensor = {k["name"] for k in avail if k["operation"] == "mul" and k.get("available")
                  and "f16" in k["types"].split(",")
                  and k["name"] not in ("f16_simt", "f16_gemv")}
        memory_bound = {"gemv", "small", "thin", "small_k", "f16_gemv", "f16_small"}
        if tensor:
            for m, n, k in [(513, 771, 1000), (1024, 1024, 1024), (77, 5, 3001)]:
                x = rng.standard_normal((m, k)).astype(np.float16)
                y = rng.standard_normal((k, n)).astype(np.float16)
                np.save(p("x.npy"), x)
                np.save(p("y.npy"), y)
                r = run("mul", p("x.npy"), p("y.npy"), "-o", p("z.npy"), "--verify", "--json")
                label = f"auto f16 {m}x{n}x{k}"
                check(label, r.returncode == 0, r.stderr.decode()[-300:])
                if r.returncode != 0:
                    continue
                rep = json.loads(r.stdout)
                if (n * 2) % 16 == 0 and (k * 2) % 16 == 0:
                    check(label + " on the tensor cores or a memory-bound stage",
                          rep["kernel"] in tensor | memory_bound, rep["kernel"])
                plan = json.loads(run("kernels", "--for", f"{m}x{n}x{k}", "--dtype", "f16",
                                      "--json").stdout or b"{}")
                check(label + " as kernels --for plans it", rep["kernel"] == plan.get("auto"),
                      f"{rep['kernel']} against {plan.get('auto')}")
        # Every dtype, ragged (301 x 77) and with rows and columns multiples
        # of 16 (the vector stage's 16-byte paths, partial tiles too); a
        # kernel may refuse only the element sizes its row leaves out.
        # "1,2,4,8-byte": the element sizes a kernel moves; "f32,f64": the
        # dtypes whose values it moves (geam computes 1*x).
        sizes = {k["name"]: k["types"].split(",") if not k["types"].endswith("-byte") else
                 {int(v) for v in k["types"][:-5].split(",")}
                 for k in kernels if k["operation"] == "transpose"}
        jobs = []
        for dtype in (np.float32, np.float64, np.float16, np.int16, np.int8, np.uint8, np.bool_):
            for shape in ((301, 77), (400, 272)):
                if dtype == np.bool_:
                    x = rng.integers(0, 2, shape).astype(bool)
                else:
                    x = (rng.standard_normal(shape) * 30).astype(dtype)
                name = f"{np.dtype(dtype).name} {shape[0]}x{shape[1]}"
                for kern in tra + ["auto"]:
                    jobs.append((len(jobs), kern, sizes, x, name))
        with ThreadPoolExecutor(WORKERS) as pool:
            for results in pool.map(lambda j: transpose_by_name(d, *j), jobs):
                for r in results:
                    check(*r)
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
        for dtype in (np.float64, np.int16, np.int8):
            x = (rng.standard_normal((2100, 1300)) * 30).astype(dtype)
            np.save(p("x.npy"), x)
            r = run("transpose", p("x.npy"), p("y.npy"))
            check(f"streamed transpose {np.dtype(dtype).name}", r.returncode == 0
                  and np.array_equal(np.load(p("y.npy")), x.T), r.stderr.decode()[-300:])
        uploads_while_read(p)
        verify_like_with_like(p)
        r = run("mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), "--kernel", "cublas",
                "--device", "99")
        check("bad device ordinal -> 5", r.returncode == 5, r.returncode)
    print(f"cli-gpu: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
