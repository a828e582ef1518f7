#!/usr/bin/env python3
"""mul as one job of several MPI ranks (src/dist.c), with --kernel cpu, so
that it runs where there is no GPU: `mpirun -np 2` and `-np 3` (uneven
blocks, --oversubscribe) against NumPy and against gemmcli as one process
(bit for bit, with the CPU kernel), .npy (C and Fortran order, big-endian) and raw read by
offset, CSV read by rank 0 and sent, text and stdout gathered on rank 0,
vectors, integers, a verification merged over the blocks; and the
failures: a rank that sees a different or truncated file, a rank that
fails after reading or while writing, a failed verification.  Each leaves
no output, no temporary file and an older output as it was.  Prints
'mpi: N passed, M failed', or 'skipped: ...' without mpirun.

usage: mpi_test.py [path/to/gemmcli] [--gpu]
  --gpu   the same jobs without --kernel cpu: every rank on a GPU (ranks
          share the GPUs there are)
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

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


def mpmd(*parts, cwd=None, env=ENV):
    """mpirun with one program a rank: parts are (workdir, argv) pairs."""
    cmd = ["mpirun"]
    for i, (wdir, argv) in enumerate(parts):
        cmd += ([":"] if i else []) + ["-np", "1", "-wdir", wdir, *map(str, argv)]
    return subprocess.run(cmd, capture_output=True, cwd=cwd, env=env, timeout=300)


def one(*a):
    return subprocess.run([GEMMCLI, *map(str, a)], capture_output=True, timeout=300)


def err(r):
    return r.stderr.decode(errors="replace")[-600:]


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
            want = np.matmul(a.astype(np.float64) if tol else a, b.astype(np.float64) if tol else b)
            r1 = one("mul", p("a.npy"), p("b.npy"), "-o", p("one.npy"), *KERNEL, "-q")
            for ranks in (2, 3):
                r = mpirun(ranks, "mul", p("a.npy"), p("b.npy"), "-o", p("c.npy"), *KERNEL, "-q")
                ok = r.returncode == 0 and os.path.exists(p("c.npy"))
                check(f"{name} -np {ranks}", ok, err(r))
                if not ok:
                    continue
                got = np.load(p("c.npy"))
                check(f"{name} -np {ranks}: NumPy's dtype and shape",
                      got.dtype == np.matmul(a, b).dtype and got.shape == want.shape,
                      (got.dtype, got.shape))
                if tol:
                    e = np.abs(got.astype(np.float64) - want).max() / max(1, np.abs(want).max())
                    check(f"{name} -np {ranks} against NumPy", e < tol, e)
                else:
                    check(f"{name} -np {ranks} exactly NumPy's", np.array_equal(got, want))
                # The CPU kernel sums each element in one order whatever the
                # block; on a GPU auto may pick another kernel for a block.
                if KERNEL:
                    check(f"{name} -np {ranks}: the bytes of one process", r1.returncode == 0
                          and open(p("one.npy"), "rb").read() == open(p("c.npy"), "rb").read(),
                          err(r1))
                os.remove(p("c.npy"))

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
              rep["verify"]["ok"] and "3 in a" in rep.get("ranks", ""), (err(r), rep))
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
        env = dict(ENV, GEMMCLI_MPI_LIBRARY=p("nosuch/gemmcli-mpi.so"))
        r = mpirun(2, "mul", p("a.npy"), p("b.npy"), "-o", p("x.npy"), *KERNEL, env=env)
        check("no MPI library -> 2, saying so", r.returncode == 2 and
              b"cannot load MPI" in r.stderr and not os.path.exists(p("x.npy")), err(r))
    return check.summary("mpi")


if __name__ == "__main__":
    sys.exit(main())
