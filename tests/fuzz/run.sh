#!/bin/sh
# Builds the libFuzzer targets (clang, ASan+UBSan) into build/fuzz and runs
# each for SECONDS (default 60) on one core, from the committed seeds plus
# the corpus kept in fuzz-corpus/.  Exits nonzero on the first crash.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-"npy npz raw csv csv_gz zst decimal inflate_par"}
out=build/fuzz
mkdir -p "$out"
srcs="$(ls core/*.c formats/*.c)"
for t in $targets; do
    # shellcheck disable=SC2086
    clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I. -D_GNU_SOURCE -pthread -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" $srcs \
        -ldeflate -lz -lm -ldl
done
for t in $targets; do
    corpus=fuzz-corpus/$t
    mkdir -p "$corpus"
    seeds=tests/fuzz/seeds/$t
    [ -d "$seeds" ] || seeds=
    log=$out/fuzz_$t.log
    # shellcheck disable=SC2086
    if ! "$out/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
            -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="$out/fuzz_$t-" \
            "$corpus" $seeds >"$log" 2>&1; then
        grep -A30 -E '==[0-9]+==ERROR|deadly signal|runtime error' "$log" >&2 || tail -30 "$log" >&2
        echo "fuzz_$t: FAILED; the input is in $out/fuzz_$t-*" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    echo "fuzz_$t: ${seconds}s, $runs runs, clean" >&2
done
