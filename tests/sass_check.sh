#!/bin/sh
# What the built kernels are made of, read from the objects, no GPU needed:
# each stage's main loop is the instruction its file claims (FFMA for the
# FP32 ladder, the CUDA-core 16-bit stages and the 16-bit gemv, DFMA for
# the CUDA-core FP64 stages and the FP64 gemv, DMMA for the FP64
# tensor-core stages (f64_dmma and its smaller tiles, f64_dmma_tiny), HMMA for the mma.sync
# stages (mma_sync, mma_tiny, mma_thin),
# HGMMA for every 16-bit stage built on kernels/hgemm/hgemm_hopper.cuh, IDP (dp4a)
# IMMA and IGMMA for the int8 stages (i8_dp4a, i8_imma, i8_igmma; i8_limbs and i8_ozaki run
# their products on i8_igmma); the vector
# transpose's 1-byte path: 16-byte accesses and PRMT),
# and ptxas reported no register spills for any kernel of the tables
# (build/kernels/*/*.o.ptxas, written by the Makefile).
#   tests/sass_check.sh          (prints 'sass: N passed, M failed')
set -u
cd "$(dirname "$0")/.." || exit 2
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
dump=""
for c in "$CUDA_HOME/bin/cuobjdump" "$(command -v cuobjdump 2>/dev/null)" \
         build/tools/nvidia/cu13/bin/cuobjdump; do
    [ -n "$c" ] && [ -x "$c" ] && { dump=$c; break; }
done
# cuobjdump runs nvdisasm, which sits beside it.
PATH=$(dirname "$dump" 2>/dev/null):$PATH
export PATH
if [ -z "$dump" ]; then
    echo "sass: skipped: no cuobjdump (tests/setup.sh test installs one from PyPI)"
    exit 0
fi
passed=0
failed=0
for obj in build/kernels/*.o build/kernels/*/*.o; do
    src=${obj#build/}
    src=${src%.o}.cu
    [ -f "$src" ] || continue
    case $src in
        # stream_k only plans for thread_8x16's kernel (in sgemm_17).
        *ref_dgemm*|*convert*|*transpose_*|*sgemm_18_*) want="" ;;
        *sgemm_*|*hgemm_00_*) want=FFMA ;;
        *hgemm_09_*) want=FFMA ;;
        *dgemm_02_*|*dgemm_07_*|*dgemm_08_*|*dgemm_09_*|*dgemm_10_*) want=DMMA ;;
        *dgemm_*) want=DFMA ;;
        *hgemm_01_*|*hgemm_12_*|*hgemm_13_*) want=HMMA ;;
        *hgemm_08_*) want=FFMA ;;
        *igemm_01_*) want=IDP ;;
        *igemm_02_*) want=IMMA ;;
        *igemm_03_*) want=IGMMA ;;
        # i8_limbs cuts digits, i8_ozaki residues; their products are
        # i8_igmma's IGMMA, above.
        *igemm_04_*|*igemm_05_*) want="" ;;
        *igemm_*) want=IMAD ;;
        *) want="" ;;
    esac
    case $want in
        IGMMA) ;;
        *) grep -q 'kernels/hgemm/hgemm_hopper.cuh"' "$src" && want=HGMMA ;;
    esac
    if [ -n "$want" ]; then
        n=$("$dump" --dump-sass "$obj" 2>/dev/null | grep -c "[[:space:]]$want[.[:space:]]")
        if [ "$n" -gt 0 ]; then
            passed=$((passed + 1))
            echo "sass: $src: $n $want"
        else
            failed=$((failed + 1))
            echo "sass: FAIL $src: no $want in its SASS" >&2
        fi
    fi
    log=$obj.ptxas
    case $src in *ref_dgemm*) continue ;; esac
    if [ -f "$log" ]; then
        spills=$(grep -E "[1-9][0-9]* bytes spill (stores|loads)" "$log" | head -n 1)
        if [ -n "$spills" ]; then
            failed=$((failed + 1))
            echo "sass: FAIL $src: ptxas spills registers: $spills" >&2
        else
            passed=$((passed + 1))
        fi
    fi
done
# The vector transpose's 1-byte path with both sides on 16-byte rows
# (vec_bytes_kernel<true, true>): 16-byte global loads and stores, the
# 4 x 4-byte turns as PRMT, 4-byte stores into the tile and 16-byte reads
# out of it, nothing in local memory.
obj=build/kernels/transpose/transpose_07_vec.o
if [ -f "$obj" ]; then
    sass=$("$dump" --dump-sass "$obj" 2>/dev/null |
           awk '/Function :/ { on = ($0 ~ /vec_bytes_kernelILb1ELb1E/) } on')
    missing=""
    for op in 'LDG\.E[.A-Z]*\.128' 'STG\.E[.A-Z]*\.128' 'PRMT' 'STS ' 'LDS\.128'; do
        printf '%s\n' "$sass" | grep -qE "[[:space:]]$op" || missing="$missing '$op'"
    done
    printf '%s\n' "$sass" | grep -qE "[[:space:]](LDL|STL)" && missing="$missing (local memory)"
    if [ -z "$missing" ]; then
        passed=$((passed + 1))
        echo "sass: kernels/transpose/transpose_07_vec.cu 1-byte path:" \
             "$(printf '%s\n' "$sass" | grep -c '[[:space:]]PRMT') PRMT, 16-byte loads and stores"
    else
        failed=$((failed + 1))
        echo "sass: FAIL kernels/transpose/transpose_07_vec.cu 1-byte path: missing$missing" >&2
    fi
fi
echo "sass: $passed passed, $failed failed ($dump)"
[ "$failed" -eq 0 ]
