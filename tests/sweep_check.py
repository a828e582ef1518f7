#!/usr/bin/env python3
"""auto's model in the files a `gemmcli bench --sweep ... --bench-out
PREFIX` run wrote (tests/check_gpu.sh runs the sweep on the GPU, then
this on its output): every shape that ran has the model's estimate for
the kernel auto chose, the same estimate `kernels --for` gives that shape
on that device, and its signed error against the measured time; the CSV
and the JSON agree; the JSON's summary of the model (median |error|, share
within 25%, the largest error) follows from the rows, and the printed
summary says the same.  Prints 'sweep-model: N passed, M failed';
'skipped: ...' when there is no sweep output (it takes a GPU).

usage: sweep_check.py GEMMCLI PREFIX LOG TYPE...
       (PREFIX as given to --bench-out; LOG: the sweep's printed output)
"""
import csv
import json
import math
import os
import re
import subprocess
import sys

from checks import Checks

CSV_COLUMNS = ["type", "device", "date", "family", "shape", "batch", "m", "n", "k", "gflop",
               "kernel", "auto_ms", "cublas_ms", "pct_of_cublas", "select_us", "model_ms",
               "model_err"]
WITHIN = 0.25          # src/bench/sweep.c's SWEEP_MODEL_WITHIN
KERNELS_FOR = 8        # shapes a type whose estimate is asked of `kernels --for`
check = Checks()


def close(a, b, rel=1e-4, eps=1e-6):
    return a is not None and b is not None and abs(a - b) <= max(eps, rel * max(abs(a), abs(b)))


def number(text):
    v = float(text)
    return v if math.isfinite(v) else None


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def check_rows(t, rows, results):
    check(f"{t}: CSV rows", len(rows) == len(results) > 0, f"{len(rows)} against {len(results)}")
    for row, res in zip(rows, results):
        shape = row["shape"]
        for key in ("model_ms", "model_err"):
            a, b = number(row[key]), res[key]
            check(f"{t} {shape}: CSV {key}", (a is None and b is None) or close(a, b, 1e-3, 1e-4),
                  f"{row[key]} against {b}")
        if res["auto_ms"] is None:
            continue
        m = res["model_ms"]
        check(f"{t} {shape}: an estimate for {res['kernel']}", m is not None and m > 0, m)
        if m is not None:
            want = (m - res["auto_ms"]) / res["auto_ms"]
            check(f"{t} {shape}: model_err", close(res["model_err"], want, 1e-4, 1e-5),
                  f"{res['model_err']} against ({m} - {res['auto_ms']}) / {res['auto_ms']}")


def check_fit(t, doc):
    errs = [(abs(r["model_err"]), r) for r in doc["results"] if r["model_err"] is not None]
    fit = doc["model"]
    check(f"{t}: model.shapes", fit["shapes"] == len(errs), f"{fit['shapes']} against {len(errs)}")
    if not errs:
        return None
    check(f"{t}: model.median_abs_err", close(fit["median_abs_err"], median([e for e, _ in errs])),
          fit["median_abs_err"])
    # (an error the JSON rounds to the bound itself, -0.25 from -0.2500004,
    # may fall on either side of it in the sweep's own count)
    lo = sum(e < WITHIN - 1e-5 for e, _ in errs) / len(errs)
    hi = sum(e <= WITHIN + 1e-5 for e, _ in errs) / len(errs)
    check(f"{t}: model.within_25", lo - 1e-4 <= fit["within_25"] <= hi + 1e-4,
          f"{fit['within_25']}, rows say {lo} to {hi}")
    worst = max(errs, key=lambda x: x[0])[1]
    label = "x".join(str(d) for d in (worst["shape"] if worst["batch"] > 1 else worst["shape"][1:]))
    check(f"{t}: model.worst", fit["worst"] and fit["worst"]["shape"] == label and
          close(fit["worst"]["model_err"], worst["model_err"]), f"{fit['worst']}, rows say {label}")
    return fit


def check_kernels_for(gemmcli, t, results):
    """`kernels --for` on the same device picks the same kernel with the
    same estimate."""
    ran = [r for r in results if r["model_ms"] is not None]
    step = max(1, len(ran) // KERNELS_FOR)
    for r in ran[::step][:KERNELS_FOR]:
        shape = "x".join(map(str, r["shape"]))
        p = subprocess.run([gemmcli, "kernels", "--for", shape, "--dtype", t, "--json"],
                           capture_output=True, text=True, timeout=60)
        check(f"{t} {shape}: kernels --for", p.returncode == 0, p.stderr)
        if p.returncode != 0:
            continue
        est = json.loads(p.stdout)
        check(f"{t} {shape}: kernels --for picks the sweep's kernel", est["auto"] == r["kernel"],
              f"{est['auto']} against {r['kernel']}")
        # (auto may take another signature than the operands', f32 for f16 say;
        # the sweep times converting the operands for it, not the result)
        ms = [c["ms"] - c["result_convert_ms"] for c in est["candidates"]
              if c["kernel"] == r["kernel"] and c["sig"] == est["auto_sig"]]
        check(f"{t} {shape}: kernels --for's estimate", len(ms) == 1 and close(ms[0], r["model_ms"]),
              f"{ms} against {r['model_ms']} ({est['device']})")


def check_log(t, log, fit):
    part = log.split(f"\nsweep mul {t} on ", 1)
    check(f"{t}: the printed summary", len(part) == 2, "no 'sweep mul TYPE on' line")
    if len(part) != 2:
        return
    body = part[1].split("\nsweep mul ", 1)[0]
    check(f"{t}: the worst shapes show the model", re.search(r"auto ms +cuBLAS ms +% +model ms +"
                                                             r"model err", body), body[:400])
    line = re.search(r"^auto's model: median error (\d+)% over (\d+) shapes, (\d+)% of them "
                     r"within \+-25%; the largest ([+-]\d+)% at (\S+) \((\S+): model ([\d.]+) ms, "
                     r"measured ([\d.]+) ms\)$", body, re.M)
    check(f"{t}: the model's line", line is not None, body[-600:])
    if line is None or fit is None:
        return
    check(f"{t}: the model's line agrees with the JSON",
          int(line[1]) == round(100 * fit["median_abs_err"]) and int(line[2]) == fit["shapes"] and
          line[5] == fit["worst"]["shape"], f"{line[0]} against {fit}")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    gemmcli, prefix, log_path, types = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3], \
        sys.argv[4:]
    if not os.path.exists(f"{prefix}-sweep-{types[0]}.csv"):
        print(f"skipped: no sweep output at {prefix}-sweep-{types[0]}.csv "
              "(bench --sweep runs on a GPU)")
        return 0
    with open(log_path) as f:
        log = "\n" + f.read()
    for t in types:
        with open(f"{prefix}-sweep-{t}.csv", newline="") as f:
            reader = csv.DictReader(f)
            check(f"{t}: CSV columns", reader.fieldnames == CSV_COLUMNS, reader.fieldnames)
            rows = list(reader)
        with open(f"{prefix}-sweep-{t}.json") as f:
            doc = json.load(f)
        check_rows(t, rows, doc["results"])
        fit = check_fit(t, doc)
        if t in ("f32", "f16", "bf16", "f64"):
            check_kernels_for(gemmcli, t, doc["results"])
        check_log(t, log, fit)
    return check.summary("sweep-model")


if __name__ == "__main__":
    sys.exit(main())
