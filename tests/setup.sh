#!/bin/sh
# Installs what building or testing gemmcli needs beyond the CUDA toolkit,
# when it is missing: Debian packages through apt-get (as root), NumPy from
# PyPI.  Usage: tests/setup.sh build|test|fuzz
set -eu
mode=${1:-build}

need_pkgs=""
have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/include/x86_64-linux-gnu/$1" ]; }

have_header zlib.h || need_pkgs="$need_pkgs zlib1g-dev"
have_header libdeflate.h || need_pkgs="$need_pkgs libdeflate-dev"
if [ "$mode" = test ] || [ "$mode" = fuzz ]; then
    command -v mandoc >/dev/null 2>&1 || need_pkgs="$need_pkgs mandoc"
    command -v clang >/dev/null 2>&1 || need_pkgs="$need_pkgs clang"
fi
if [ "$mode" = test ]; then
    # tests/check_svg.py renders bench's pictures with rsvg-convert.
    command -v rsvg-convert >/dev/null 2>&1 || need_pkgs="$need_pkgs librsvg2-bin"
    # tests/mpi_test.py runs mul as MPI ranks; make mpi builds gemmcli-mpi.so.
    command -v mpirun >/dev/null 2>&1 || need_pkgs="$need_pkgs openmpi-bin"
    command -v mpicc >/dev/null 2>&1 || need_pkgs="$need_pkgs libopenmpi-dev"
    # .csv.zst and .npy.zst load libzstd at run time; tests/zstd_test.py
    # checks them against the zstd tool
    command -v zstd >/dev/null 2>&1 || need_pkgs="$need_pkgs zstd"
    ldconfig -p 2>/dev/null | grep -q 'libzstd\.so\.1' || need_pkgs="$need_pkgs libzstd1"
    # the blas kernel loads OpenBLAS at run time (tests/cli_test.py)
    ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\.0' ||
        need_pkgs="$need_pkgs libopenblas0-pthread"
fi

if [ -n "$need_pkgs" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing$need_pkgs" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        # shellcheck disable=SC2086
        apt-get install -y -qq $need_pkgs >/dev/null
    else
        echo "setup: missing packages:$need_pkgs (install them, e.g. apt-get install$need_pkgs)" >&2
        exit 1
    fi
fi

if [ "$mode" = test ]; then
    # tests/sass_check.sh reads the kernels' SASS; a toolkit without
    # cuobjdump gets NVIDIA's from PyPI, in build/tools.
    cuda=${CUDA_HOME:-/usr/local/cuda}
    if [ ! -x "$cuda/bin/cuobjdump" ] && ! command -v cuobjdump >/dev/null 2>&1 &&
       [ ! -x build/tools/nvidia/cu13/bin/cuobjdump ]; then
        echo "setup: installing cuobjdump from PyPI (nvidia-cuda-cuobjdump, -nvdisasm)" >&2
        python3 -m pip install -q --target build/tools nvidia-cuda-cuobjdump \
            nvidia-cuda-nvdisasm >/dev/null 2>&1 ||
            echo "setup: could not install cuobjdump; the SASS check will say it skipped" >&2
    fi
    if ! python3 -c 'import numpy' >/dev/null 2>&1; then
        echo "setup: installing numpy from PyPI" >&2
        python3 -m pip install -q numpy >/dev/null 2>&1 ||
            python3 -m pip install -q --break-system-packages numpy
    fi
fi
exit 0
