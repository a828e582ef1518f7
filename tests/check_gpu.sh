#!/bin/sh
# Every GPU test, for a machine with a CUDA device.  Logs go to
# tests/out/gpu, and as one archive to $OUT when that is set; a short table
# comes last.
#
#   check_gpu.sh          make check-gpu: every kernel of every table at
#                         least once under memcheck and racecheck, the
#                         kernel tests at their small shapes, the CLI end to
#                         end on the GPU, tiles, ranks, the tuner, and a
#                         short bench, sweep and accuracy run; built to end
#                         well inside 8 minutes on an H100 or H200
#   check_gpu.sh full-kernels | full-race | full-bench
#                         make check-gpu-full PART=...: the exhaustive run in
#                         parts that each fit a 10-minute call: every kernel
#                         test shape, memcheck and racecheck over all the
#                         small shapes, the whole bench, a 200-shape sweep
#                         and the accuracy study
#
# The correctness steps run in three lanes side by side (the kernel tests,
# sanitizers and tiles; the CLI; the ranks and the tuner); the timed steps
# run alone afterwards, so that no other work shares the GPU while they
# measure.
set -u
cd "$(dirname "$0")/.." || exit 2
part=${1:-quick}
LOGS=$PWD/tests/out/gpu
rm -rf "$LOGS"
mkdir -p "$LOGS"
# Operands the steps write, apart from the logs that go back.
DATA=$(mktemp -d)
trap 'rm -rf "$DATA"' EXIT
B=build/tests
SAN=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
command -v compute-sanitizer >/dev/null 2>&1 && SAN=compute-sanitizer
MEMCHECK="$SAN --tool memcheck --error-exitcode 9"
RACECHECK="$SAN --tool racecheck --error-exitcode 9"

# step LANE NAME LIMIT COMMAND...: runs it under a time limit (seconds),
# logs to $LOGS/LANE/NAME.log and adds a row to the lane's table; each
# lane's logs go to $OUT as they grow, so that a call cut short still
# returns them.  auto consults the tune cache and this GPU's rates: each
# lane has a cache directory of its own, its rates measured as the lane
# starts (the timed lane's alone on the GPU).
step() {
    lane=$1 name=$2 limit=$3
    shift 3
    mkdir -p "$LOGS/$lane"
    start=$(date +%s)
    if XDG_CACHE_HOME="$LOGS/$lane/cache" timeout "$limit" "$@" >"$LOGS/$lane/$name.log" 2>&1; then
        res=ok
    elif [ $? -eq 124 ]; then
        res=TIMEOUT
    else
        res=FAILED
    fi
    secs=$(($(date +%s) - start))
    summary=$(grep -E "passed|ERROR SUMMARY|RACECHECK SUMMARY|skipped|^all |TOP/s|GB/s|done|^measured in" \
              "$LOGS/$lane/$name.log" | tail -n 1)
    printf '%-16s %-7s %4ss  %s\n' "$name" "$res" "$secs" "$summary" >> "$LOGS/rows-$lane"
    echo "== $name: $res ($secs s)" >&2
    [ -n "${OUT:-}" ] && tar czf "$OUT/gpu-$lane.tgz" -C "$LOGS" "$lane" 2>/dev/null
    [ "$res" = ok ]
}

# Kernels: gpu_kernels' small shapes, every kernel once under each
# sanitizer, the edges edge_peel computes apart (past a full wave of tiles).
lane_kernels() {
    step k gpu-kernels 150 $B/gpu_kernels --small
    step k memcheck 150 $MEMCHECK $B/gpu_kernels --once
    step k racecheck 200 $RACECHECK $B/gpu_kernels --once
    step k memcheck-peel 60 $MEMCHECK $B/gpu_kernels --type f32 --kernel edge_peel \
        --shape 2183x2056x77
    # The mma_sync stages' 2-byte path (rows of an odd number of values):
    # the words at the operands' last values, stacks whose products start
    # mid-word; the raw areas and the slots they are shifted into.
    step k memcheck-odd 60 $MEMCHECK $B/gpu_kernels --type f16 --kernel mma_sync \
        --kernel mma_sync_128x128 --shape 1x1x1x1 --shape 3x129x263x77 --shape 2x130x63x131
    step k racecheck-odd 60 $RACECHECK $B/gpu_kernels --type f16 --kernel mma_sync \
        --kernel mma_sync_128x128 --shape 3x129x263x77
    # Tiles beyond device memory, through the CLI, and the float
    # arithmetics' errors (no timing read); here to even out the lanes.
    step k calibrate 60 ./gemmcli tune --calibrate
    step k tiled 150 python3 tests/tiled_gpu.py ./gemmcli
    step k accuracy 120 python3 tests/accuracy.py ./gemmcli --sizes 1024 --json "$LOGS/accuracy.json"
}

# mul as MPI ranks, each on a GPU (sharing the GPUs there are), and the
# tuner.
lane_ranks() {
    step m calibrate 60 ./gemmcli tune --calibrate
    step m mpi-gpu 240 python3 tests/mpi_test.py ./gemmcli --gpu
    step m tune-gpu 90 python3 tests/tune_gpu.py ./gemmcli
}

# The CLI: the host tests again with a device present, then the GPU's own.
lane_cli() {
    step c calibrate 60 ./gemmcli tune --calibrate
    step c cli 120 python3 tests/cli_test.py ./gemmcli
    step c hostile 90 python3 tests/hostile.py ./gemmcli
    step c cli-gpu 180 python3 tests/cli_gpu.py ./gemmcli
    step c ozaki-gpu 120 python3 tests/ozaki_test.py ./gemmcli --gpu
    # The tuner: every f32 candidate on its own operands and scratch C,
    # ragged stack.
    step c memcheck-tune 90 $MEMCHECK ./gemmcli tune 2x97x83x71
    # Operands copied to the device while read: page-locked slots filled
    # by several reading threads, float32 C order and a Fortran-order B.
    step c memcheck-upload 90 sh -c 'python3 -c "import numpy as np; r = np.random.default_rng(1); np.save(\"$1/ua.npy\", r.standard_normal((2900, 3100), np.float32)); np.save(\"$1/ub.npy\", np.asfortranarray(r.standard_normal((3100, 2950), np.float32)))" && $0 ./gemmcli mul "$1/ua.npy" "$1/ub.npy" -o "$1/uc.npy" --verify' "$MEMCHECK" "$DATA"
    # Tiles: small operands through the slots (C0, --verify), large ones
    # locked in place and written to the file tile by tile.
    step c memcheck-tiles 120 sh -c 'python3 -c "import numpy as np; r = np.random.default_rng(2); [np.save(\"$1/t%s.npy\" % n, r.standard_normal(s, np.float32)) for n, s in ((\"a\", (700, 900)), (\"b\", (900, 650)), (\"c\", (700, 650)), (\"la\", (4200, 4300)), (\"lb\", (4300, 4100)))]" && $0 ./gemmcli mul "$1/ta.npy" "$1/tb.npy" -o "$1/tx.npy" -c "$1/tc.npy" --beta 0.5 --verify --device-memory 4M && $0 ./gemmcli mul "$1/tla.npy" "$1/tlb.npy" -o "$1/ty.npy" --device-memory 40M' "$MEMCHECK" "$DATA"
    step c samples 60 sh -c 'sh samples/run.sh ./gemmcli && sh samples/pipeline.sh ./gemmcli'
}

# Timed, alone: one size a type against cuBLAS, auto on random shapes,
# the exact int64 kernel, the int8 tensor cores' integer products beside
# cuBLAS's int8, and the Ozaki modes beside cuBLAS.
lane_timed_quick() {
    step t calibrate 60 ./gemmcli tune --calibrate
    step t bench 150 ./gemmcli bench --op mul --sizes 4096,4097 --dtype f32,f16,bf16,f64,tf32,tf32x3 \
        --bench-out "$LOGS/bench"
    step t bench-transpose 60 ./gemmcli bench --op transpose --sizes 8192 \
        --bench-out "$LOGS/bench"
    step t transpose-rate 60 python3 tests/transpose_rate.py ./gemmcli
    step t sweep 180 ./gemmcli bench --sweep 10 --dtype f32,f16,f64 --bench-out "$LOGS/sweep"
    step t sweep-model 60 python3 tests/sweep_check.py ./gemmcli "$LOGS/sweep" "$LOGS/t/sweep.log" \
        f32 f16 f64
    step t i64-rate 60 python3 tests/i64_rate.py ./gemmcli
    step t int-rate 120 python3 tests/int_rate.py ./gemmcli
    step t ozaki-rate 90 python3 tests/ozaki_rate.py ./gemmcli
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$LOGS/device.txt" 2>&1
begin=$(date +%s)
case $part in
quick)
    lane_kernels &
    lane_cli &
    lane_ranks &
    wait
    lane_timed_quick
    lanes="k c m t"
    ;;
full-kernels)
    # Every shape of every table; the sanitizers over the small ones.
    step k gpu-kernels-all 420 $B/gpu_kernels
    step k memcheck-small 150 $MEMCHECK $B/gpu_kernels --small
    lanes=k
    ;;
full-race)
    # racecheck over every small shape, a type at a time, and edge_peel's.
    for t in f32 tf32 tf32x3 f16 bf16 f64 i64; do
        step k "racecheck-$t" 110 $RACECHECK $B/gpu_kernels --small --op mul --type "$t"
    done
    step k racecheck-transpose 60 $RACECHECK $B/gpu_kernels --small --op transpose
    step k racecheck-peel 90 $RACECHECK $B/gpu_kernels --type f32 --kernel edge_peel \
        --shape 2183x2056x77
    lanes=k
    ;;
full-bench)
    # auto's table goes to the logs; kernels/auto_table.c stays as it is.
    step t calibrate 60 ./gemmcli tune --calibrate
    step t bench-all 330 ./gemmcli bench --bench-out "$LOGS/bench" \
        --auto-table "$LOGS/auto_table.c"
    step t sweep-200 150 ./gemmcli bench --sweep 200 --bench-out "$LOGS/sweep"
    step t sweep-model 60 python3 tests/sweep_check.py ./gemmcli "$LOGS/sweep" \
        "$LOGS/t/sweep-200.log" f32
    step t i64-rate 60 python3 tests/i64_rate.py ./gemmcli
    step t int-rate 120 python3 tests/int_rate.py ./gemmcli
    step t ozaki-rate 90 python3 tests/ozaki_rate.py ./gemmcli
    step t transpose-rate 60 python3 tests/transpose_rate.py ./gemmcli
    step t accuracy 240 python3 tests/accuracy.py ./gemmcli --json "$LOGS/accuracy.json"
    lanes=t
    ;;
*)
    echo "usage: check_gpu.sh [quick | full-kernels | full-race | full-bench]" >&2
    exit 2
    ;;
esac

# This GPU's rates, the bench's tables, the sweep's, the int64 rate and
# the errors, then one row a step.
[ -f "$LOGS/t/calibrate.log" ] && cat "$LOGS/t/calibrate.log"
for f in "$LOGS"/t/bench.log "$LOGS"/t/bench-transpose.log "$LOGS"/t/bench-all.log; do
    [ -f "$f" ] && grep -v '^bench:' "$f"
done
for f in "$LOGS"/t/sweep.log "$LOGS"/t/sweep-200.log; do
    [ -f "$f" ] && grep -v '^sweep:' "$f"
done
[ -f "$LOGS/t/i64-rate.log" ] && tail -n 1 "$LOGS/t/i64-rate.log"
[ -f "$LOGS/t/transpose-rate.log" ] && cat "$LOGS/t/transpose-rate.log"
for f in "$LOGS"/k/accuracy.log "$LOGS"/t/accuracy.log; do
    [ -f "$f" ] && grep -v '^accuracy:' "$f"
done
[ -f "$LOGS/t/ozaki-rate.log" ] && cat "$LOGS/t/ozaki-rate.log"
echo
echo "check-gpu ($part) on $(cat "$LOGS/device.txt"), $(date -u +%Y-%m-%d), $(($(date +%s) - begin)) s"
status=0
for l in $lanes; do
    [ -f "$LOGS/rows-$l" ] || continue
    cat "$LOGS/rows-$l"
    awk '$2 != "ok" { bad = 1 } END { exit bad }' "$LOGS/rows-$l" || status=1
done
[ -n "${OUT:-}" ] && rm -f "$OUT"/gpu-*.tgz && tar czf "$OUT/check-gpu.tgz" -C tests/out gpu 2>/dev/null
exit $status
