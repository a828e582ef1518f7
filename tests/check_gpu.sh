#!/bin/sh
# Every GPU test in one go, for a machine with a CUDA device: the kernel
# tests at all shapes, compute-sanitizer memcheck and racecheck on small
# shapes, the CLI end to end on the GPU, the benchmark and the accuracy
# study (tests/accuracy.py).  Logs go to
# tests/out/gpu, and as one archive to $OUT when that is set; a short table
# comes last.
set -u
cd "$(dirname "$0")/.." || exit 2
LOGS=tests/out/gpu
rm -rf "$LOGS"
mkdir -p "$LOGS"
B=build/tests
SAN=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
command -v compute-sanitizer >/dev/null 2>&1 && SAN=compute-sanitizer
rows=""
status=0
# auto consults the tune cache: these runs see an empty one of their own,
# not the user's.
export XDG_CACHE_HOME="$PWD/$LOGS/xdg-cache"

# CHECK_GPU_STEPS="gpu-kernels cli-gpu" runs only the steps named.
step() {   # step NAME COMMAND...: runs it, logs to $LOGS/NAME.log, adds a row
    name=$1
    shift
    case " ${CHECK_GPU_STEPS:-$name} " in *" $name "*) ;; *) return 0 ;; esac
    start=$(date +%s)
    if "$@" >"$LOGS/$name.log" 2>&1; then res=ok; else res=FAILED; status=1; fi
    secs=$(($(date +%s) - start))
    summary=$(grep -E "passed|ERROR SUMMARY|skipped|^all " "$LOGS/$name.log" | tail -n 1)
    rows="$rows$(printf '%-22s %-7s %4ss  %s' "$name" "$res" "$secs" "$summary")
"
    echo "== $name: $res ($secs s)" >&2
    [ -n "${OUT:-}" ] && tar czf "$OUT/check-gpu.tgz" -C tests/out gpu
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$LOGS/device.txt" 2>&1
step gpu-kernels      $B/gpu_kernels
step memcheck         "$SAN" --tool memcheck --error-exitcode 9 $B/gpu_kernels --small
step racecheck        "$SAN" --tool racecheck --error-exitcode 9 $B/gpu_kernels --small
# The edges that edge_peel computes apart appear only past a full wave of tiles.
step memcheck-peel    "$SAN" --tool memcheck --error-exitcode 9 $B/gpu_kernels --type f32 --kernel edge_peel --shape 2183x2056x77
step racecheck-peel   "$SAN" --tool racecheck --error-exitcode 9 $B/gpu_kernels --type f32 --kernel edge_peel --shape 2183x2056x77
step cli              python3 tests/cli_test.py ./gemmcli
step hostile          python3 tests/hostile.py ./gemmcli
step cli-gpu          python3 tests/cli_gpu.py ./gemmcli
step tiled            python3 tests/tiled_gpu.py ./gemmcli
# mul as MPI ranks, each on a GPU (sharing the GPUs there are).
step mpi-gpu          python3 tests/mpi_test.py ./gemmcli --gpu
step tune-gpu         python3 tests/tune_gpu.py ./gemmcli
# The tuner: every f32 candidate on its own operands and scratch C, ragged stack.
step memcheck-tune    "$SAN" --tool memcheck --error-exitcode 9 ./gemmcli tune 2x97x83x71
# Operands copied to the device while read: page-locked slots filled by
# several reading threads, float32 C order and a Fortran-order B.
step memcheck-upload  sh -c 'python3 -c "import numpy as np; r = np.random.default_rng(1); np.save(\"$1/ua.npy\", r.standard_normal((2900, 3100), np.float32)); np.save(\"$1/ub.npy\", np.asfortranarray(r.standard_normal((3100, 2950), np.float32)))" && "$0" --tool memcheck --error-exitcode 9 ./gemmcli mul "$1/ua.npy" "$1/ub.npy" -o "$1/uc.npy" --verify' "$SAN" /tmp
# Tiles: small operands through the slots (C0, --verify), large ones
# locked in place and written to the file tile by tile.
step memcheck-tiles   sh -c 'python3 -c "import numpy as np; r = np.random.default_rng(2); [np.save(\"$1/t%s.npy\" % n, r.standard_normal(s, np.float32)) for n, s in ((\"a\", (700, 900)), (\"b\", (900, 650)), (\"c\", (700, 650)), (\"la\", (4200, 4300)), (\"lb\", (4300, 4100)))]" && "$0" --tool memcheck --error-exitcode 9 ./gemmcli mul "$1/ta.npy" "$1/tb.npy" -o "$1/tx.npy" -c "$1/tc.npy" --beta 0.5 --verify --device-memory 4M && "$0" --tool memcheck --error-exitcode 9 ./gemmcli mul "$1/tla.npy" "$1/tlb.npy" -o "$1/ty.npy" --device-memory 40M' "$SAN" /tmp
step samples          sh -c 'sh samples/run.sh ./gemmcli && sh samples/pipeline.sh ./gemmcli'
step bench            ./gemmcli bench --bench-out "$LOGS/bench" --auto-table "$LOGS/auto_table.c"
# auto against cuBLAS over 200 random shapes and the edge families.
step sweep            ./gemmcli bench --sweep 200 --bench-out "$LOGS/sweep"
# int64 products beyond FP64's exact range have no cuBLAS to compare with:
# the exact kernel's rate at 4096^3 through the CLI.
step i64-rate         python3 tests/i64_rate.py ./gemmcli
# The float arithmetics' errors on several kinds of data, against cuBLAS's.
step accuracy         python3 tests/accuracy.py ./gemmcli --json "$LOGS/accuracy.json"

[ -f "$LOGS/bench.log" ] && grep -v '^bench:' "$LOGS/bench.log"
[ -f "$LOGS/sweep.log" ] && grep -v '^sweep:' "$LOGS/sweep.log"
[ -f "$LOGS/i64-rate.log" ] && tail -n 1 "$LOGS/i64-rate.log"
[ -f "$LOGS/accuracy.log" ] && grep -v '^accuracy:' "$LOGS/accuracy.log"
echo
echo "check-gpu on $(cat "$LOGS/device.txt"), $(date -u +%Y-%m-%d)"
printf '%s' "$rows"
exit $status
