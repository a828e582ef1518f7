#!/usr/bin/env python3
"""mul as one job of several MPI ranks (src/scale/dist.c), with --kernel cpu, so
that it runs where there is no GPU: `mpirun -np 2` and `-np 3` (uneven
blocks, --oversubscribe) against NumPy and against gemmcli as one process
(bit for bit, with the CPU kernel), .npy (C and Fortran order, big-endian) and raw read by
offset, CSV and .npz members read by rank 0 and sent, text and stdout
gathered on rank 0,
vectors, integers, a verification merged over the blocks; and the
failures: a rank that sees a different or truncated file, a rank (or rank
0) that lacks a file, a rank that fails after reading or while writing, a
failed verification; usage errors said once, by rank 0; an exact integer
--alpha.  Each leaves
no output, no temporary file and an older output as it was.  K in panels
(--host-memory too small for a rank's parts): -np 2, 3 and 4 (a 2x2
grid) against NumPy for floats, integers that wrap, f16, Fortran order,
big-endian, raw, CSV, a vector and a ragged last panel, --verify, the
summary's panels line only then; a file cut short under a rank mid-job
(its owner's read fails, the broadcasts stop), a budget too small for a
panel.  Prints 'mpi: N passed, M failed', or 'skipped: ...' without
mpirun.

usage: mpi_test.py [path/to/gemmcli] [--gpu]
  --gpu   the same jobs without --kernel cpu: every rank on a GPU (ranks
          share the GPUs there are)
"""
import errno
import io
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np

from checks import Checks

args = [a for a in sys.argv[1:] if not a.startswith("--")]
GEMMCLI = os.path.abspath(args[0] if args else "./gemmcli")
KERNEL = [] if "--gpu" in sys.argv else ["--kernel", "cpu"]
rng = np.random.default_rng(11)
check = Checks()

# Open MPI refuses root without these; single-copy through ptrace is
# often barred in containers.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1")


def mpirun(np_, *a, cwd=None, stdout=subprocess.PIPE, env=ENV):
    return subprocess.run(["mpirun", "-np", str(np_), "--oversubscribe", GEMMCLI,
                           *map(str, a)], stdout=stdout, stderr=subprocess.PIPE, cwd=cwd,
                          env=env, timeout=300)


def mpmd_argv(parts):
    """mpirun with one program a rank: parts are (workdir, argv) pairs."""
    cmd = ["mpirun"]
    for i, (wdir, argv) in enumerate(parts):
        cmd += ([":"] if i else []) + ["-np", "1", "-wdir", wdir, *map(str, argv)]
    return cmd


def mpmd(*parts, cwd=None, env=ENV):
    return subprocess.run(mpmd_argv(parts), capture_output=True, cwd=cwd, env=env, timeout=300)


def mpmd_fed(parts, pipe, data, meanwhile):
    """mpmd() with one operand a named pipe, which rank 0 reads whole: once
    rank 0 is reading it, and every rank has looked at its own files (a
    second later), meanwhile() runs; then the pipe gets `data`."""
    cmd = mpmd_argv(parts)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    deadline = time.time() + 120
    fd = -1
    while fd < 0 and proc.poll() is None and time.time() < deadline:
        try:
            fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
            time.sleep(0.05)
    if fd >= 0:
        time.sleep(1)
        meanwhile()
        os.set_blocking(fd, True)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except BrokenPipeError:
            pass
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def one(*a):
    return subprocess.run([GEMMCLI, *map(str, a)], capture_output=True, timeout=300)


def err(r):
    return r.stderr.decode(errors="replace")[-600:]


def like_numpy(name, a, b, tol, got):
    """got is A @ B as NumPy makes it: its dtype and shape, and its values
    within tol of the FP64 product (0: exactly NumPy's, wrapping)."""
    want = np.matmul(a.astype(np.float64) if tol else a, b.astype(np.float64) if tol else b)
    ok = got.dtype == np.matmul(a, b).dtype and got.shape == want.shape
    check(f"{name}: NumPy's dtype and shape", ok, (got.dtype, got.shape))
    if not ok:
        return
    if tol:
        e = np.abs(got.astype(np.float64) - want).max() / max(1, np.abs(want).max())
        check(f"{name} against NumPy", e < tol, e)
    else:
        check(f"{name} exactly NumPy's", np.array_equal(got, want))


def leftovers(d, keep):
    """Files in d that are neither inputs nor expected: temporary files."""
    return sorted(set(os.listdir(d)) - set(keep))


def main():
    if shutil.which("mpirun") is None:
        print("skipped: no mpirun on this machine (tests/setup.sh test installs Open MPI)")
        return 0
    if not os.path.exists(os.path.join(os.path.dirname(GEMMCLI), "gemmcli-mpi.so")):
        print("FAIL: gemmcli-mpi.so was not built beside gemmcli (make mpi)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as d:
        p = lambda name: os.path.join(d, name)

        # Matrices of every kind, ranks 2 and 3: NumPy's answer, and gemmcli
        # as one process's bytes exactly.
        cases = [
            ("f32", rng.standard_normal((37, 29)).astype(np.float32),
             rng.standard_normal((29, 41)).astype(np.float32), 1e-5),
            ("f64 F-order B", rng.standard_normal((53, 17)),
             np.asfortranarray(rng.standard_normal((17, 30))), 1e-12),
            ("F-order A f32", np.asfortranarray(rng.standard_normal((40, 33)).astype(np.float32)),
             rng.standard_normal((33, 7)).astype(np.float32), 1e-5),
            ("big-endian", rng.standard_normal((19, 23)).astype(">f4"),
             rng.standard_normal((23, 31)).astype(np.float32), 1e-5),
            ("int32 @ int16", rng.integers(-1000, 1000, (31, 45), dtype=np.int32),
             rng.integers(-300, 300, (45, 26), dtype=np.int16), 0),
            ("f16", rng.standard_normal((24, 40)).astype(np.float16),
             rng.standard_normal((40, 35)).astype(np.float16), 4e-3),
            ("vector @ matrix", rng.standard_normal(29).astype(np.float32),
             rng.standard_normal((29, 41)).astype(np.float32), 1e-5),
            ("matrix @ vector", rng.standard_normal((43, 29)).astype(np.float32),
             rng.standard_normal(29).astype(np.float32), 1e-5),
            ("fewer rows than ranks", rng.standard_normal((2, 50)).astype(np.float32),
             rng.standard_normal((50, 1)).astype(np.float32), 1e-5),
        ]
        for name, a, b, tol in cases:
            np.save(p("a.npy"), a)
            np.save(p("b.npy"), b)
            r1 = one("mul", p("a.npy"), p("b.npy"), "-o", p("one.npy"), *KERNEL, "-q")
            for ranks in (2, 3):
                r = mpirun(ranks, "mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), *KERNEL, "-q")
                ok = r.returncode == 0 and os.path.exists(p("c.npy"))
                check(f"{name} -np {ranks}", ok, err(r))
                if not ok:
                    continue
                like_numpy(f"{name} -np {ranks}", a, b, tol, np.load(p("c.npy")))
                # The CPU kernel sums each element in one order whatever the
                # block; on a GPU auto may pick another kernel for a block.
                if KERNEL:
                    check(f"{name} -np {ranks}: the bytes of one process", r1.returncode == 0
                          and open(p("one.npy"), "rb").read() == open(p("c.npy"), "rb").read(),
                          err(r1))
                os.remove(p("c.npy"))

        # An integer --alpha beyond 2^53, exact on every rank, with and
        # without panels.
        ia = rng.integers(-2**40, 2**40, (40, 1000), dtype=np.int64)
        ib = rng.integers(-2**40, 2**40, (1000, 30), dtype=np.int64)
        np.save(p("ia.npy"), ia)
        np.save(p("ib.npy"), ib)
        with np.errstate(all="ignore"):
            want = 9007199254740993 * (ia @ ib)
        for ranks, budget in ((2, []), (3, ["--host-memory", "500K"])):
            r = mpirun(ranks, "mul", p("ia.npy"), p("ib.npy"), "-o", p("ic.npy"), *KERNEL,
                       "--alpha", 9007199254740993, "-q", *budget)
            check(f"int64 --alpha 2^53 + 1 -np {ranks} {' '.join(budget)}: exactly NumPy's",
                  r.returncode == 0 and np.array_equal(np.load(p("ic.npy")), want), err(r))
        # An integer product in FP64 arithmetic (--compute fp64), its block
        # summed panel by panel in doubles: within 2^53, NumPy's exactly.
        ja = rng.integers(-50, 50, (40, 1000)).astype(np.int32)
        jb = rng.integers(-50, 50, (1000, 30)).astype(np.int32)
        np.save(p("ja.npy"), ja)
        np.save(p("jb.npy"), jb)
        for ranks, budget in ((2, []), (3, ["--host-memory", "500K"])):
            r = mpirun(ranks, "mul", p("ja.npy"), p("jb.npy"), "-o", p("jc.npy"), *KERNEL,
                       "--compute", "fp64", "-q", *budget)
            got = np.load(p("jc.npy")) if r.returncode == 0 else None
            check(f"int32 --compute fp64 -np {ranks} {' '.join(budget)}: NumPy's, as int32",
                  got is not None and got.dtype == np.int32 and np.array_equal(got, ja @ jb),
                  err(r))

        # Raw in and out, read and written at offsets.
        a = rng.standard_normal((45, 38)).astype(np.float32)
        b = rng.standard_normal((38, 52)).astype(np.float32)
        a.tofile(p("a.bin"))
        b.tofile(p("b.bin"))
        for ranks in (2, 3):
            r = mpirun(ranks, "mul", p("a.bin"), p("b.bin"), "--shape", "45x38", "--shape",
                       "38x52", "-o", p("c.bin"), *KERNEL, "-q")
            ok = r.returncode == 0
            check(f"raw -np {ranks}", ok, err(r))
            if ok:
                got = np.fromfile(p("c.bin"), np.float32).reshape(45, 52)
                check(f"raw -np {ranks} against NumPy",
                      np.abs(got - a.astype(np.float64) @ b).max() < 1e-4)
        np.save(p("a.npy"), a)
        np.save(p("b.npy"), b)
        want = a.astype(np.float64) @ b

        # --verify over all blocks, one report (rank 0's) on stdout.
        r = mpirun(3, "mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), *KERNEL, "--verify",
                   "--json")
        rep = json.loads(r.stdout) if r.returncode == 0 else {}
        check("--verify --json: one report, the whole product", r.returncode == 0 and
              rep.get("m") == 45 and rep.get("n") == 52 and rep.get("k") == 38 and
              rep["verify"]["ok"] and "3 in a" in (rep.get("ranks") or ""), (err(r), rep))
        # A tolerance no FP32 product meets fails on every block: not written.
        r = mpirun(2, "mul", p("a.npy"), p("b.npy"), "-o", p("v.npy"), *KERNEL, "--verify",
                   "--tol", "1e-30")
        check("a failed verification -> 1, nothing written", r.returncode == 1 and
              b"verification failed" in r.stderr and not os.path.exists(p("v.npy")), err(r))

        # Text: CSV read by rank 0 and sent; CSV and csv.gz gathered on rank 0;
        # CSV on stdout.
        np.savetxt(p("a.csv"), a, delimiter=",")
        one("mul", p("a.csv"), p("b.npy"), "-o", p("one.csv"), *KERNEL, "-q")
        alone = open(p("one.csv"), "rb").read()

        def same_text(got):
            """One process's bytes (CPU kernel), or its values (GPU)."""
            if KERNEL:
                return got == alone
            x = np.loadtxt(got.decode().splitlines(), delimiter=",")
            return np.abs(x - np.loadtxt(alone.decode().splitlines(), delimiter=",")).max() < 1e-4

        for ranks in (2, 3):
            r = mpirun(ranks, "mul", p("a.csv"), p("b.npy"), "-o", p("c.csv"), *KERNEL, "-q")
            check(f"CSV in and out -np {ranks}", r.returncode == 0 and
                  same_text(open(p("c.csv"), "rb").read()), err(r))
            r = mpirun(ranks, "mul", p("a.csv"), p("b.npy"), "-o", "-", "--format", "csv",
                       *KERNEL, "-q")
            check(f"CSV on stdout -np {ranks}", r.returncode == 0 and same_text(r.stdout),
                  err(r))
        # .npz members: read whole by rank 0 and sent, as text is.
        np.savez_compressed(p("ab.npz"), a=a, b=b)
        one("mul", p("a.npy"), p("b.npy"), "-o", p("one.npy"), *KERNEL, "-q")
        for ranks in (2, 3):
            r = mpirun(ranks, "mul", p("ab.npz:a"), p("ab.npz:b.npy"), "-o", p("z.npy"),
                       *KERNEL, "-q")
            check(f".npz members -np {ranks}", r.returncode == 0 and
                  (open(p("z.npy"), "rb").read() == open(p("one.npy"), "rb").read() if KERNEL
                   else np.abs(np.load(p("z.npy")) - want).max() < 1e-4), err(r))
        r = mpirun(3, "mul", p("a.npy"), p("b.npy"), "-o", p("c.csv.gz"), *KERNEL, "-q")
        ok = r.returncode == 0
        check("csv.gz gathered", ok and np.abs(np.loadtxt(p("c.csv.gz"), delimiter=",") -
                                              want).max() < 1e-4, err(r))

        # Replacing a file keeps its mode; one MPI rank is a plain run.
        np.save(p("keep.npy"), np.zeros(3))
        os.chmod(p("keep.npy"), 0o640)
        r = mpirun(3, "mul", p("a.npy"), p("b.npy"), "-o", p("keep.npy"), *KERNEL, "-q")
        check("a replaced output keeps its mode", r.returncode == 0 and
              stat.S_IMODE(os.stat(p("keep.npy")).st_mode) == 0o640 and
              np.load(p("keep.npy")).shape == (45, 52), err(r))
        r = mpirun(1, "mul", p("a.npy"), p("b.npy"), "-o", p("c1.npy"), *KERNEL, "-q")
        check("-np 1 is one plain process", r.returncode == 0 and
              np.abs(np.load(p("c1.npy")) - want).max() < 1e-4, err(r))

        # Failures leave nothing behind and the old output as it was.
        old = b"an older output\n"
        files = set(os.listdir(d))

        def untouched(name, r, status=None):
            ok = r.returncode != 0 and (status is None or r.returncode == status)
            check(name, ok and open(p("out.npy"), "rb").read() == old and
                  leftovers(d, files) == [], (r.returncode, err(r), leftovers(d, files)))

        with open(p("out.npy"), "wb") as f:
            f.write(old)
        files.add("out.npy")
        for sub in ("r0", "r1"):
            os.makedirs(p(sub), exist_ok=True)
            shutil.copy(p("a.npy"), p(f"{sub}/a.npy"))
            shutil.copy(p("b.npy"), p(f"{sub}/b.npy"))
        files |= {"r0", "r1"}
        job = ["mul", "a.npy", "b.npy", "-o", p("out.npy"), *KERNEL]
        # Rank 1 sees another matrix under the same name.
        np.save(p("r1/a.npy"), rng.standard_normal((45, 39)).astype(np.float32))
        r = mpmd((p("r0"), [GEMMCLI, *job]), (p("r1"), [GEMMCLI, *job]))
        untouched("a rank that sees another file -> 3", r, 3)
        check("... and says which", b"rank 1 of 2" in r.stderr and b"a.npy" in r.stderr, err(r))
        # Rank 1 lacks the file, or has a directory in its place; rank 0
        # lacks it: said as that, naming the rank, its host and directory.
        host = socket.gethostname().encode()
        shutil.copy(p("a.npy"), p("r1/a.npy"))
        os.remove(p("r1/a.npy"))
        for name, r1_has, says in (("lacks", None, b"No such file or directory on this rank"),
                                   ("has a directory for", "dir",
                                    b"not a regular file on this rank")):
            if r1_has:
                os.mkdir(p("r1/a.npy"))
            r = mpmd((p("r0"), [GEMMCLI, *job]), (p("r1"), [GEMMCLI, *job]))
            untouched(f"a rank that {name} an input -> 3", r, 3)
            check(f"... says so: rank 1, its host and directory ({name})",
                  b"rank 1 of 2: a.npy: " + says in r.stderr and host in r.stderr and
                  p("r1").encode() in r.stderr and b"way of reading" not in r.stderr, err(r))
            if r1_has:
                os.rmdir(p("r1/a.npy"))
        r = mpmd((p("r1"), [GEMMCLI, *job]), (p("r0"), [GEMMCLI, *job]))
        untouched("rank 0 lacks an input -> 3", r, 3)
        check("... says so: rank 0, its host and directory", b"rank 0 of 2: a.npy: No such file "
              b"or directory on this rank" in r.stderr and host in r.stderr and
              p("r1").encode() in r.stderr, err(r))
        shutil.copy(p("a.npy"), p("r1/a.npy"))
        # Rank 1's copy is truncated.
        with open(p("a.npy"), "rb") as f:
            head = f.read(300)
        with open(p("r1/a.npy"), "wb") as f:
            f.write(head)
        r = mpmd((p("r0"), [GEMMCLI, *job]), (p("r1"), [GEMMCLI, *job]))
        untouched("a rank with a truncated file -> 3", r, 3)
        shutil.copy(p("a.npy"), p("r1/a.npy"))
        # Rank 1 fails after reading: a GPU that is not there.
        r = mpmd((p("r0"), [GEMMCLI, *job]),
                 (p("r1"), [GEMMCLI, "mul", "a.npy", "b.npy", "-o", p("out.npy"), "--device",
                            "99"]))
        untouched("a rank that fails after reading -> 5", r, 5)
        # Rank 1 cannot write its block: past its file-size limit (MPI over
        # TCP: its shared-memory segments would pass the limit first).
        big_a = rng.standard_normal((300, 64)).astype(np.float32)
        big_b = rng.standard_normal((64, 300)).astype(np.float32)
        for sub in ("r0", "r1"):
            np.save(p(f"{sub}/a.npy"), big_a)
            np.save(p(f"{sub}/b.npy"), big_b)
        r = mpmd((p("r0"), [GEMMCLI, *job]),
                 (p("r1"), ["sh", "-c", 'ulimit -f 8 && exec "$0" "$@"', GEMMCLI, *job]),
                 env=dict(ENV, OMPI_MCA_btl="self,tcp"))
        untouched("a rank that cannot write its block -> 4", r, 4)
        # A rank that never starts (its options are wrong).
        r = mpmd((p("r0"), [GEMMCLI, *job]), (p("r1"), [GEMMCLI, *job, "--kernel", "nosuch"]))
        untouched("a rank that stops before joining", r)

        # K in panels (src/scale/summa.c): a --host-memory too small for a rank's
        # parts whole.  K = 1000 in 500 KiB: 4 panels of 256, the last 232,
        # at 2, 3 and 4 ranks (4: a 2x2 grid, where both the row and the
        # column broadcasts matter); a vector's K = 2000 in 300 KiB: 8, 4
        # and 3 panels.
        os.makedirs(p("panels"))
        files.add("panels")
        q = lambda name: os.path.join(p("panels"), name)
        f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
        tight = ["--host-memory", "500K"]
        panel_cases = [
            ("f32", f32(40, 1000), f32(1000, 30), 1e-5, tight),
            ("f64", rng.standard_normal((40, 1000)), rng.standard_normal((1000, 30)), 1e-12,
             tight),
            ("int32, wrapping", rng.integers(-2**20, 2**20, (40, 1000), dtype=np.int32),
             rng.integers(-2**20, 2**20, (1000, 30), dtype=np.int32), 0, tight),
            ("int64, wrapping", rng.integers(-2**40, 2**40, (40, 1000), dtype=np.int64),
             rng.integers(-2**40, 2**40, (1000, 30), dtype=np.int64), 0, tight),
            ("f16", f32(40, 1000).astype(np.float16), f32(1000, 30).astype(np.float16), 4e-3,
             tight),
            ("F-order A, big-endian B", np.asfortranarray(f32(40, 1000)),
             f32(1000, 30).astype(">f4"), 1e-5, tight),
            ("matrix @ vector", f32(40, 2000), f32(2000), 1e-5, ["--host-memory", "300K"]),
        ]

        for name, a, b, tol, budget in panel_cases:
            np.save(q("a.npy"), a)
            np.save(q("b.npy"), b)
            for ranks in (2, 3, 4):
                r = mpirun(ranks, "mul", q("a.npy"), q("b.npy"), "-o", q("c.npy"), *KERNEL,
                           *budget, "--json")
                what = f"panels: {name} -np {ranks}"
                rep = json.loads(r.stdout) if r.returncode == 0 else {}
                # Several panels of a multiple of 256, the last one shorter.
                m = re.match(r"(\d+) of (\d+) along K, each read once and broadcast",
                             rep.get("panels") or "")
                k = a.shape[-1]
                check(what, r.returncode == 0 and m and int(m[1]) > 1 and int(m[2]) % 256 == 0
                      and int(m[1]) == -(-k // int(m[2])) and k % int(m[2]), (err(r), rep))
                if r.returncode == 0:
                    like_numpy(what, a, b, tol, np.load(q("c.npy")))
                    os.remove(q("c.npy"))

        # Raw in and out; CSV parsed by rank 0 and sent panel by panel.
        a, b = f32(40, 1000), f32(1000, 30)
        a.tofile(q("a.bin"))
        b.tofile(q("b.bin"))
        np.savetxt(q("a.csv"), a, delimiter=",")
        np.save(q("b.npy"), b)
        for ranks in (2, 3, 4):
            r = mpirun(ranks, "mul", q("a.bin"), q("b.bin"), "--shape", "40x1000", "--shape",
                       "1000x30", "-o", q("c.bin"), *KERNEL, *tight, "-q")
            check(f"panels: raw -np {ranks}", r.returncode == 0, err(r))
            if r.returncode == 0:
                like_numpy(f"panels: raw -np {ranks}", a, b, 1e-5,
                           np.fromfile(q("c.bin"), np.float32).reshape(40, 30))
            r = mpirun(ranks, "mul", q("a.csv"), q("b.npy"), "-o", q("c.npy"), *KERNEL, *tight,
                       "--json")
            rep = json.loads(r.stdout) if r.returncode == 0 else {}
            check(f"panels: CSV -np {ranks}, A's sent by rank 0", r.returncode == 0 and
                  "A's sent by rank 0, B's read once" in (rep.get("panels") or ""), (err(r), rep))
            if r.returncode == 0:
                # Text reads as float64, as np.loadtxt reads it.
                like_numpy(f"panels: CSV -np {ranks}", np.loadtxt(q("a.csv"), delimiter=","), b,
                           1e-5, np.load(q("c.npy")))

        # --verify: a reference summed panel by panel (more memory: 1 MiB).
        ia = rng.integers(-2**40, 2**40, (40, 1000), dtype=np.int64)
        ib = rng.integers(-2**40, 2**40, (1000, 30), dtype=np.int64)
        np.save(q("ia.npy"), ia)
        np.save(q("ib.npy"), ib)
        for x, y in (("a.csv", "b.npy"), ("ia.npy", "ib.npy")):
            for ranks in (2, 3, 4):
                r = mpirun(ranks, "mul", q(x), q(y), "-o", q("c.npy"), *KERNEL, "--verify",
                           "--host-memory", "1M", "--json")
                rep = json.loads(r.stdout) if r.returncode == 0 else {}
                v = rep.get("verify", {})
                check(f"panels: --verify {x} @ {y} -np {ranks}", r.returncode == 0 and
                      v.get("ok") and "panel by panel" in v.get("reference", "") and
                      v.get("exact") == (x == "ia.npy") and rep.get("panels"), (err(r), rep))
        check("panels: --verify's int64 wraps as NumPy's",
              np.array_equal(np.load(q("c.npy")), ia @ ib))
        r = mpirun(2, "mul", q("a.csv"), q("b.npy"), "-o", q("v.npy"), *KERNEL, "--verify",
                   "--host-memory", "1M", "--tol", "1e-30")
        check("panels: a failed verification -> 1, nothing written", r.returncode == 1 and
              b"verification failed" in r.stderr and not os.path.exists(q("v.npy")), err(r))

        # The summary's panels line, only when panels were needed.
        r = mpirun(3, "mul", q("a.csv"), q("b.npy"), "-o", q("c.npy"), *KERNEL, *tight)
        check("panels: the summary says so", r.returncode == 0 and b"  panels: 4 of 256 along K"
              in r.stderr, err(r))
        r = mpirun(3, "mul", q("a.csv"), q("b.npy"), "-o", q("c.npy"), *KERNEL)
        check("panels: none where the parts fit", r.returncode == 0 and b"ranks:" in r.stderr
              and b"panels" not in r.stderr, err(r))
        r = mpirun(3, "mul", q("a.csv"), q("b.npy"), "-o", q("c.npy"), *KERNEL, "--json")
        check("panels: none in --json either", r.returncode == 0 and
              json.loads(r.stdout).get("panels") is None, err(r))

        # A budget too small for panels of 256: said, nothing written.
        r = mpirun(2, "mul", q("a.csv"), q("b.npy"), "-o", p("out.npy"), *KERNEL,
                   "--host-memory", "100K")
        untouched("panels: too little host memory -> 3", r, 3)
        check("... and says how little", b"--host-memory 100 KiB is too little" in r.stderr and
              r.stderr.count(b"too little") == 1, err(r))
        r = one("mul", q("a.npy"), q("b.npy"), "-o", q("x.npy"), *KERNEL, *tight)
        check("--host-memory as one process -> 2", r.returncode == 2 and b"MPI launcher" in
              r.stderr and not os.path.exists(q("x.npy")), err(r))

        # A rank's copy of an input cut short after every rank looked at
        # it: the owner whose panel is gone fails mid-job, names itself,
        # and the broadcasts it owes stop the others.  A or B comes through
        # a pipe that rank 0 reads whole, so that the cut falls between
        # the look and the reads.
        os.mkfifo(q("pipe"))
        for sub in ("p0", "p1", "p2", "p3"):
            os.makedirs(q(sub))
            np.save(q(f"{sub}/a.npy"), a)
            np.save(q(f"{sub}/b.npy"), b)

        def csv_bytes(x):
            text = io.StringIO()
            np.savetxt(text, x, delimiter=",")
            return text.getvalue().encode()

        def cut(path, share):
            def now():
                data = open(path, "rb").read()
                with open(path, "wb") as f:
                    f.write(data[:int(len(data) * share)])
            return now

        # 2 ranks, a 2x1 grid: rank 1 owns B's panels 2 and 4, and B ends
        # within panel 4.  4 ranks, a 2x2 grid: rank 3 owns A's panels 2
        # and 4 for grid row 1, and A ends within its rows of panel 2.
        cuts = [
            (2, q("pipe"), "b.npy", csv_bytes(a), "p1/b.npy", b, 0.6,
             b"rank 1 of 2: b.npy: reading panel 4 of 4"),
            (4, "a.npy", q("pipe"), csv_bytes(b), "p3/a.npy", a, 0.75,
             b"rank 3 of 4: a.npy: reading panel 2 of 4"),
        ]
        for ranks, x, y, fed, victim, was, share, says in cuts:
            job = ["mul", x, y, "-o", p("out.npy"), *KERNEL, *tight]
            r = mpmd_fed([(q(f"p{i}"), [GEMMCLI, *job]) for i in range(ranks)], q("pipe"), fed,
                         cut(q(victim), share))
            untouched(f"panels: a file cut short under a rank of {ranks} -> 3", r, 3)
            check(f"... its owner says which panel ({ranks} ranks)", says in r.stderr, err(r))
            np.save(q(victim), was)
        # A rank that cannot start its product: no panel moves.
        job = ["mul", "a.npy", "b.npy", "-o", p("out.npy"), *KERNEL, *tight]
        r = mpmd((q("p0"), [GEMMCLI, *job]), (q("p1"), [GEMMCLI, *job, "--kernel", "auto",
                                                         "--device", "99"]))
        untouched("panels: a rank whose GPU fails -> 5", r, 5)

        # What is not split is refused, by rank 0 alone, with status 2.
        np.save(p("s.npy"), rng.standard_normal((2, 4, 5)).astype(np.float32))
        np.save(p("m.npy"), rng.standard_normal((5, 3)).astype(np.float32))
        refusals = [
            ("a stack", ["mul", p("s.npy"), p("m.npy"), "-o", p("x.npy")], b"stack"),
            ("stdin", ["mul", "-", p("m.npy"), "-o", p("x.npy")], b"stdin"),
            ("C0", ["mul", p("a.npy"), p("b.npy"), "-o", p("x.npy"), "-c", p("c1.npy"),
                    "--beta", "1"], b"C0"),
            ("transpose", ["transpose", p("a.npy"), p("x.npy")], b"one process"),
        ]
        for name, argv, word in refusals:
            r = mpirun(2, *argv, *KERNEL)
            check(f"{name} under mpirun -> 2", r.returncode == 2 and word in r.stderr and
                  not os.path.exists(p("x.npy")), err(r))
            check(f"{name}: said once", r.stderr.count(b"gemmcli:") == 1, err(r))
        # Usage errors every rank finds alike: said once, by rank 0, status 2
        # on every rank; also when rank 0 starts last (the others wait for
        # it to speak instead of ending the job first).
        np.save(p("ia.npy"), rng.integers(-9, 9, (4, 4)))
        usage = [
            ("an unknown option", ["mul", "--nosuch", p("a.npy"), p("b.npy"), "-o", p("x.npy")]),
            ("an unknown command", ["nosuch"]),
            ("no command", []),
            ("a missing operand", ["mul", p("a.npy"), "-o", p("x.npy")]),
            ("no output", ["mul", p("a.npy"), p("b.npy")]),
            ("a bad option value", ["mul", p("a.npy"), p("b.npy"), "-o", p("x.npy"), "--repeat",
                                    "0"]),
            ("an unknown kernel", ["mul", p("a.npy"), p("b.npy"), "-o", p("x.npy"), "--kernel",
                                   "nosuch"]),
            ("info without files", ["info"]),
            ("transpose with a bad option", ["transpose", "--bogus", p("a.npy")]),
            ("an integer --alpha out of range", ["mul", p("ia.npy"), p("ia.npy"), "-o",
                                                 p("x.npy"), "--alpha", 2**63, *KERNEL]),
        ]
        for name, argv in usage:
            for ranks in (2, 3):
                r = mpirun(ranks, *argv)
                check(f"{name} -np {ranks}: status 2, said once", r.returncode == 2 and
                      r.stderr.count(b"gemmcli:") == 1 and not os.path.exists(p("x.npy")),
                      err(r))
        late = ["sh", "-c", 'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then sleep 1; fi; exec "$0" "$@"',
                GEMMCLI]
        for name, argv in [usage[1], usage[3], refusals[3][:2], refusals[1][:2]]:
            r = subprocess.run(["mpirun", "-np", "3", "--oversubscribe", *late, *map(str, argv)],
                               capture_output=True, env=ENV, timeout=300)
            check(f"{name}, rank 0 starting last: said once, status 2", r.returncode == 2 and
                  r.stderr.count(b"gemmcli:") == 1, err(r))
        env = dict(ENV, GEMMCLI_MPI_LIBRARY=p("nosuch/gemmcli-mpi.so"))
        r = mpirun(2, "mul", p("a.npy"), p("b.npy"), "-o", p("x.npy"), *KERNEL, env=env)
        check("no MPI library -> 2, saying so", r.returncode == 2 and
              b"cannot load MPI" in r.stderr and not os.path.exists(p("x.npy")), err(r))
    return check.summary("mpi")


if __name__ == "__main__":
    sys.exit(main())
