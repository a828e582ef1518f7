#!/usr/bin/env python3
"""Hostile-input and data-safety tests: what a tester of gzip, zstd or
NumPy's .npy reader would try.  Each case states the rule it checks; every
one of them failed on gemmcli before the rule held.

    hostile.py [path/to/gemmcli]        (prints 'hostile: N passed, M failed')
"""
import gzip
import io
import json
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

import numpy as np

import zipcraft as zc

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples")
A = os.path.join(SAMPLES, "a.npy")
B = os.path.join(SAMPLES, "b.npy")
passed = failed = 0
rng = np.random.default_rng(10)


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def run_peak(args, stdin=None, timeout=120):
    """Runs gemmcli with `args`: (the result, its own peak resident set in
    KiB), reaped with wait4 for its own usage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([GEMMCLI, *map(str, args)], stdin=stdin, stdout=out, stderr=err)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (subprocess.CompletedProcess(args, proc.returncode, out.read(), err.read()),
                usage.ru_maxrss)


def run(*args, cwd=None, stdin=None, stdout=subprocess.PIPE, env=None, timeout=60, pre=None):
    """Runs gemmcli; a run past `timeout` is killed and has returncode None."""
    try:
        return subprocess.run([GEMMCLI, *map(str, args)], input=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, cwd=cwd, env=env, timeout=timeout,
                              preexec_fn=pre)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, None, b"", f"timed out after {timeout} s".encode())


def err(p):
    return p.stderr.decode(errors="replace")


def leftovers(d):
    return [f for f in os.listdir(d) if f.startswith(".gemmcli")]


def npy_header_only(path, descr, shape):
    h = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)).encode()
    h += b" " * (-(len(h) + 11) % 64) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h)
    return 10 + len(h)


def test_huge_dimensions(d):
    # 1. A dimension NumPy refuses is refused; no loop runs per row of an empty matrix.
    z = os.path.join(d, "claim.npy")
    npy_header_only(z, "<f4", "(18446744073709551615, 0)")
    for out in ("z.csv", "z.npy"):
        t = time.time()
        p = run("convert", z, "-o", out, cwd=d, timeout=20)
        check(f"huge dimension -> {out}: exit 3", p.returncode == 3 and "NumPy's limit" in err(p),
              f"exit {p.returncode}: {err(p)}")
        check(f"huge dimension -> {out}: fast", time.time() - t < 5)
        check(f"huge dimension -> {out}: nothing left", not os.path.exists(os.path.join(d, out))
              and not leftovers(d), os.listdir(d))
    npy_header_only(z, "<f4", "(1000000000, 0)")
    t = time.time()
    p = run("convert", "-q", z, "-o", "e.csv", cwd=d)
    check("(10**9, 0) -> csv: fast and exit 0", p.returncode == 0 and time.time() - t < 2,
          f"{err(p)} {time.time() - t:.2f} s")
    p = run("convert", "-q", "e.csv", "-o", "e.npy", cwd=d)
    check("(10**9, 0) reads back", p.returncode == 0 and
          np.load(os.path.join(d, "e.npy")).shape == (10**9, 0), err(p))


def writing(proc, d):
    """True once `proc` has its output open in d: an unnamed file there (shown as
    'd/#N (deleted)') or a named temporary file."""
    real = os.path.realpath(d) + "/"
    try:
        for fd in os.listdir(f"/proc/{proc.pid}/fd"):
            target = os.readlink(f"/proc/{proc.pid}/fd/{fd}")
            if target.startswith(real + "#") or target.startswith(real + ".gemmcli"):
                return True
    except OSError:
        pass
    return bool(leftovers(d))


def test_signals(d):
    # 2. A run killed while it writes leaves no temporary or partial file,
    # whatever the signal (SIGKILL included), and dies of that signal.  The
    # suite may run under nohup: gemmcli is started with the signal's
    # default action, as a shell would, and a signal ignored when it starts
    # stays ignored.
    x = os.path.join(d, "big.npy")
    np.save(x, rng.standard_normal((1500, 1500)).astype(np.float32))
    # Level 12 gzip is slow enough that the write is surely under way.
    argv = [GEMMCLI, "convert", "-q", x, "-o", "out.csv.gz", "--level", "12"]
    hup = signal.signal(signal.SIGHUP, signal.SIG_IGN)      # as under nohup
    sigs = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGALRM,
            signal.SIGUSR1, signal.SIGUSR2, signal.SIGVTALRM, signal.SIGPROF, signal.SIGSEGV,
            signal.SIGBUS, signal.SIGABRT, signal.SIGFPE, signal.SIGILL, signal.SIGKILL]
    try:
        for sig in sigs:
            def pre(sig=sig):
                if sig != signal.SIGKILL:
                    signal.signal(sig, signal.SIG_DFL)
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            proc = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, preexec_fn=pre)
            seen = False
            for _ in range(2000):
                if writing(proc, d):
                    seen = True
                    break
                if proc.poll() is not None:
                    break
                time.sleep(0.005)
            proc.send_signal(sig)
            proc.wait(timeout=30)
            name = signal.Signals(sig).name
            check(f"{name}: the output was being written", seen)
            check(f"{name}: died of the signal", proc.returncode == -sig, proc.returncode)
            check(f"{name}: no temporary or partial file", not leftovers(d) and
                  not os.path.exists(os.path.join(d, "out.csv.gz")), os.listdir(d))
            for f in leftovers(d):
                os.remove(os.path.join(d, f))
        # The CPU time limit (ulimit -t) sends SIGXCPU.
        def cpu_limit():
            resource.setrlimit(resource.RLIMIT_CPU, (1, resource.RLIM_INFINITY))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        p = subprocess.run(argv, cwd=d, capture_output=True, preexec_fn=cpu_limit, timeout=60)
        check("ulimit -t: died of SIGXCPU", p.returncode == -signal.SIGXCPU, p.returncode)
        check("ulimit -t: no temporary or partial file", not leftovers(d) and
              not os.path.exists(os.path.join(d, "out.csv.gz")), os.listdir(d))
        # SIGHUP ignored by the caller (nohup): it stays ignored.
        proc = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(2000):
            if writing(proc, d) or proc.poll() is not None:
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGHUP)
        proc.wait(timeout=120)
        check("SIGHUP ignored when started: the run completes", proc.returncode == 0 and
              os.path.exists(os.path.join(d, "out.csv.gz")) and not leftovers(d),
              (proc.returncode, os.listdir(d)))
    finally:
        signal.signal(signal.SIGHUP, hup)


def test_modes(d):
    # 3. A replaced file keeps its mode, owner and group; links are not split silently.
    out = os.path.join(d, "p.npy")
    for mode in (0o600, 0o755, 0o640):
        shutil.copy(A, out)
        os.chmod(out, mode)
        p = run("convert", "-q", B, "-o", out)
        got = stat.S_IMODE(os.stat(out).st_mode)
        check(f"replace keeps mode {mode:o}", p.returncode == 0 and got == mode, f"{got:o}")
    os.remove(out)
    p = run("convert", "-q", B, "-o", out, pre=lambda: os.umask(0o027))
    got = stat.S_IMODE(os.stat(out).st_mode)
    check("new file gets 0666 & ~umask", got == 0o640, f"{got:o}")
    if os.geteuid() == 0:
        os.chown(out, 65534, 65534)
        p = run("convert", "-q", A, "-o", out)
        st = os.stat(out)
        check("replace keeps owner and group", (st.st_uid, st.st_gid) == (65534, 65534),
              (st.st_uid, st.st_gid))
    link = os.path.join(d, "hard.npy")
    os.link(out, link)
    before = open(link, "rb").read()
    p = run("convert", "-q", B, "-o", out)
    check("hard link: warned", p.returncode == 0 and "hard link" in err(p), err(p))
    check("hard link: the other name keeps the old contents", open(link, "rb").read() == before)
    os.remove(link)


def test_descriptor_outputs(d):
    # 4. Outputs that are not regular files are written in place, never replaced.
    text_out = os.path.join(d, "out.csv")
    with open(text_out, "wb") as f:
        p = run("convert", "-q", A, "-o", "/proc/self/fd/1", "--format", "csv", stdout=f)
    want = np.load(A)
    check("-o /proc/self/fd/1 > file", p.returncode == 0 and
          np.array_equal(np.loadtxt(text_out, delimiter=",", dtype=np.float32), want), err(p))
    os.symlink("/proc/self/fd/1", os.path.join(d, "mylink"))
    with open(text_out, "wb") as f:
        p = run("convert", "-q", A, "-o", "mylink", "--format", "csv", cwd=d, stdout=f)
    check("-o link-to-stdout > file: link kept, data in the file",
          p.returncode == 0 and os.path.islink(os.path.join(d, "mylink")) and
          os.path.getsize(text_out) > 0, err(p))
    with open(os.path.join(d, "c.npy"), "wb") as f:
        p = run("mul", "--kernel", "cpu", A, B, "-o", "/dev/stdout", "--format", "npy", "--json",
                stdout=f)
    ok = p.returncode == 0
    try:
        c = np.load(os.path.join(d, "c.npy"))
        report = json.loads(p.stderr.decode())
    except (ValueError, OSError) as e:
        ok, c, report = False, None, str(e)
    check("--json -o /dev/stdout: matrix alone on stdout, JSON on stderr",
          ok and c.shape == (96, 80) and report.get("command") == "mul", report)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
    p = run("convert", "-q", A, "-o", fifo, "--format", "csv")
    data = reader.communicate(timeout=30)[0]
    check("-o FIFO: written through, FIFO kept", p.returncode == 0 and len(data) > 0 and
          stat.S_ISFIFO(os.lstat(fifo).st_mode), err(p))
    target = os.path.join(d, "target.npy")
    os.symlink("target.npy", os.path.join(d, "sym.npy"))
    p = run("convert", "-q", A, "-o", "sym.npy", cwd=d)
    check("-o symlink to a regular file: link kept, target written",
          p.returncode == 0 and os.path.islink(os.path.join(d, "sym.npy")) and
          np.array_equal(np.load(target), want), err(p))
    # The case as reported: /dev/stdout, a link to /proc/self/fd/1, with
    # stdout a file, in a private mount namespace (root and unshare needed).
    if os.geteuid() == 0 and shutil.which("unshare"):
        script = (f"mount -t tmpfs none /dev && ln -s /proc/self/fd/1 /dev/stdout && "
                  f"'{GEMMCLI}' convert -q '{A}' -o /dev/stdout --format csv > '{text_out}'")
        os.remove(text_out)
        r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True)
        if r.returncode == 0 or b"convert" in r.stderr:
            check("/dev/stdout -> /proc/self/fd/1 > file", r.returncode == 0 and
                  np.array_equal(np.loadtxt(text_out, delimiter=",", dtype=np.float32), want),
                  r.stderr)


def test_long_names(d):
    # 5. A name that fits the directory works although the temporary name is longer.
    for length in (240, 251, 255):
        name = "x" * (length - 4) + ".npy"
        p = run("convert", "-q", A, "-o", name, cwd=d)
        check(f"output name of {length} bytes", p.returncode == 0 and
              os.path.exists(os.path.join(d, name)) and not leftovers(d), err(p))
        if os.path.exists(os.path.join(d, name)):
            os.remove(os.path.join(d, name))


def test_zero_shapes(d):
    # 6. A shape that does not match the data is an error, zeros included.
    raw = os.path.join(d, "r16.bin")
    np.arange(16, dtype=np.float32).tofile(raw)
    for shape in ("0x5", "5x0", "0x0", "4x5"):
        p = run("convert", raw, "--shape", shape, "-o", "r.npy", cwd=d)
        check(f"--shape {shape} of 16 elements: exit 3", p.returncode == 3 and
              not os.path.exists(os.path.join(d, "r.npy")), f"exit {p.returncode}: {err(p)}")


def test_scalars(d):
    # 7. Scalars that overflow the compute precision are usage errors.
    for opt, val in (("--alpha", "1e39"), ("--alpha", "3.5e38"), ("--alpha", "1e308"),
                     ("--beta", "-1e39")):
        p = run("mul", "--kernel", "cpu", A, B, "-o", "c.npy", "-c", os.path.join(SAMPLES, "c0.npy"),
                opt, val, cwd=d)
        check(f"{opt} {val}: exit 2 naming it", p.returncode == 2 and opt in err(p) and
              not os.path.exists(os.path.join(d, "c.npy")), f"exit {p.returncode}: {err(p)}")


def test_delimiters(d):
    # 8. A delimiter that can occur in a number, inf or nan is refused.
    for delim in list("eEnNiIaAfFxX0159.+-#") + ['"']:
        for cmd in (["convert", A, "-o", "x.csv"], ["convert", os.path.join(SAMPLES, "a.csv"),
                                                   "-o", "x.npy"]):
            p = run(*cmd, "--delimiter", delim, cwd=d)
            check(f"--delimiter {delim!r} ({cmd[-1]}): exit 2", p.returncode == 2 and
                  not os.listdir(d), f"exit {p.returncode}: {err(p)}")
    p = run("convert", "-q", A, "-o", "x.csv", "--delimiter", ";", cwd=d)
    q = run("convert", "-q", "x.csv", "-o", "x.npy", "--delimiter", ";", "--in-dtype", "f32",
            cwd=d)
    check("--delimiter ';' round trip", p.returncode == 0 and q.returncode == 0 and
          np.array_equal(np.load(os.path.join(d, "x.npy")), np.load(A)), err(p) + err(q))


def test_memory_bounds(d):
    # 9. info streams text; readers refuse what memory cannot hold; devices are refused.
    bomb = os.path.join(d, "bomb.csv.gz")
    c = zlib.compressobj(9, 8, 31)
    line = (b"0," * 511 + b"0\n") * 16384          # 16 MiB of text
    with open(bomb, "wb") as f:
        for _ in range(16):
            f.write(c.compress(line))
        f.write(c.flush())
    # At a fixed thread count (what the text takes grows with the threads
    # that inflate it side by side, never with its length), each run's own
    # peak: the children's maximum would count every earlier test's.
    p, peak = run_peak(["info", bomb, "--threads", "16"])
    check("info of 256 MiB of gzip text: right shape", p.returncode == 0 and
          b"262144x512" in p.stdout, p.stdout + p.stderr)
    check("info of 256 MiB of gzip text: bounded memory", peak < 160 * 1024,
          f"peak {peak / 1024:.0f} MiB")
    with open(bomb, "rb") as f:
        proc, peak = run_peak(["info", "-", "--threads", "16"], stdin=f)
    check("info of the same on a pipe: bounded memory", proc.returncode == 0 and
          peak < 160 * 1024, f"peak {peak / 1024:.0f} MiB, {proc.stderr}")
    # A header that claims 4 TiB, on a sparse file of that size.
    huge = os.path.join(d, "huge.npy")
    hlen = npy_header_only(huge, "<f4", "(1048576, 1048576)")
    try:
        with open(huge, "r+b") as f:
            f.truncate(hlen + 4 * 1048576 * 1048576)
        sparse_ok = True
    except OSError:
        sparse_ok = False
    if sparse_ok:
        p = run("convert", huge, "-o", "h.csv", cwd=d, timeout=30)
        check("a 4 TiB matrix is refused, naming the size", p.returncode == 3 and
              "GiB" in err(p) and "memory" in err(p), f"exit {p.returncode}: {err(p)}")
        os.remove(huge)
    for dev in ("/dev/zero", "/dev/urandom"):
        p = run("info", dev, timeout=10)
        check(f"info {dev}: refused at once", p.returncode == 3 and "device" in err(p), err(p))
        p = run("convert", dev, "--shape", "4x4", "-o", "x.npy", cwd=d, timeout=10)
        check(f"convert {dev}: refused", p.returncode == 3 and not os.listdir(d) == ["x.npy"],
              err(p))


def test_empty_outputs(d):
    # 10. Every output reads back to its shape; .csv.gz is always gzip.
    for shape in ((0, 0), (5, 0), (0, 5)):
        np.save(os.path.join(d, "e.npy"), np.zeros(shape, np.float32))
        for fmt in ("csv", "csv.gz", "bin", "npy"):
            p = run("convert", "-q", "e.npy", "-o", "e." + fmt, cwd=d)
            extra = ["--shape", f"{shape[0]}x{shape[1]}"] if fmt == "bin" else []
            q = run("convert", "-q", "e." + fmt, *extra, "-o", "back.npy", cwd=d)
            back = np.load(os.path.join(d, "back.npy")) if q.returncode == 0 else None
            check(f"{shape} as {fmt} reads back", p.returncode == 0 and q.returncode == 0 and
                  back.shape == shape, err(p) + err(q))
        raw = open(os.path.join(d, "e.csv.gz"), "rb").read()
        try:
            valid = raw[:2] == b"\x1f\x8b" and gzip.decompress(raw) is not None
        except (OSError, EOFError):
            valid = False
        check(f"{shape} as csv.gz is valid gzip", valid)


def test_verify_message(d):
    # 11. An overflow against a finite reference is named as such.
    np.save(os.path.join(d, "A.npy"), np.array([[3e38, 3e38]], np.float32))
    np.save(os.path.join(d, "B.npy"), np.ones((2, 1), np.float32))
    p = run("mul", "--kernel", "cpu", "--verify", "A.npy", "B.npy", "-o", "C.npy", cwd=d)
    check("overflow: exit 1, says inf where the reference is finite",
          p.returncode == 1 and "inf or nan where the reference" in err(p) and
          "error 0 is above" not in err(p) and not os.path.exists(os.path.join(d, "C.npy")),
          err(p))


def test_detection(d):
    # 12. The extension decides before gzip's three magic bytes.
    x = np.full((4, 4), np.frombuffer(bytes([0x1f, 0x8b, 0x08, 0x41]), "<f4")[0], np.float32)
    x.tofile(os.path.join(d, "g.bin"))
    p = run("convert", "-q", "g.bin", "-o", "g.npy", cwd=d)
    check("raw .bin starting 1f 8b 08 reads as raw", p.returncode == 0 and
          np.array_equal(np.load(os.path.join(d, "g.npy")), x), err(p))
    with open(os.path.join(SAMPLES, "a.csv"), "rb") as f:
        text = f.read()
    p = run("transpose", "-", "-o", "-", "--format", "csv", "--kernel", "cpu", stdin=text)
    check("stdin: says which format it assumed", p.returncode == 0 and "read as csv" in err(p),
          err(p))


def test_header_crc(d):
    # 13. A wrong FHCRC is an error, from a file and from a pipe.
    data = b"1,2\n3,4\n"
    hdr = b"\x1f\x8b\x08\x02" + b"\0" * 4 + b"\0\xff"
    crc = zlib.crc32(hdr) & 0xFFFF
    co = zlib.compressobj(6, 8, -15)
    body = co.compress(data) + co.flush() + struct.pack("<II", zlib.crc32(data), len(data))
    bad = os.path.join(d, "bad.csv.gz")
    good = os.path.join(d, "good.csv.gz")
    open(bad, "wb").write(hdr + struct.pack("<H", crc ^ 1) + body)
    open(good, "wb").write(hdr + struct.pack("<H", crc) + body)
    p = run("info", bad)
    check("bad header CRC (file): exit 3", p.returncode == 3 and "header CRC" in err(p), err(p))
    p = run("info", "-", stdin=open(bad, "rb").read())
    check("bad header CRC (pipe): exit 3", p.returncode == 3 and "header CRC" in err(p), err(p))
    p = run("info", good)
    check("good header CRC: read", p.returncode == 0 and b"2x2" in p.stdout, err(p))


def test_repeat_cpu(d):
    # 14. --repeat runs the CPU kernel that many times.
    np.save(os.path.join(d, "m.npy"), rng.standard_normal((256, 256)).astype(np.float32))
    p = run("mul", "--kernel", "cpu", "m.npy", "m.npy", "-o", "c.npy", "--repeat", "9", "--json",
            "--threads", "1", cwd=d)
    r = json.loads(p.stdout) if p.returncode == 0 else {}
    ms = r.get("ms", {})
    check("--repeat 9 on the cpu: 9 runs timed", r.get("repeat") == 9 and
          ms.get("total", 0) >= 9 * 0.6 * ms.get("kernel", 1e9), r)


def test_json_names(d):
    # 15. JSON stays valid whatever bytes a file name holds.
    raw_name = b"bad\xffname\xc3.npy"
    shutil.copy(A, os.path.join(d.encode(), raw_name))
    p = subprocess.run([GEMMCLI.encode(), b"info", b"--json", raw_name], cwd=d,
                       capture_output=True)
    try:
        info = json.loads(p.stdout.decode("utf-8"))
        name = info[0]["file"].encode("utf-8", "surrogateescape")
    except (ValueError, KeyError, UnicodeError) as e:
        name = str(e)
    check("info --json with a non-UTF-8 name: valid JSON, name recoverable", name == raw_name,
          name)


def test_minor(d):
    p = run("mul", "--d", "1", A, B, "-o", "c.npy", cwd=d)
    check("ambiguous --d: says so and lists candidates", p.returncode == 2 and
          "ambiguous" in err(p) and "--dtype" in err(p) and "--device" in err(p), err(p))
    p = run("bench", "--sizes", "64", "--op", "mul", env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    check("bench without a GPU does not suggest --kernel cpu", p.returncode == 5 and
          "--kernel cpu" not in err(p), err(p))
    p = run("mul", "--kernel", "cpu", A, B, "-o", "c.npy", cwd=d,
            env=dict(os.environ, GEMMCLI_DEVICE="abc"))
    check("GEMMCLI_DEVICE=abc: exit 2", p.returncode == 2 and "GEMMCLI_DEVICE" in err(p), err(p))
    p = run("mul", "--kernel", "cpu", A, B, "-o", "c.npy", "-c", "nonexistent.npy", cwd=d)
    check("-c of a missing file with beta 0: exit 3, no output", p.returncode == 3 and
          not os.path.exists(os.path.join(d, "c.npy")), err(p))
    p = subprocess.run(f"'{GEMMCLI}' mul --kernel cpu --json -o c.npy '{A}' '{B}' >&-",
                       shell=True, cwd=d, capture_output=False, stderr=subprocess.PIPE)
    check("--json with stdout closed: exit 4, no output", p.returncode == 4 and
          not os.path.exists(os.path.join(d, "c.npy")), p.stderr)


def test_npz(d):
    # 16. A hostile .npz gets what a hostile .npy gets: status 3, a message
    # naming the archive (and member) and what is wrong, nothing on stdout,
    # no output, bounded time and memory; names are never paths.  (What
    # info finds too, from the headers alone, is in make_malformed.py.)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    data = zc.npy_bytes(x)
    small = len(data)
    # A bomb: 200 MiB of zeros after the header, declared as the header alone.
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = c.compress(data) + b"".join(c.compress(bytes(1 << 20)) for _ in range(200)) + c.flush()
    cases = [
        ("crc_stored.npz", [zc.member("a.npy", data, crc=zlib.crc32(data) ^ 1)],
         "crc_stored.npz:a: CRC-32 mismatch"),
        ("crc_deflated.npz", [zc.member("a.npy", data, deflate=True, crc=zlib.crc32(data) ^ 1)],
         "crc_deflated.npz:a: CRC-32 mismatch"),
        ("bomb.npz", [zc.member("a.npy", data, deflate=True, comp=bomb)],
         f"bomb.npz:a: the deflate data inflates to more than the {small} bytes"),
        ("claims_a_tib.npz", [zc.member("a.npy", data, deflate=True, usize=1 << 40)],
         "more than deflate can make of them"),
        ("cut_deflate.npz", [zc.member("a.npy", data, deflate=True,
                                       comp=zc.deflate(data)[:-20])], "deflate data"),
    ]
    for name, members, want in cases:
        with open(os.path.join(d, name), "wb") as f:
            f.write(zc.archive(members))
    big = zc.archive([zc.member("a.npy", data)], zip64=True)
    big = big[:-22 - 20 - 56 + 24] + struct.pack("<QQ", 1 << 40, 1 << 40) + big[-22 - 20 - 56 + 40:]
    with open(os.path.join(d, "count64.npz"), "wb") as f:
        f.write(big)
    cases.append(("count64.npz", None, "more than gemmcli reads"))
    good = zc.archive([zc.member("a.npy", data, deflate=True)])
    for cut in (len(good) // 2, len(good) - 1, len(good) - 22):
        name = f"cut_{cut}.npz"
        with open(os.path.join(d, name), "wb") as f:
            f.write(good[:cut])
        cases.append((name, None, "truncated zip archive"))
    out = os.path.join(d, "out")
    os.mkdir(out)
    for name, _, want in cases:
        path = os.path.join(d, name)
        t = time.time()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        p = run("convert", path, "-o", "x.npy", cwd=out, timeout=30)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        check(f"{name}: exit 3 naming it, nothing written", p.returncode == 3 and
              want in err(p) and path in err(p) and p.stdout == b"" and not os.listdir(out),
              f"exit {p.returncode}: {err(p)}")
        check(f"{name}: fast, bounded memory", time.time() - t < 10 and
              (peak < 100 * 1024 or peak == before), f"{time.time() - t:.1f} s, {peak} KiB")
        with open(path, "rb") as f:
            q = run("convert", "--in-format", "npz", "-", "-o", "x.npy", cwd=out, stdin=f.read())
        check(f"{name} on a pipe: exit 3, the same fault", q.returncode == 3 and
              want.split(":")[-1] in err(q) and "<stdin>" in err(q) and not os.listdir(out),
              f"exit {q.returncode}: {err(q)}")
    # Names are keys: shown escaped, never used as paths.
    odd = ["../../evil", "x\x1b[2J\ty", "\u00e9t\u00e9", "/etc/passwd"]
    members = [zc.member(n + ".npy", zc.npy_bytes(x + i), deflate=i % 2 == 1)
               for i, n in enumerate(odd)]
    members.append(zc.member(b"\xff\xfe.npy", data))
    names = os.path.join(out, "names.npz")
    with open(names, "wb") as f:
        f.write(zc.archive(members))
    p = run("info", names, cwd=out)
    text = p.stdout.decode("utf-8", "replace")
    check("odd names: listed, escaped", p.returncode == 0 and "names.npz:../../evil: npy" in text
          and "x\\x1b[2J\\ty" in text and "\x1b" not in text and "\u00e9t\u00e9" in text and
          "names.npz:\\xff\\xfe: npy" in text, text)
    for i, n in enumerate(odd):
        p = run("convert", f"{names}:{n}", "-o", "x.npy", cwd=out)
        got = np.load(os.path.join(out, "x.npy")) if p.returncode == 0 else None
        check(f"odd name {n!r}: read by name, nothing else written",
              p.returncode == 0 and np.array_equal(got, x + i) and
              sorted(os.listdir(out)) == ["names.npz", "x.npy"] and
              not os.path.exists(os.path.join(d, "evil.npy")), (err(p), os.listdir(out)))
        os.remove(os.path.join(out, "x.npy"))
    p = run("convert", names, "-o", "x.npy", cwd=out)
    check("odd names in a message: escaped", p.returncode == 3 and "\x1b" not in err(p) and
          "x\\x1b[2J\\ty" in err(p), err(p))
    # np.savez into a pipe: no seeking back, so sizes and CRCs follow the
    # data (flag bit 3); from a file and from a pipe.
    script = ("import numpy as np, sys; np.savez%s(sys.stdout.buffer, a=np.arange(6.0), "
              "b=np.ones((2, 3), np.int16))")
    for suffix in ("", "_compressed"):
        streamed = subprocess.run(f"{sys.executable} -c '{script % suffix}' | cat",
                                  shell=True, capture_output=True).stdout
        with open(os.path.join(out, "streamed.npz"), "wb") as f:
            f.write(streamed)
        p = run("convert", "streamed.npz:b", "-o", "b.npy", cwd=out)
        q = run("transpose", "-o", "-", "--format", "npy", "--kernel", "cpu", "-q", "--", "-:b",
                stdin=streamed)
        check(f"np.savez{suffix} into a pipe: read from the file and from stdin",
              p.returncode == 0 and q.returncode == 0 and
              np.array_equal(np.load(os.path.join(out, "b.npy")), np.ones((2, 3), np.int16)) and
              np.load(io.BytesIO(q.stdout)).shape == (3, 2), err(p) + err(q))
        os.remove(os.path.join(out, "b.npy"))


def test_one_member_faults(d):
    # 15. One large gzip member (inflated on several threads) with a bit
    # flipped in its data, a wrong trailer or cut short: refused as on one
    # thread, with the same message, and nothing written.
    a = np.random.default_rng(15).standard_normal((400, 500))
    buf = io.StringIO()
    np.savetxt(buf, a)
    gz = gzip.compress(buf.getvalue().encode(), compresslevel=6, mtime=0)
    n = len(gz)
    faults = [(f"bit flipped at {at / n:.0%}", gz[:at] + bytes([gz[at] ^ 0x10]) + gz[at + 1:])
              for at in (n // 4, n // 2 + 7, 3 * n // 4 + 3, n - 40)]
    faults += [("CRC", gz[:-8] + bytes([gz[-8] ^ 1]) + gz[-7:]),
               ("length", gz[:-3] + bytes([gz[-3] ^ 1]) + gz[-2:]),
               ("cut in half", gz[:n // 2]), ("trailer missing", gz[:-8])]
    path = os.path.join(d, "f.csv.gz")
    for name, data in faults:
        open(path, "wb").write(data)
        out = os.path.join(d, "f.npy")
        ps = {t: run("convert", "-q", "--delimiter", " ", "--threads", str(t), path, "-o", out)
              for t in (1, 4)}
        check(f"one member, {name}: exit 3 on 4 threads, nothing written",
              ps[4].returncode == 3 and not os.path.exists(out), err(ps[4]))
        check(f"one member, {name}: the message one thread gives", err(ps[4]) == err(ps[1]) and
              any(w in err(ps[4]) for w in ("bad CRC", "corrupt gzip data", "truncated gzip data",
                                            "bad length")), f"{err(ps[1])} / {err(ps[4])}")


def main():
    tests = [test_huge_dimensions, test_signals, test_modes, test_descriptor_outputs,
             test_long_names, test_zero_shapes, test_scalars, test_delimiters,
             test_memory_bounds, test_empty_outputs, test_verify_message, test_detection,
             test_header_crc, test_repeat_cpu, test_json_names, test_minor, test_npz,
             test_one_member_faults]
    for t in tests:
        with tempfile.TemporaryDirectory(prefix="gemmcli-hostile.") as d:
            t(d)
    print(f"hostile: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
