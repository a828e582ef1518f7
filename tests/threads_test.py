#!/usr/bin/env python3
"""Text on every core gives the same answers as on one.

Parses CSV and gzip CSV with --threads 1, 2 and 7, from files and from
pipes, and checks that the matrices are bit-identical (and equal NumPy's
loadtxt), that every malformed case fails with the same FILE:LINE:COLUMN
whatever the thread count (and at the line and column the fault is at),
that written CSV and gzip CSV are the same bytes whatever the thread count,
and that a damaged gzip member is reported the same way by the parallel
inflater as by the sequential one.  Needs no GPU.

usage: threads_test.py [path/to/gemmcli] [--big]
  (prints 'threads: N passed, M failed'; --big adds a text larger than one
  read window, about 20 MB)
"""
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
GEMMCLI = os.path.abspath(ARGS[0] if ARGS else "./gemmcli")
BIG = "--big" in sys.argv
THREADS = (1, 2, 7)
passed = failed = 0
rng = np.random.default_rng(11)


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def run(*args, stdin=None):
    return subprocess.run([GEMMCLI, *map(str, args)], input=stdin, capture_output=True,
                          timeout=300)


def read_npy(path, threads, pipe=False):
    """(bytes of the .npy gemmcli writes, stderr, exit status)."""
    if pipe:
        with open(path, "rb") as f:
            p = run("convert", "-q", "-", "-o", "-", "--format", "npy", "--threads", threads,
                    stdin=f.read())
    else:
        p = run("convert", "-q", path, "-o", "-", "--format", "npy", "--threads", threads)
    return p.stdout, p.stderr.decode(errors="replace"), p.returncode


def messy_text(rows, cols):
    """CSV with what a parser must step over: comments, blank lines, CRLF,
    blanks around fields, exponents, inf and nan; and its values, as the
    float64 that np.loadtxt reads."""
    a = rng.standard_normal((rows, cols)).astype(np.float32) * np.float32(1e3)
    a[rng.random((rows, cols)) < 0.01] = np.inf
    a[rng.random((rows, cols)) < 0.01] = -np.inf
    a = a.astype(np.float64)
    a[::3] = [[float(f"{x:.8e}") for x in row] for row in a[::3]]
    lines = ["# a comment before the data"]
    for i in range(rows):
        row = ",".join(repr(float(x)) if i % 3 else f" {x:.8e} " for x in a[i])
        if i % 17 == 0:
            lines.append("")
        if i % 29 == 0:
            lines.append("   # an indented comment")
        end = "\r" if i % 5 == 0 else ""
        lines.append(row + (" # after the data" if i % 11 == 0 else "") + end)
    return "\n".join(lines) + "\n", a


def test_same_matrices(d):
    text, a = messy_text(1500, 97)   # about 1.5 MB: several chunks each
    plain = os.path.join(d, "m.csv")
    with open(plain, "w") as f:
        f.write(text)
    one = os.path.join(d, "m1.csv.gz")          # one member, as gzip writes it
    with gzip.open(one, "wt", compresslevel=6) as f:
        f.write(text)
    many = os.path.join(d, "m2.csv.gz")         # gemmcli's: members that say their size
    p = run("convert", "-q", plain, "-o", many)
    check("write members", p.returncode == 0, p.stderr[-300:])
    want = None
    for path in (plain, one, many):
        for pipe in (False, True):
            for t in THREADS:
                got, err, rc = read_npy(path, t, pipe=pipe)
                name = f"{os.path.basename(path)} threads {t}{' pipe' if pipe else ''}"
                check(name + " reads", rc == 0, err[-300:])
                if want is None:
                    want = got
                check(name + " bit-identical", got == want, "differs from --threads 1")
    with open(os.path.join(d, "m.npy"), "wb") as f:
        f.write(want)
    got = np.load(os.path.join(d, "m.npy"))
    check("equals the values written, as float64", got.dtype == np.float64 and
          np.array_equal(got, a), "values differ")


def fault_cases(rows, cols):
    """(name, text, line, column, words) for faults at lines across the
    text, so that they fall into different threads' chunks."""
    base = [",".join(f"{(i * cols + j) % 1000 / 7:.6f}" for j in range(cols))
            for i in range(rows)]
    cases = []
    for at in (0, 1, rows // 3, rows // 2 + 1, rows - 2, rows - 1):
        for kind in ("word", "empty", "trailing", "more", "fewer", "quote"):
            lines = list(base)
            fields = lines[at].split(",")
            if kind == "word":
                col = 5
                fields[col] = "abc"
                words = "not a number: 'abc'"
            elif kind == "empty":
                col = 3
                fields[col] = ""
                words = "empty field"
            elif kind == "trailing":
                col = cols
                fields.append("")
                words = "trailing delimiter"
            elif kind == "more":
                col = cols
                fields.append("1.5")
                words = f"more than {cols} fields"
            elif kind == "fewer":
                fields = fields[:-2]
                col = None
                words = f"{cols - 2} fields where line 2 has {cols}"
            else:
                col = 7
                fields[col] = '"1.0"'
                words = "quoted fields are not supported"
            lines[at] = ",".join(fields)
            text = "# header comment\n" + "\n".join(lines) + "\n"
            line = at + 2
            if col is None:
                column = len(lines[at]) + 1
            else:
                column = len(",".join(fields[:col])) + (1 if col else 0) + 1
            if at == 0 and kind in ("more", "fewer"):
                continue    # the first row sets the count
            cases.append((f"{kind} at line {line}", text, line, column, words))
    return cases


def test_same_faults(d):
    rows, cols = 1200, 60
    for name, text, line, column, words in fault_cases(rows, cols):
        path = os.path.join(d, "bad.csv")
        with open(path, "w") as f:
            f.write(text)
        gz = os.path.join(d, "bad.csv.gz")
        with gzip.open(gz, "wt", compresslevel=1) as f:
            f.write(text)
        want = f"gemmcli: {path}:{line}:{column}: {words}"
        for t in THREADS:
            _, err, rc = read_npy(path, t)
            first = err.splitlines()[0] if err else ""
            check(f"{name} threads {t}", rc == 3 and first.startswith(want),
                  f"exit {rc}, got {first!r}, wanted {want!r}")
            _, err, rc = read_npy(path, t, pipe=True)
            first = err.splitlines()[0] if err else ""
            check(f"{name} threads {t} pipe",
                  rc == 3 and first.startswith(want.replace(path, "<stdin>")), first)
            _, err, rc = read_npy(gz, t)
            first = err.splitlines()[0] if err else ""
            check(f"{name} threads {t} gzip", rc == 3 and first.startswith(want.replace(path, gz)),
                  first)


def test_same_bytes_written(d):
    a = rng.standard_normal((700, 333)).astype(np.float32)
    np.save(os.path.join(d, "w.npy"), a)
    v = rng.standard_normal(200000)
    np.save(os.path.join(d, "v.npy"), v)
    for src in ("w.npy", "v.npy"):
        for ext in ("csv", "csv.gz"):
            outs = []
            for t in THREADS:
                out = os.path.join(d, f"w{t}.{ext}")
                p = run("convert", "-q", os.path.join(d, src), "-o", out, "--threads", t)
                check(f"{src} -> {ext} threads {t}", p.returncode == 0, p.stderr[-300:])
                with open(out, "rb") as f:
                    outs.append(f.read())
            check(f"{src} -> {ext} same bytes", all(o == outs[0] for o in outs),
                  "written bytes depend on the thread count")
            data = gzip.decompress(outs[0]) if ext == "csv.gz" else outs[0]
            back = np.loadtxt(data.decode().splitlines(), delimiter=",",
                              dtype=np.load(os.path.join(d, src)).dtype)
            check(f"{src} -> {ext} reads back", np.array_equal(back.reshape(-1),
                                                               np.load(os.path.join(d, src)).reshape(-1)),
                  "values differ")


def test_damaged_members(d):
    a = rng.standard_normal((3000, 200)).astype(np.float32)   # several members
    np.save(os.path.join(d, "g.npy"), a)
    good = os.path.join(d, "g.csv.gz")
    p = run("convert", "-q", os.path.join(d, "g.npy"), "-o", good)
    check("write g.csv.gz", p.returncode == 0, p.stderr[-300:])
    with open(good, "rb") as f:
        data = bytearray(f.read())
    check("several members", data.count(b"\x1f\x8b\x08\x04") >= 3, "one member only")
    starts = [i for i in range(len(data) - 3) if data[i:i + 4] == b"\x1f\x8b\x08\x04"
              and data[i + 12:i + 14] == b"MS"]
    mid = starts[len(starts) // 2]
    cases = {}
    flipped = bytearray(data)
    flipped[mid + 200] ^= 0x55                     # inside a middle member's data
    cases["flipped byte"] = flipped
    crc = bytearray(data)
    nxt = starts[len(starts) // 2 + 1]
    crc[nxt - 8] ^= 1                              # that member's CRC
    cases["bad CRC"] = crc
    cases["truncated"] = data[:mid + 500]
    size = bytearray(data)
    size[mid + 16] ^= 0x10                         # its size field: a hint, still valid gzip
    path = os.path.join(d, "hint.csv.gz")
    with open(path, "wb") as f:
        f.write(size)
    want = read_npy(good, 1)[0]
    for t in THREADS:
        got, err, rc = read_npy(path, t)
        check(f"wrong size field threads {t}: read in sequence", rc == 0 and got == want,
              err[-300:])
    for name, blob in cases.items():
        path = os.path.join(d, "damaged.csv.gz")
        with open(path, "wb") as f:
            f.write(blob)
        firsts = []
        for t in THREADS:
            _, err, rc = read_npy(path, t)
            firsts.append((rc, err.splitlines()[0] if err else ""))
        check(f"{name}: an error", firsts[0][0] == 3, str(firsts[0]))
        check(f"{name}: same with 1, 2, 7 threads", all(f == firsts[0] for f in firsts),
              str(firsts))


def test_big(d):
    """Text longer than one read window, with faults on either side of it."""
    rows, cols = 40000, 64
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    path = os.path.join(d, "big.csv")
    np.savetxt(path, a, fmt="%.9g", delimiter=",")
    outs = [read_npy(path, t) for t in THREADS]
    check("big: reads", all(o[2] == 0 for o in outs), outs[0][1][-300:])
    check("big: bit-identical", all(o[0] == outs[0][0] for o in outs), "differs")
    with open(path) as f:
        lines = f.read().splitlines()
    for at in (rows // 2 - 3, rows - 5):
        bad = list(lines)
        bad[at] = bad[at].replace(",", ",x", 1)
        with open(path, "w") as f:
            f.write("\n".join(bad) + "\n")
        want = f"{path}:{at + 1}:"
        for t in THREADS:
            _, err, rc = read_npy(path, t)
            check(f"big: fault at line {at + 1} threads {t}", rc == 3 and want in err, err[:200])


def main():
    with tempfile.TemporaryDirectory() as d:
        test_same_matrices(d)
        test_same_faults(d)
        test_same_bytes_written(d)
        test_damaged_members(d)
        if BIG:
            test_big(d)
    print(f"threads: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
