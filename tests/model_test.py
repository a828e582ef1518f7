#!/usr/bin/env python3
"""auto's model, without a GPU: `gemmcli kernels --for SHAPE --json` shows
every candidate's estimate and auto's choice.  Checks that every kernel
auto may pick has a geometry and a rate, that auto takes the smallest
estimate, that the memory-bound stages win their shapes, and that the
estimates behave as the model says (waves, slices, longer K never faster).
Usage: model_test.py ./gemmcli"""
import json
import random
import subprocess
import sys

GEMMCLI = sys.argv[1] if len(sys.argv) > 1 else "./gemmcli"
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAILED:", what)


def estimates(shape, *args):
    r = subprocess.run([GEMMCLI, "kernels", "--for", shape, "--json", *args],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"kernels --for {shape} {args}: status {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def by_kernel(est):
    return {(c["kernel"], c["sig"]): c for c in est["candidates"]}


# Every candidate has an estimate, and auto takes the smallest.
shapes = ["4096x4096x4096", "1x8192x8192", "8192x1x8192", "127x129x255", "64x64x1000000",
          "1000x3000x500", "16x1024x1024x1024", "100000x8x8x8", "4097x4097x4097",
          "777x5555x3333", "4096x4096x1"]
modes = [[], ["--dtype", "f16"], ["--dtype", "bf16"], ["--dtype", "f64"],
         ["--compute", "tf32"], ["--compute", "tf32x3"]]
for shape in shapes:
    for mode in modes:
        est = estimates(shape, *mode)
        cands = est["candidates"]
        check(len(cands) > 0, f"{shape} {mode}: no candidate")
        missing = [c["kernel"] for c in cands if c["ms"] is None]
        check(not missing, f"{shape} {mode}: no geometry or rate for {missing}")
        # (a vector times a matrix, or a matrix times a vector, goes to the
        # stages that stream the wide operand once, gemv's and thin's, the
        # smallest estimate among them: src/plan/select.c)
        dims = [int(d) for d in shape.split("x")][-3:]
        vector = dims[0] == 1 or dims[1] == 1
        pool = [c for c in cands if c["kernel"].endswith(("gemv", "thin"))] if vector else cands
        best = min(pool or cands, key=lambda c: float("inf") if c["ms"] is None else c["ms"])
        check(est["auto"] == best["kernel"] and est["auto_sig"] == best["sig"],
              f"{shape} {mode}: auto took {est['auto']} ({est['auto_sig']}), the smallest "
              f"estimate is {best['kernel']} ({best['sig']})")

# The memory-bound stages win their shapes.
for shape, want in [("1x8192x8192", "gemv"), ("8192x1x8192", "gemv"),
                    ("4096x4096x1", "small_k"), ("1952x12555x3", "small_k")]:
    est = estimates(shape)
    check(est["auto"] == want, f"{shape}: auto took {est['auto']}, not {want}")
# Large squares stay on the tile ladder.
est = estimates("8192x8192x8192")
check(est["auto"] not in ("gemv", "small_k"), f"8192^3: auto took {est['auto']}")

# Waves: 1536 x 2816 is 264 tiles of 128x128, one full wave of two blocks
# on 132 SMs; one more column adds a second, nearly empty wave.
one = by_kernel(estimates("1536x2816x4096"))[("thread_8x16", "f32")]["ms"]
two = by_kernel(estimates("1536x2817x4096"))[("thread_8x16", "f32")]["ms"]
check(two > 1.5 * one, f"waves: 264 tiles {one} ms, 276 tiles {two} ms")

# Slices: a long K over few tiles is cut; a full GPU is not.
check(by_kernel(estimates("256x256x65536"))[("splitk", "f32")]["slices"] > 1,
      "splitk: 256x256x65536 not sliced")
check(by_kernel(estimates("4096x4096x4096"))[("splitk", "f32")]["slices"] == 1,
      "splitk: 4096^3 sliced")

# A longer K is never estimated faster, for any kernel (unless it is cut
# into more slices: a kernel's own choice; so are stream-K's runs, as
# many more as K has k-steps while they are fewer than the slots, each of
# 8 k-steps and a share of the leftover ones: with few runs that share is
# up to half of 8 again, so a longer K may be up to 15% shorter).
STREAM_K = ("stream_k", "edge_peel")
rng = random.Random(7)
for _ in range(25):
    m, n, k = (int(2 ** rng.uniform(0, 14)) for _ in range(3))
    a = by_kernel(estimates(f"{m}x{n}x{k}"))
    b = by_kernel(estimates(f"{m}x{n}x{2 * k}"))
    for key, c in a.items():
        if key in b and b[key]["slices"] == c["slices"] and None not in (b[key]["ms"], c["ms"]):
            check(b[key]["ms"] >= c["ms"] * (0.85 if key[0] in STREAM_K else 0.999),
                  f"{key}: {m}x{n}x{2 * k} estimated {b[key]['ms']} ms, below "
                  f"{m}x{n}x{k}'s {c['ms']} ms")

print(f"model_test: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
