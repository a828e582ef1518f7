#!/bin/sh
# Runs every test that needs no GPU, suite by suite, and prints one line a
# suite and a last line 'tests: N passed, M failed, K skipped' (suites).
# GPU suites run too: with no device they report themselves skipped.
set -u
cd "$(dirname "$0")/.." || exit 2
B=build/tests
mkdir -p tests/out
passed=0 failed=0 skipped=0

suite() {   # suite NAME COMMAND...: a suite passes when its command exits 0
    name=$1
    shift
    log=tests/out/$name.log
    if "$@" >"$log" 2>&1; then
        if grep -qE "(^|: )skipped:" "$log"; then
            skipped=$((skipped + 1))
            printf '%-18s skipped: %s\n' "$name" \
                "$(grep -m1 -E '(^|: )skipped:' "$log" | sed 's/.*skipped: //')"
        else
            passed=$((passed + 1))
            printf '%-18s ok    %s\n' "$name" "$(tail -n 1 "$log")"
        fi
    else
        failed=$((failed + 1))
        printf '%-18s FAILED (log: %s)\n' "$name" "$log"
        tail -n 25 "$log" | sed 's/^/    /'
    fi
}

export ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

suite formats         $B/test_formats
suite formats-asan    $B/test_formats_san
suite tune-cache      $B/test_tune_cache
suite tune-cache-asan $B/test_tune_cache_san
suite tiled           $B/test_tiled
suite plan            $B/test_plan
suite rates           $B/test_rates
suite verify          $B/test_verify
suite model-host      $B/test_model
suite replay          $B/test_replay
suite ozaki-crt       $B/test_ozaki
suite cli             python3 tests/cli_test.py ./gemmcli
suite cli-asan        python3 tests/cli_test.py $B/gemmcli_san
suite interop         python3 tests/interop.py ./gemmcli
suite matmul          python3 tests/matmul_test.py ./gemmcli
suite matmul-asan     python3 tests/matmul_test.py $B/gemmcli_san
suite ozaki           python3 tests/ozaki_test.py ./gemmcli
suite malformed       sh tests/malformed.sh ./gemmcli
suite threads         python3 tests/threads_test.py ./gemmcli --big
suite threads-asan    python3 tests/threads_test.py $B/gemmcli_san
suite hostile         python3 tests/hostile.py ./gemmcli
suite zstd            python3 tests/zstd_test.py ./gemmcli
suite zstd-asan       python3 tests/zstd_test.py $B/gemmcli_san
suite text            python3 tests/text_test.py ./gemmcli
suite safety          python3 tests/safety_test.py ./gemmcli
suite sass            sh tests/sass_check.sh
suite plots           sh -c "rm -rf tests/out/plots && $B/test_plot tests/out/plots &&
                             python3 tests/check_svg.py tests/out/plots"
suite model           python3 tests/model_test.py ./gemmcli
suite stage-docs      python3 tests/stage_docs.py ./gemmcli
suite layers          python3 tests/layers.py
suite json            python3 tests/json_test.py ./gemmcli
suite dry-run         python3 tests/plan_test.py ./gemmcli
suite man             sh -c 'mandoc -Tlint -W warning man/gemmcli.1 && echo "mandoc: 0 warnings"'
suite mpi             python3 tests/mpi_test.py ./gemmcli
suite samples         sh -c 'sh samples/run.sh ./gemmcli && sh samples/pipeline.sh ./gemmcli'
suite fuzz-short      sh tests/fuzz/run.sh 10
suite gpu-kernels     $B/gpu_kernels --small
suite tune-gpu        python3 tests/tune_gpu.py ./gemmcli

echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
