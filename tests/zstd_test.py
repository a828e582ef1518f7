#!/usr/bin/env python3
"""zstd-compressed CSV and .npy (.csv.zst, .npy.zst), against the zstd
command-line tool as the independent compressor and decompressor and NumPy
as the oracle: what gemmcli writes decompresses to what NumPy reads as the
right matrix; what zstd writes (one frame or several, any level, from a
file or a pipe) gemmcli reads, multiplies, transposes and describes as
NumPy does; --level and --threads; damaged and hostile streams fail with
status 3, nothing on stdout and no output file; without libzstd a .zst
input fails with status 3 and an output with status 4.

    zstd_test.py [path/to/gemmcli]      (prints 'zstd: N passed, M failed')
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from checks import Checks

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
check = Checks()
rng = np.random.default_rng(23)
MAGIC = b"\x28\xb5\x2f\xfd"


def run(*args, stdin=None, cwd=None):
    return subprocess.run([GEMMCLI, *map(str, args)], input=stdin, capture_output=True,
                          cwd=cwd, timeout=300)


def err(p):
    return p.stderr.decode(errors="replace")


def zstd(*args, stdin=None):
    """The zstd tool's stdout; a failure fails the test run."""
    return subprocess.run(["zstd", "-q", *map(str, args)], input=stdin, capture_output=True,
                          check=True).stdout


def unzstd(path):
    return zstd("-d", "-c", path)


def load_npy_bytes(b, d):
    p = os.path.join(d, "check.npy")
    with open(p, "wb") as f:
        f.write(b)
    return np.load(p)


def load_csv_bytes(b):
    return np.loadtxt(b.decode().splitlines(), delimiter=",", ndmin=2)


def test_written(d):
    """gemmcli's .npy.zst and .csv.zst, decompressed by zstd, are the
    matrices NumPy computes: convert, transpose and mul, float and integer,
    C and Fortran order; each frame carries a checksum."""
    a = rng.standard_normal((37, 23))
    b = rng.standard_normal((23, 11)).astype(np.float32)
    i = rng.integers(-1000, 1000, (5, 9), dtype=np.int32)
    paths = {}
    for name, m in (("a", a), ("af", np.asfortranarray(a)), ("b", b), ("i", i)):
        paths[name] = os.path.join(d, name + ".npy")
        np.save(paths[name], m)
    cases = [
        ("convert f64", ("convert", paths["a"]), a),
        ("convert F order", ("convert", paths["af"]), a),
        ("convert i32", ("convert", paths["i"]), i),
        ("transpose", ("transpose", "--kernel", "cpu", paths["a"]), a.T),
        ("mul", ("mul", "--kernel", "cpu", paths["a"], os.path.join(d, "at.npy")), None),
    ]
    np.save(os.path.join(d, "at.npy"), a.T.copy())
    for label, args, want in cases:
        for ext in ("npy.zst", "csv.zst"):
            out = os.path.join(d, "out." + ext)
            p = run(*args, "-o", out, "-q")
            check(f"{label} -> .{ext}: status 0", p.returncode == 0, err(p))
            if p.returncode:
                continue
            with open(out, "rb") as f:
                head = f.read(5)
            check(f"{label} -> .{ext}: a zstd frame with a checksum",
                  head[:4] == MAGIC and head[4] & 0x04, head)
            raw = unzstd(out)
            got = load_npy_bytes(raw, d) if ext == "npy.zst" else load_csv_bytes(raw)
            if want is None:
                ok = got.shape == (37, 37) and np.allclose(got, a @ a.T, rtol=1e-12, atol=1e-12)
            elif ext == "npy.zst":
                ok = got.dtype == want.dtype and np.array_equal(got, want)
            else:
                ok = np.array_equal(got, want)
            check(f"{label} -> .{ext}: NumPy reads the right matrix", ok, (got.shape, label))
    # --format csv.zst to stdout: the compressed stream.
    p = run("convert", paths["b"], "-o", "-", "--format", "csv.zst", "-q")
    check("-o - --format csv.zst: a zstd stream on stdout",
          p.returncode == 0 and p.stdout[:4] == MAGIC, err(p))
    if p.returncode == 0:
        got = load_csv_bytes(zstd("-d", "-c", stdin=p.stdout))
        check("-o - --format csv.zst: float32 text reads back exactly",
              np.array_equal(got.astype(np.float32), b), got[:1])


def test_read(d):
    """What zstd writes, gemmcli reads: one frame or several (cat a.zst
    b.zst), any level, from a file or a pipe, by extension or by magic."""
    a = rng.standard_normal((40, 17))
    b = rng.standard_normal((17, 9))
    pa, pb = os.path.join(d, "a.npy"), os.path.join(d, "b.npy")
    np.save(pa, a)
    np.save(pb, b)
    ca = os.path.join(d, "a.csv")
    np.savetxt(ca, a, delimiter=",", fmt="%.17g")
    with open(ca, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    with open(pa, "rb") as f:
        npy = f.read()
    # Two frames each: the CSV's lines and the .npy's bytes cut in two.
    for name, parts in (("a.csv.zst", (b"".join(lines[:13]), b"".join(lines[13:]))),
                        ("a.npy.zst", (npy[:200], npy[200:]))):
        frames = [zstd("-c", "-19" if k else "-1", stdin=part) for k, part in enumerate(parts)]
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"".join(frames))
        with open(os.path.join(d, "one-" + name), "wb") as f:
            f.write(zstd("-c", stdin=b"".join(parts)))
    zstd("-c", pb, "-o", os.path.join(d, "b.npy.zst"))
    for name in ("a.csv.zst", "a.npy.zst", "one-a.csv.zst", "one-a.npy.zst"):
        path = os.path.join(d, name)
        out = os.path.join(d, "t.npy")
        p = run("transpose", "--kernel", "cpu", path, "-o", out, "-q")
        check(f"transpose {name}", p.returncode == 0 and
              np.array_equal(np.load(out), a.T), err(p))
        p = run("mul", "--kernel", "cpu", path, os.path.join(d, "b.npy.zst"), "-o", out, "-q")
        check(f"mul {name} b.npy.zst", p.returncode == 0 and
              np.allclose(np.load(out), a @ b, rtol=1e-12, atol=1e-12), err(p))
        p = run("info", path)
        fmt = "npy.zst v1.0" if "npy" in name else "csv.zst"
        check(f"info {name}", p.returncode == 0 and
              p.stdout.decode().startswith(f"{path}: {fmt}, f64, 40x17, C order, "
                                           f"{os.path.getsize(path)} bytes"), p.stdout + p.stderr)
        # Renamed to .zst alone, and through a pipe: the magic, then what it holds.
        plain = os.path.join(d, "x.zst")
        shutil.copy(path, plain)
        for how, args, stdin in (("x.zst", (plain,), None), ("stdin", ("-",), open(path, "rb").read())):
            p = run("transpose", "--kernel", "cpu", *args, "-o", out, stdin=stdin)
            want = "read as npy.zst" if "npy" in name else "read as csv.zst"
            check(f"{name} as {how}: detected", p.returncode == 0 and want in err(p) and
                  np.array_equal(np.load(out), a.T), err(p))
    # zstd -c x.csv | gemmcli transpose - -o out.npy
    p = subprocess.run(f"zstd -q -c '{ca}' | '{GEMMCLI}' transpose --kernel cpu - -o t2.npy -q",
                       shell=True, cwd=d, capture_output=True)
    check("zstd -c x.csv | transpose -", p.returncode == 0 and
          np.array_equal(np.load(os.path.join(d, "t2.npy")), a.T), p.stderr)
    # A .csv.zst on stdin, no --format: .csv.zst on stdout.
    p = run("transpose", "--kernel", "cpu", "-", "-o", "-", "-q",
            stdin=open(os.path.join(d, "a.csv.zst"), "rb").read())
    check("csv.zst stdin gives csv.zst stdout", p.returncode == 0 and p.stdout[:4] == MAGIC,
          err(p))
    if p.returncode == 0:
        check("csv.zst stdin gives csv.zst stdout: values",
              np.array_equal(load_csv_bytes(zstd("-d", "-c", stdin=p.stdout)), a.T))


def test_levels_and_threads(d):
    """--level: 1 to 19 for zstd (default 3); a higher level gives a
    smaller file of the same text; 0, 20 and -1 are usage errors (status 2)
    and write nothing.  The bytes written do not depend on --threads."""
    m = np.round(rng.standard_normal((700, 700)), 3)
    src = os.path.join(d, "m.npy")
    np.save(src, m)
    sizes, texts = {}, {}
    for level in ("1", "3", "19", None):
        out = os.path.join(d, f"l{level}.csv.zst")
        p = run("convert", src, "-o", out, "-q", *(("--level", level) if level else ()))
        check(f"--level {level}", p.returncode == 0, err(p))
        sizes[level], texts[level] = os.path.getsize(out), unzstd(out)
    check("--level 19 smaller than 1", sizes["19"] < sizes["1"], sizes)
    check("the default is level 3", sizes[None] == sizes["3"], sizes)
    check("every level, the same text", len(set(texts.values())) == 1)
    for bad in ("0", "20", "-1", "x"):
        out = os.path.join(d, "bad.csv.zst")
        p = run("convert", src, "-o", out, "--level", bad)
        check(f"--level {bad} for .csv.zst: status 2, nothing written",
              p.returncode == 2 and "--level" in err(p) and not os.path.exists(out), err(p))
    p = run("convert", src, "-o", os.path.join(d, "x.csv.gz"), "--level", "15")
    check("--level 15 for .csv.gz: status 2", p.returncode == 2 and "0 to 12" in err(p), err(p))
    big = os.path.join(d, "big.npy")
    np.save(big, rng.standard_normal((1100, 1000)))
    for ext in ("csv.zst", "npy.zst"):
        outs = []
        for t in ("1", "2", "7"):
            out = os.path.join(d, f"t{t}.{ext}")
            p = run("convert", big, "-o", out, "--threads", t, "-q")
            check(f"{ext} --threads {t}", p.returncode == 0, err(p))
            outs.append(open(out, "rb").read())
        check(f"{ext}: the same bytes with 1, 2 and 7 threads", outs[0] == outs[1] == outs[2])


def expect_refused(label, d, data, name, want, stdin=False):
    """Reading `data` (as file `name`, or from stdin) fails with status 3,
    a message naming it and saying `want`, nothing on stdout and no
    output file left behind."""
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    for out in ("out.npy", "-"):
        target = os.path.join(d, out) if out != "-" else "-"
        args = ("convert", "-", "--in-format", name.split(".", 1)[1], "-o", target) if stdin \
            else ("convert", path, "-o", target)
        if out == "-":
            args += ("--format", "npy")
        p = run(*args, stdin=data if stdin else None, cwd=d)
        named = "<stdin>" if stdin else name
        check(f"{label} (-o {out}): status 3, named, says why",
              p.returncode == 3 and named in err(p) and want in err(p), err(p))
        check(f"{label} (-o {out}): nothing on stdout", p.stdout == b"", p.stdout[:40])
        check(f"{label} (-o {out}): no output file", not os.path.exists(os.path.join(d, "out.npy"))
              and not [f for f in os.listdir(d) if f.startswith(".gemmcli")], os.listdir(d))


def test_hostile(d):
    """Truncated, corrupt, trailing garbage, empty, not zstd at all, a
    window beyond the decoder's limit, a bomb and a header that lies."""
    m = rng.standard_normal((60, 30))
    src = os.path.join(d, "m.npy")
    np.save(src, m)
    good = {}
    for ext in ("csv.zst", "npy.zst"):
        p = run("convert", src, "-o", os.path.join(d, "good." + ext), "-q")
        good[ext] = open(os.path.join(d, "good." + ext), "rb").read()
    for ext, data in good.items():
        for cut in (1, 3, 4, 9, len(data) // 2, len(data) - 1):
            expect_refused(f"{ext} cut to {cut} bytes", d, data[:cut], "cut." + ext,
                           "truncated zstd data")
        expect_refused(f"{ext} cut, from stdin", d, data[:len(data) // 2], "cut." + ext,
                       "truncated zstd data", stdin=True)
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 0x55
        expect_refused(f"{ext} corrupt in the middle", d, bytes(bad), "mid." + ext,
                       "bad zstd data")
        bad = bytearray(data)
        bad[-1] ^= 0x01
        expect_refused(f"{ext} bad checksum", d, bytes(bad), "sum." + ext, "checksum")
        expect_refused(f"{ext} garbage after the frame", d, data + b"garbage!", "junk." + ext,
                       "trailing garbage after the zstd data")
        expect_refused(f"{ext} empty", d, b"", "empty." + ext, "empty file, not zstd data")
        expect_refused(f"{ext} empty, from stdin", d, b"", "empty." + ext,
                       "empty input, not zstd data", stdin=True)
        expect_refused(f"{ext} plain text named .zst", d, b"1,2\n3,4\n", "plain." + ext,
                       "not zstd data")
    # A frame whose window is 2 GiB: refused before anything is allocated for it.
    with open(os.path.join(d, "m.npy"), "rb") as f:
        npy = f.read()
    wide = zstd("--long=31", "-c", stdin=npy)
    expect_refused("a 2 GiB window", d, wide, "wide.npy.zst", "bad zstd data")
    # A bomb: a 2x2 header, then 256 MiB of zeros in a frame of a few KiB.
    head = npy_header("<f8", "(2, 2)")
    bomb = zstd("-c", stdin=head + bytes(32) + bytes(256 << 20))
    expect_refused("a bomb after a small header", d, bomb, "bomb.npy.zst",
                   "trailing bytes after the data")
    # A header that claims more than the frames hold, or more than memory.
    expect_refused("a header claiming more", d, zstd("-c", stdin=head.replace(b"(2, 2)", b"(9, 2)") +
                   bytes(32)), "claims.npy.zst", "truncated: shape 9x2 of f64")
    huge = npy_header("<f8", "(100000000000, 100000)")
    expect_refused("a header claiming exabytes", d, zstd("-c", stdin=huge + bytes(64)),
                   "huge.npy.zst", "memory")
    # info reads a .npy.zst's header only: the lie shows when it is read.
    claims = os.path.join(d, "claims.npy.zst")
    with open(claims, "wb") as f:
        f.write(zstd("-c", stdin=head.replace(b"(2, 2)", b"(9, 2)")))
    p = run("info", claims)
    check("info of a .npy.zst reads its header only", p.returncode == 0 and b"9x2" in p.stdout,
          err(p))


def npy_header(descr, shape):
    h = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)).encode()
    h += b" " * (-(len(h) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h


def test_without_libzstd(d):
    """Without libzstd (an empty file mounted over it, in a mount namespace
    of this test's own): a .zst input fails with status 3, an output with
    status 4, each naming the file and the package; nothing is written."""
    found = subprocess.run(["sh", "-c", "ldconfig -p | sed -n 's/.*libzstd.so.1 .*=> //p'"],
                           capture_output=True, text=True).stdout.split()
    lib = os.path.realpath(found[0]) if found else None
    empty = os.path.join(d, "empty.so")
    open(empty, "wb").close()
    src = os.path.join(d, "m.npy")
    np.save(src, np.eye(3))
    zst = os.path.join(d, "m.npy.zst")
    run("convert", src, "-o", zst, "-q")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind '{empty}' '{lib}'"],
                           capture_output=True) if lib and os.geteuid() == 0 and \
        shutil.which("unshare") else None
    if not probe or probe.returncode:
        print("zstd: note: a machine without libzstd was not simulated here (it needs root "
              "and unshare -m)")
        return
    script = (f"mount --bind '{empty}' '{lib}' && "
              f"'{GEMMCLI}' convert '{zst}' -o '{d}/in.npy'; echo \"in $?\" >&2; "
              f"'{GEMMCLI}' convert '{src}' -o '{d}/out.csv.zst'; echo \"out $?\" >&2; "
              f"'{GEMMCLI}' convert '{src}' -o '{d}/plain.npy' -q; echo \"plain $?\" >&2")
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True)
    e = err(p)
    check("no libzstd: .npy.zst input, status 3", "\nin 3" in "\n" + e and
          "m.npy.zst: cannot read zstd data: libzstd.so.1 could not be loaded" in e, e)
    check("no libzstd: .csv.zst output, status 4, nothing written", "\nout 4" in e and
          "out.csv.zst: cannot write zstd data" in e and "libzstd1" in e and
          not os.path.exists(os.path.join(d, "out.csv.zst")), e)
    check("no libzstd: other formats unaffected", "\nplain 0" in e, e)


def main():
    if not shutil.which("zstd"):
        print("zstd: skipped: the zstd command is not installed (Debian package zstd; "
              "tests/setup.sh test installs it)")
        return 0
    for t in (test_written, test_read, test_levels_and_threads, test_hostile,
              test_without_libzstd):
        with tempfile.TemporaryDirectory(prefix="gemmcli-zstd.") as d:
            t(d)
    return check.summary("zstd")


if __name__ == "__main__":
    sys.exit(main())
