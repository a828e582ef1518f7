#!/usr/bin/env python3
"""Every JSON document gemmcli prints without a GPU, parsed strictly: the
--json summary of mul and transpose (--kernel cpu, with and without
--verify), info --json (.npz archives and members too) and kernels --json, kernels --for --json, over edge
shapes (a zero dimension, 1x1, empty, a scalar, stacks).  Each must parse
with Python's json module refusing NaN and Infinity, hold no number that
is not finite, no "" (an absent value is null), and every shape as a list
of integers.  (bench's and the sweep's .json files need a GPU; they are
written through the same src/job/json.c.)

usage: json_test.py [path/to/gemmcli]     (prints 'json: N passed, M failed')
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

from checks import Checks

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
rng = np.random.default_rng(5)
check = Checks()


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def problems(value, path="$"):
    """What is wrong with a parsed document, as a list of strings."""
    found = []
    if isinstance(value, dict):
        for key, v in value.items():
            where = f"{path}.{key}"
            if key == "shape" or key.startswith("shape_"):
                if not (isinstance(v, list) and all(isinstance(x, int) and
                                                    not isinstance(x, bool) for x in v)):
                    found.append(f"{where}: a shape that is not a list of integers: {v!r}")
            found += problems(v, where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += problems(v, f"{path}[{i}]")
    elif isinstance(value, float) and not math.isfinite(value):
        found.append(f"{path}: {value}")
    elif value == "":
        found.append(f"{path}: \"\" (an absent value is null)")
    return found


def strict(name, text, lines=False):
    """Parses text (one document, or with `lines` one per line), checks it,
    and returns the documents (None where one did not parse)."""
    docs = []
    for doc in (text.splitlines() if lines else [text]):
        try:
            value = json.loads(doc, parse_constant=refuse_constant)
        except ValueError as e:
            check(f"{name}: parses as JSON", False, f"{e}: {doc[:300]!r}")
            docs.append(None)
            continue
        bad = problems(value)
        check(f"{name}: finite numbers, list shapes, null for absent", not bad, bad[:5])
        docs.append(value)
    return docs


def run(*args, cwd=None):
    return subprocess.run([GEMMCLI, *map(str, args)], capture_output=True, cwd=cwd,
                          timeout=120)


def summaries(d):
    """mul and transpose --json over edge shapes."""
    at = lambda name: os.path.join(d, name)
    mul_cases = [((1, 1), (1, 1)), ((3, 0), (0, 4)), ((0, 5), (5, 3)), ((4, 5), (5, 0)),
                 ((0, 0), (0, 0)), ((6,), (6,)), ((2, 3, 4), (4, 5)), ((0,), (0,)),
                 ((1, 7), (7,)), ((2, 0, 3), (3, 2))]
    for dt in ("float32", "int64"):
        for sa, sb in mul_cases:
            np.save(at("a.npy"), rng.standard_normal(sa).astype(dt))
            np.save(at("b.npy"), rng.standard_normal(sb).astype(dt))
            for extra in ([], ["--verify"], ["--verify", "--repeat", "3"]):
                p = run("mul", "a.npy", "b.npy", "-o", "c.npy", "--kernel", "cpu", "--json",
                        *extra, cwd=d)
                name = f"mul {sa} @ {sb} {dt} {' '.join(extra)}"
                check(f"{name}: runs", p.returncode == 0, p.stderr.decode()[-300:])
                doc = strict(name, p.stdout.decode())[0]
                if doc:
                    want = list(np.matmul(np.zeros(sa), np.zeros(sb)).shape)
                    check(f"{name}: shape_out {want}", doc.get("shape_out") == want and
                          doc.get("shape_a") == list(sa) and doc.get("shape_b") == list(sb),
                          doc)
    np.save(at("c0.npy"), np.float64(1.5))
    np.save(at("a.npy"), rng.standard_normal((3, 4)))
    np.save(at("b.npy"), rng.standard_normal((4, 2)))
    p = run("mul", "a.npy", "b.npy", "-o", "c.npy", "-c", "c0.npy", "--beta", "2", "--kernel",
            "cpu", "--json", "--verify", cwd=d)
    strict("mul with a 0-d C0", p.stdout.decode())
    for shape in ((1, 1), (0, 5), (5, 0), (0, 0), (7,), (2, 3, 4), (2, 0, 3)):
        np.save(at("x.npy"), rng.standard_normal(shape).astype(np.float32))
        for extra in ([], ["--verify"]):
            p = run("transpose", "x.npy", "-o", "y.npy", "--kernel", "cpu", "--json", *extra,
                    cwd=d)
            name = f"transpose {shape} {' '.join(extra)}"
            check(f"{name}: runs", p.returncode == 0, p.stderr.decode()[-300:])
            doc = strict(name, p.stdout.decode())[0]
            if doc:
                check(f"{name}: shape_in", doc.get("shape_in") == list(shape), doc)
    # The summary goes to stderr when stdout carries the matrix.
    p = run("mul", "a.npy", "b.npy", "-o", "-", "--format", "npy", "--kernel", "cpu", "--json",
            cwd=d)
    strict("mul --json -o -: the summary on stderr", p.stderr.decode())


def info(d):
    at = lambda name: os.path.join(d, name)
    files = {"s.npy": np.float64(2.5), "one.npy": np.ones((1, 1), np.float32),
             "e.npy": np.zeros((0, 3)), "v.npy": np.arange(4, dtype=np.int16),
             "t.npy": np.zeros((2, 0, 3), np.uint8), "b.npy": np.ones((2, 3), ">f8")}
    for name, x in files.items():
        np.save(at(name), x)
    np.savetxt(at("m.csv"), np.ones((2, 3)), delimiter=",")
    np.ones(9, np.float32).tofile(at("r.bin"))
    p = run("info", "--json", *files, "m.csv", "r.bin", cwd=d)
    doc = strict("info --json", p.stdout.decode())[0]
    if doc:
        check("info --json: every file, its shape", [x["shape"] for x in doc] ==
              [list(np.shape(x)) for x in files.values()] + [[2, 3], [3, 3]], doc)
    np.savez(at("z.npz"), **{k.removesuffix(".npy"): v for k, v in files.items()})
    np.savez_compressed(at("zc.npz"), e=files["e.npy"])
    p = run("info", "--json", "z.npz", "zc.npz", "z.npz:s", "zc.npz:e.npy", cwd=d)
    doc = strict("info --json of .npz archives and members", p.stdout.decode())[0]
    if doc:
        check("info --json of .npz: the members' shapes, a member as its .npy",
              [m["shape"] for m in doc[0]["members"]] == [list(np.shape(x))
                                                          for x in files.values()] and
              doc[2]["shape"] == [] and doc[3]["shape"] == [0, 3] and
              doc[3]["compression"] == "deflate", doc)
    p = run("info", "--json", "s.npy", "nosuch.npy", "e.npy", cwd=d)
    doc = strict("info --json with a missing file", p.stdout.decode())[0]
    check("info --json with a missing file: the others listed, status 3",
          p.returncode == 3 and doc is not None and len(doc) == 2, p.stdout)


def kernels():
    p = run("kernels", "--json")
    strict("kernels --json", p.stdout.decode())
    p = run("kernels", "--json", "--details")
    strict("kernels --json --details", p.stdout.decode())
    for shape in ("0x5x5", "5x0x5", "5x5x0", "0x0x0", "1x1x1", "1x1x1x1", "0x4x4x4",
                  "3x0x5x5", "4096x4096x4096", "1x8192x8192", "100000x8x8x8"):
        for extra in ([], ["--dtype", "f64"], ["--compute", "tf32"], ["--dtype", "i32"]):
            p = run("kernels", "--for", shape, "--json", *extra)
            name = f"kernels --for {shape} {' '.join(extra)}"
            check(f"{name}: runs", p.returncode == 0, p.stderr.decode()[-300:])
            doc = strict(name, p.stdout.decode())[0]
            if doc:
                dims = [int(x) for x in shape.split("x")]
                want = dims if len(dims) == 4 else [1] + dims
                check(f"{name}: shape {want}", doc.get("shape") == want, doc.get("shape"))


def main():
    with tempfile.TemporaryDirectory(prefix="gemmcli-json.") as d:
        summaries(d)
        info(d)
        kernels()
    return check.summary("json")


if __name__ == "__main__":
    sys.exit(main())
