#!/bin/sh
# Text-format speed, whole process on one core (taskset -c 0), gemmcli
# against NumPy on the same files, best of RUNS (default 3):
#   .csv.gz -> .npy   gemmcli convert   vs np.loadtxt + np.save
#   .npy -> .csv.gz   gemmcli convert   vs np.savetxt(fmt='%.9g')
#   .csv -> .npy      gemmcli convert, as MB/s of text
# then on two cores (taskset -c 0,1), --threads 2 against --threads 1:
#   reading a one-member .csv.gz (as gzip writes it), gemmcli's own
#   .csv.gz (members that say their size), and .csv; writing .csv.gz.
# Text is read as float32 (--in-dtype f32), as np.loadtxt is told to.
# A benchmark, not a test: it prints figures and fails only if a command does.
#   tests/bench_formats.sh [./gemmcli] [N]      (N x N float32, default 2048)
set -eu
bin=$(cd "$(dirname "${1:-./gemmcli}")" && pwd)/$(basename "${1:-./gemmcli}")
n=${2:-2048}
runs=${RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/gemmcli-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work"
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"

python3 - "$n" <<'EOF'
import gzip, sys
import numpy as np
n = int(sys.argv[1])
a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
np.save("a.npy", a)
np.savetxt("a.csv", a, fmt="%.9g", delimiter=",")
with open("a.csv", "rb") as f, gzip.open("a.csv.gz", "wb", compresslevel=6) as g:
    g.write(f.read())
EOF

# best SECONDS of $runs runs of the command
best() {
    b=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        t0=$(date +%s%N)
        "$@" >/dev/null
        t1=$(date +%s%N)
        t=$(( (t1 - t0) / 1000 ))
        if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
        i=$((i + 1))
    done
    awk -v us="$b" 'BEGIN { printf "%.3f", us / 1e6 }'
}

# shellcheck disable=SC2086
g_load=$(best $pin "$bin" convert -q --in-dtype f32 a.csv.gz -o g.npy)
# shellcheck disable=SC2086
n_load=$(best $pin python3 -c "import numpy as np
np.save('n.npy', np.loadtxt('a.csv.gz', delimiter=',', dtype=np.float32))")
python3 -c "import numpy as np, sys
sys.exit(0 if np.array_equal(np.load('g.npy'), np.load('n.npy')) else 1)" ||
    { echo "bench_formats: gemmcli and NumPy read different values" >&2; exit 1; }
# shellcheck disable=SC2086
g_save=$(best $pin "$bin" convert -q a.npy -o g.csv.gz)
# shellcheck disable=SC2086
n_save=$(best $pin python3 -c "import numpy as np
np.savetxt('n.csv.gz', np.load('a.npy'), fmt='%.9g', delimiter=',')")
python3 -c "import numpy as np, sys
back = np.loadtxt('g.csv.gz', delimiter=',', dtype=np.float32)
sys.exit(0 if np.array_equal(back, np.load('a.npy')) else 1)" ||
    { echo "bench_formats: gemmcli's .csv.gz does not read back" >&2; exit 1; }
# shellcheck disable=SC2086
g_csv=$(best $pin "$bin" convert -q --in-dtype f32 a.csv -o c.npy)

# reading and writing with two threads against one, both on two cores
two=""
command -v taskset >/dev/null 2>&1 && two="taskset -c 0,1"
"$bin" convert -q a.npy -o own.csv.gz
scale() {   # scale LABEL FILE-OR-ARGS...: --threads 1 against 2 of one convert
    label=$1
    shift
    # shellcheck disable=SC2086
    t1=$(best $two "$bin" convert -q "$@" --threads 1)
    # shellcheck disable=SC2086
    t2=$(best $two "$bin" convert -q "$@" --threads 2)
    awk -v a="$t1" -v b="$t2" -v what="$label" \
        'BEGIN { printf "  %-34s %7.3fs %7.3fs %7.2fx\n", what, a, b, a / b }'
}

csv_mb=$(awk -v b="$(wc -c <a.csv)" 'BEGIN { printf "%.1f", b / 1e6 }')
gz_mb=$(awk -v b="$(wc -c <a.csv.gz)" 'BEGIN { printf "%.1f", b / 1e6 }')
out_mb=$(awk -v b="$(wc -c <g.csv.gz)" -v c="$(wc -c <n.csv.gz)" \
    'BEGIN { printf "%.1f MB (NumPy %.1f MB)", b / 1e6, c / 1e6 }')
echo "bench_formats: ${n}x${n} float32, one core, best of $runs, $(date +%Y-%m-%d)"
printf '  %-34s %8s %8s %8s\n' "" gemmcli NumPy speedup
awk -v g="$g_load" -v p="$n_load" -v what=".csv.gz ($gz_mb MB) -> .npy" \
    'BEGIN { printf "  %-34s %7.3fs %7.3fs %7.1fx\n", what, g, p, p / g }'
awk -v g="$g_save" -v p="$n_save" -v what=".npy -> .csv.gz" \
    'BEGIN { printf "  %-34s %7.3fs %7.3fs %7.1fx\n", what, g, p, p / g }'
echo "  .csv.gz written: $out_mb"
awk -v g="$g_csv" -v mb="$csv_mb" \
    'BEGIN { printf "  .csv (%s MB) -> .npy: %.3fs, %.0f MB/s of text, whole process\n",
             mb, g, mb / g }'
echo "two cores, --threads 1 against --threads 2, best of $runs"
printf '  %-34s %8s %8s %8s\n' "" "1 thread" "2" speedup
scale ".csv.gz (gzip, 1 member) -> .npy" --in-dtype f32 a.csv.gz -o t.npy
scale ".csv.gz (gemmcli's) -> .npy" --in-dtype f32 own.csv.gz -o t.npy
scale ".csv -> .npy" --in-dtype f32 a.csv -o t.npy
scale ".npy -> .csv.gz" a.npy -o t.csv.gz
