#!/usr/bin/env python3
"""Output safety: what a killed, refused or cut-off run leaves, and what its
messages look like.  Temporary files where O_TMPFILE cannot serve (no
/proc: a mount namespace hides it, where root may make one) and the
removal of stale ones; outputs the caller may not write to (run as
nobody); the file-size limit; a reader that goes away; empty and
standard-error output names; a summary that cannot be written; messages
from threads failing at once, and names with control characters; the tune
cache's --show against what a store does; make run's output.

    safety_test.py [path/to/gemmcli]     (prints 'safety: N passed, M failed')
"""
import fcntl
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np

from checks import Checks

GEMMCLI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./gemmcli")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SAMPLES = os.path.join(ROOT, "samples")
A = os.path.join(SAMPLES, "a.npy")
B = os.path.join(SAMPLES, "b.npy")
STALE_S = 5          # core/newfile.h: NEWFILE_STALE_S
NOBODY = 65534
check = Checks()
rng = np.random.default_rng(25)


def run(*args, cwd=None, stdin=None, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pre=None,
        env=None, timeout=120, binary=GEMMCLI):
    return subprocess.run([binary, *map(str, args)], input=stdin, stdout=stdout, stderr=stderr,
                          cwd=cwd, preexec_fn=pre, env=env, timeout=timeout)


def err(p):
    return p.stderr.decode(errors="replace") if p.stderr else ""


def temps(d):
    return sorted(f for f in os.listdir(d) if f.startswith(".gemmcli"))


def big_npy(d):
    path = os.path.join(d, "big.npy")
    np.save(path, rng.standard_normal((1500, 1500)).astype(np.float32))
    return path


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def fallback_argv(argv):
    """argv run where /proc is hidden (a mount namespace with an empty tmpfs on
    it), so that an unnamed file cannot be linked in and gemmcli falls back to
    a named temporary file: the path network file systems and MPI ranks take.
    None where no namespace can be made (not root)."""
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /proc"],
                           capture_output=True) if shutil.which("unshare") else None
    if not probe or probe.returncode != 0:
        return None
    # unshare and sh exec in turn: the pid is gemmcli's.
    return ["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /proc && exec "$@"', "sh", *argv]


def temp_like(d, name):
    """A file as a writer's temporary one is (mode 0600), by hand; its path."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("partial")
    os.chmod(path, 0o600)
    return path


def start_until_temp(argv, d, pre=None):
    """Starts argv; returns it and its temporary file's name once a new named
    temporary file shows in d (None if none did)."""
    before = set(temps(d))
    proc = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=pre)
    for _ in range(4000):
        new = [f for f in temps(d) if f not in before]
        if new or proc.poll() is not None:
            return proc, new[0] if new else None
        time.sleep(0.005)
    return proc, None


def wait_locked(d, name, tries=2000):
    """Waits until /proc/locks lists a lock on the file `name` in d."""
    if name is None:
        return
    try:
        ino = os.stat(os.path.join(d, name)).st_ino
    except OSError:
        return
    for _ in range(tries):
        with open("/proc/locks") as f:
            if any(line.split()[5].split(":")[-1] == str(ino) for line in f
                   if len(line.split()) > 5):
                return
        time.sleep(0.005)


def test_named_fallback(d):
    # Where the temporary file must have a name, the fatal signals remove it;
    # what SIGKILL leaves, a later run in the directory removes, and nothing
    # else: not a live writer's, not another user's, not a link, not one with
    # a second name, not a young one, not a name of another form.
    x = big_npy(d)
    argv = fallback_argv([GEMMCLI, "convert", "-q", x, "-o", "out.csv.gz", "--level", "12"])
    if argv is None:
        print("note: no mount namespace here: the named temporary file of a killed run is "
              "made by hand")
    else:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGALRM, signal.SIGUSR1,
                    signal.SIGXCPU, signal.SIGSEGV, signal.SIGABRT):
            def pre(sig=sig):
                # As a shell starts it, whatever this suite ignores (nohup, &).
                signal.signal(sig, signal.SIG_DFL)
                no_core()
            proc, seen = start_until_temp(argv, d, pre)
            proc.send_signal(sig)
            proc.wait(timeout=30)
            name = signal.Signals(sig).name
            check(f"named temporary file: written under a name ({name})",
                  seen and seen.startswith(".gemmcli-out.csv.gz."), seen)
            check(f"named temporary file: {name} removes it and kills", proc.returncode == -sig
                  and not temps(d) and not os.path.exists(os.path.join(d, "out.csv.gz")),
                  (proc.returncode, os.listdir(d)))
            for f in temps(d):
                os.remove(os.path.join(d, f))
    stale = None
    if argv is not None:
        proc, stale = start_until_temp(argv, d)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        check("SIGKILL leaves the named temporary file (no handler runs)",
              stale and temps(d) == [stale], temps(d))
    if stale is None:
        stale = ".gemmcli-out.csv.gz.Kil9ed"
        temp_like(d, stale)
    # Another run of gemmcli that is alive but stopped, its file old enough.
    live = None
    if argv is not None:
        live_argv = argv[:argv.index("convert") + 1] + ["-q", x, "-o", "live.csv", "--precision",
                                                        "17"]
        proc_live, live = start_until_temp(live_argv, d)
        # (stopped only once it holds the file's lock: the name shows a
        # moment before the lock is taken)
        wait_locked(d, live)
        proc_live.send_signal(signal.SIGSTOP)
        check("a live writer's temporary file shows", live is not None, temps(d))
    # Files with this program's names that must stay.
    keep = {}
    other = ".gemmcli-other.npy.Oth3r1"
    temp_like(d, other)
    if os.geteuid() == 0:
        os.chown(os.path.join(d, other), NOBODY, NOBODY)
        keep[other] = "another user's file"
    target = os.path.join(d, "linked-target")
    open(target, "w").write("precious")
    os.symlink("linked-target", os.path.join(d, ".gemmcli-link.npy.L1nk00"))
    keep[".gemmcli-link.npy.L1nk00"] = "a symbolic link"
    temp_like(d, ".gemmcli-two.npy.Tw0lnk")
    os.link(os.path.join(d, ".gemmcli-two.npy.Tw0lnk"), os.path.join(d, "second-name"))
    keep[".gemmcli-two.npy.Tw0lnk"] = "a file with two links"
    held = open(temp_like(d, ".gemmcli-held.npy.He1d00"))
    fcntl.flock(held, fcntl.LOCK_EX)
    keep[".gemmcli-held.npy.He1d00"] = "a file whose lock is held"
    os.mkdir(os.path.join(d, ".gemmcli-dir.npy.D1r000"))
    keep[".gemmcli-dir.npy.D1r000"] = "a directory"
    open(os.path.join(d, ".gemmcli-mode.npy.M0de00"), "w").write("an output of that name")
    os.chmod(os.path.join(d, ".gemmcli-mode.npy.M0de00"), 0o644)
    keep[".gemmcli-mode.npy.M0de00"] = "a file not of mode 0600"
    temp_like(d, ".gemmcli-short.npy.ab")
    keep[".gemmcli-short.npy.ab"] = "a name of another form"
    time.sleep(STALE_S + 1.5)
    temp_like(d, ".gemmcli-young.npy.Y0ung0")
    keep[".gemmcli-young.npy.Y0ung0"] = "a file younger than the stale age"
    p = run("convert", "-q", A, "-o", "small.npy", cwd=d)
    left = set(temps(d))
    check("a later run removes the stale temporary file", p.returncode == 0 and
          stale not in left, (err(p), sorted(left)))
    for name, what in keep.items():
        check(f"stale-file removal keeps {what}", name in left, sorted(left))
    check("stale-file removal keeps the target of a link", open(target).read() == "precious")
    if live:
        check("stale-file removal keeps a live writer's file", live in left, sorted(left))
        proc_live.send_signal(signal.SIGCONT)
        proc_live.wait(timeout=120)
        got = np.loadtxt(os.path.join(d, "live.csv"), delimiter=",", dtype=np.float32) \
            if proc_live.returncode == 0 else None
        check("the live writer then finishes its output", got is not None and
              np.array_equal(got, np.load(x)) and live not in temps(d), proc_live.returncode)
    held.close()


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def test_write_protected(_):
    # An existing output the caller may not write to is kept (status 4,
    # named), unless --force.  Root passes every access check, so the
    # caller is nobody, in a directory everyone may write to.
    if os.geteuid() != 0:
        print("note: not root: write protection checked on a chmod 444 file of the caller's")
    d = tempfile.mkdtemp(prefix="gemmcli-safety.", dir="/tmp")
    try:
        os.chmod(d, 0o777)
        pre = as_nobody if os.geteuid() == 0 else None
        # A copy nobody may run, wherever the checkout is.
        binary = os.path.join(d, "gemmcli")
        shutil.copy(GEMMCLI, binary)
        os.chmod(binary, 0o755)
        a = os.path.join(d, "a.npy")
        shutil.copy(A, a)
        os.chmod(a, 0o644)
        cases = {"ro.npy": 0o444}
        if os.geteuid() == 0:
            cases["roots.npy"] = 0o644
        for name, mode in cases.items():
            path = os.path.join(d, name)
            shutil.copy(B, path)
            os.chmod(path, mode)
            if os.geteuid() == 0 and name == "ro.npy":
                os.chown(path, NOBODY, NOBODY)
            before = open(path, "rb").read()
            for cmd in (["convert", "-q", a, "-o", name], ["transpose", "-q", "--kernel", "cpu", a,
                                                           name]):
                p = run(*cmd, cwd=d, pre=pre, binary=binary)
                check(f"{cmd[0]} over {name} ({mode:o}, {'own' if name == 'ro.npy' else 'root'}'s):"
                      " refused, status 4, named", p.returncode == 4 and name in err(p) and
                      "--force" in err(p) and open(path, "rb").read() == before and not temps(d),
                      (p.returncode, err(p)))
            p = run("convert", "-q", a, "-o", name, "--force", cwd=d, pre=pre, binary=binary)
            st = os.stat(path)
            check(f"--force replaces {name}, keeping its mode", p.returncode == 0 and
                  np.array_equal(np.load(path), np.load(A)) and stat.S_IMODE(st.st_mode) == mode,
                  (p.returncode, err(p), oct(st.st_mode)))
        p = run("convert", "-q", a, "-o", "new.npy", cwd=d, pre=pre, binary=binary)
        check("a new file beside them is written", p.returncode == 0 and
              np.array_equal(np.load(os.path.join(d, "new.npy")), np.load(A)), err(p))
    finally:
        shutil.rmtree(d)


def file_limit(nbytes):
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, resource.RLIM_INFINITY))
    return pre


def test_file_size_limit(d):
    # Past the file-size limit (ulimit -f) every output path fails with
    # status 4 and a message, instead of dying of SIGXFSZ.
    x = big_npy(d)
    pre = file_limit(1 << 20)
    with open(os.path.join(d, "stdout.bin"), "wb") as f:
        p = run("transpose", "-q", "--kernel", "cpu", x, "-o", "-", cwd=d, stdout=f, pre=pre)
    check("ulimit -f, stdout to a file: status 4, said", p.returncode == 4 and
          "<stdout>" in err(p) and "File too large" in err(p), (p.returncode, err(p)))
    for out, cmd in (("t.npy", ["transpose", "-q", "--kernel", "cpu", x]),
                     ("c.npy", ["mul", "-q", "--kernel", "cpu", x, x]),
                     ("v.csv", ["convert", "-q", x]), ("v.csv.gz", ["convert", "-q", x])):
        path = os.path.join(d, out)
        open(path, "w").write("older")
        p = run(*cmd, "-o", out, cwd=d, pre=pre)
        check(f"ulimit -f, {cmd[0]} -o {out}: status 4, named, old file kept",
              p.returncode == 4 and out in err(p) and "File too large" in err(p) and
              open(path).read() == "older" and not temps(d), (p.returncode, err(p)))


def test_reader_gone(d):
    # A reader that stops early: killed by SIGPIPE, silent, as Unix filters
    # end; a FIFO named as the output whose reader goes is an output error.
    x = big_npy(d)
    for cmd in (["convert", x, "-o", "-", "--format", "csv"],
                ["transpose", "--kernel", "cpu", x, "-o", "-", "--format", "csv"]):
        p = subprocess.run(f"'{GEMMCLI}' {' '.join(cmd)} 2>'{d}/err' | head -c 100 >/dev/null;"
                           f" echo ${{PIPESTATUS[0]}}", shell=True, executable="bash",
                           capture_output=True, cwd=d)
        check(f"{cmd[0]} | head -c 100: status 141 (SIGPIPE), nothing said",
              p.stdout.strip() == b"141" and open(os.path.join(d, "err"), "rb").read() == b"",
              (p.stdout, open(os.path.join(d, "err"), "rb").read()[:200]))
    # --json to a pipe already closed, the matrix to a file: the file is not
    # left behind, nor its temporary file.
    r, w = os.pipe()
    os.close(r)
    p = run("mul", "--kernel", "cpu", "--json", A, B, "-o", "c.npy", cwd=d, stdout=w)
    os.close(w)
    check("--json to a closed pipe: killed by SIGPIPE, no output, silent",
          p.returncode == -signal.SIGPIPE and not os.path.exists(os.path.join(d, "c.npy")) and
          not temps(d) and err(p) == "", (p.returncode, err(p), os.listdir(d)))
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["head", "-c", "100", fifo], stdout=subprocess.DEVNULL)
    p = run("convert", x, "-o", fifo, "--format", "csv", cwd=d)
    reader.wait()
    check("a FIFO whose reader goes: status 4, named", p.returncode == 4 and "fifo" in err(p) and
          "Broken pipe" in err(p) and not temps(d), (p.returncode, err(p)))


def test_output_names(d):
    # An empty output name, and standard error as the output, are usage
    # errors before anything is read (the input here does not exist).
    missing = os.path.join(d, "missing.npy")
    cases = [(("convert", missing, "-o", ""), "empty"), (("convert", missing, "-o", "", "--format",
                                                           "npy"), "empty"),
             (("transpose", missing, "", "--format", "npy"), "empty"),
             (("transpose", missing, "-o", "", "--format", "csv"), "empty"),
             (("mul", missing, missing, "-o", "", "--format", "npy"), "empty"),
             (("bench", "--auto-table", ""), "empty")]
    for stderr_name in ("/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"):
        cases.append((("convert", missing, "-o", stderr_name, "--format", "csv"), "standard error"))
        cases.append((("mul", "--kernel", "cpu", missing, missing, "-o", stderr_name, "--format",
                       "csv"), "standard error"))
    for args, why in cases:
        p = run(*args, cwd=d, timeout=30)
        shown = " ".join(a.replace(d + "/", "") or "''" for a in args)
        check(f"{shown}: status 2 before reading", p.returncode == 2 and why in err(p) and
              "missing.npy" not in err(p) and p.stdout == b"", (p.returncode, err(p)))
    link = os.path.join(d, "to-stderr")
    os.symlink("/dev/stderr", link)
    p = run("convert", A, "-o", link, "--format", "csv", cwd=d)
    check("a link to /dev/stderr: status 2", p.returncode == 2 and "standard error" in err(p),
          (p.returncode, err(p)))


def test_summary_lost(d):
    # A summary that cannot be written fails the run (status 4) and, for a
    # named output, leaves no result: the old file is kept.
    full = open("/dev/full", "wb")
    for cmd in (["convert", A], ["transpose", "--kernel", "cpu", A], ["mul", "--kernel", "cpu", A, B],
                ["mul", "--kernel", "cpu", "--json", A, B]):
        out = os.path.join(d, "c.npy")
        open(out, "w").write("older")
        stdout = full if "--json" in cmd else subprocess.DEVNULL
        p = run(*cmd, "-o", out, cwd=d, stdout=stdout, stderr=full if "--json" not in cmd
                else subprocess.PIPE)
        check(f"{' '.join(cmd[:2])}, summary to /dev/full: status 4, old file kept",
              p.returncode == 4 and open(out, "rb").read() == b"older" and not temps(d),
              (p.returncode, open(out, "rb").read()[:10]))
    p = run("convert", "-q", A, "-o", os.path.join(d, "c.npy"), stderr=full)
    check("-q, stderr on /dev/full: nothing to say, status 0", p.returncode == 0)
    with open(os.path.join(d, "c.csv"), "wb") as f:
        p = run("convert", A, "-o", "-", "--format", "csv", stdout=f, stderr=full)
    check("stdout output, summary lost: status 4 (the data was sent)", p.returncode == 4 and
          os.path.getsize(os.path.join(d, "c.csv")) > 0, p.returncode)
    full.close()


def test_messages(d):
    # One message, one write: two operands refused at once by two reading
    # threads never run together on a line.
    for name in ("bad1.npy", "bad2.npy"):
        open(os.path.join(d, name), "wb").write(b"garbage")
    bad_lines = []
    for _ in range(150):
        p = subprocess.run([GEMMCLI, "mul", "--kernel", "cpu", "bad1.npy", "bad2.npy", "-o",
                            "c.npy"], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        lines = p.stdout.decode(errors="replace").splitlines() if p.stdout else []
        bad_lines += [ln for ln in lines if not ln.startswith("gemmcli: ") or
                      ln.count("gemmcli: ") > 1]
    check("two threads' messages: each a line of its own", not bad_lines, bad_lines[:4])
    # Names with control characters are shown escaped: no name can break a
    # line or drive the terminal.
    for raw, shown in ((b"new\nline.npy", b"new\\nline.npy"), (b"\x1b[31mred.npy", b"\\x1b[31mred.npy"),
                       (b"tab\there.npy", b"tab\\there.npy"), (b"back\\slash\x7f.npy",
                                                               b"back\\\\slash\\x7f.npy"),
                       (b"caf\xc3\xa9\xff.npy", b"caf\xc3\xa9\\xff.npy")):
        p = subprocess.run([GEMMCLI.encode(), b"convert", raw, b"-o", b"x.npy"], cwd=d,
                           capture_output=True)
        check(f"a name with control characters is escaped: {shown.decode(errors='replace')}",
              p.returncode == 3 and shown in p.stderr and p.stderr.count(b"\n") == 1 and
              b"\x1b" not in p.stderr and b"\t" not in p.stderr, p.stderr)


def test_tune_show(d):
    # tune --show says what a store does: a directory or a FIFO at the
    # cache's path is left as it is, so it must not promise a replacement.
    env = dict(os.environ, XDG_CACHE_HOME=d)
    path = os.path.join(d, "gemmcli", "tune.txt")
    os.makedirs(path)
    p = run("tune", "--show", env=env)
    check("tune --show, a directory: a store leaves it", p.returncode == 0 and
          b"replaces" not in p.stdout and b"leaves it as it is" in p.stdout, p.stdout)
    os.rmdir(path)
    os.mkfifo(path)
    p = run("tune", "--show", env=env, timeout=20)
    check("tune --show, a FIFO: a store leaves it", p.returncode == 0 and
          b"replaces" not in p.stdout and b"leaves it as it is" in p.stdout, p.stdout)
    os.remove(path)
    open(path, "w").write("# gemmcli tune cache 999\n")
    p = run("tune", "--show", env=env)
    check("tune --show, another version: the next store replaces it", p.returncode == 0 and
          b"next store replaces it" in p.stdout, p.stdout)


def test_make_run(d):
    # make run writes under the build folder, not to a fixed name in /tmp
    # that another user may hold (here: a directory by that name).
    tmpdir = os.path.join(d, "tmp")
    os.makedirs(os.path.join(tmpdir, "gemmcli-sample-c.npy"))
    out = os.path.join(d, "build")
    p = subprocess.run(["sh", os.path.join(SAMPLES, "run.sh"), GEMMCLI, out], capture_output=True,
                       env=dict(os.environ, TMPDIR=tmpdir), timeout=120)
    check("samples/run.sh GEMMCLI DIR: writes under DIR", p.returncode == 0 and
          b"sample-c.npy" in p.stdout and os.listdir(tmpdir) == ["gemmcli-sample-c.npy"] and
          os.listdir(out) == [], (p.returncode, p.stderr[-300:], os.listdir(tmpdir)))
    p = subprocess.run(["sh", os.path.join(SAMPLES, "run.sh"), GEMMCLI], capture_output=True,
                       env=dict(os.environ, TMPDIR=tmpdir), timeout=120)
    check("samples/run.sh alone: a directory of its own, removed", p.returncode == 0 and
          os.listdir(tmpdir) == ["gemmcli-sample-c.npy"], (p.returncode, p.stderr[-300:]))
    p = subprocess.run(["make", "-n", "run"], capture_output=True, cwd=ROOT)
    check("make run gives samples/run.sh the build folder",
          re.search(rb"samples/run\.sh \S+ build\b", p.stdout) is not None, p.stdout[-300:])


def main():
    tests = [test_named_fallback, test_write_protected, test_file_size_limit, test_reader_gone,
             test_output_names, test_summary_lost, test_messages, test_tune_show, test_make_run]
    for t in tests:
        with tempfile.TemporaryDirectory(prefix="gemmcli-safety.") as d:
            t(d)
    return check.summary("safety")


if __name__ == "__main__":
    sys.exit(main())
