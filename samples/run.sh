#!/bin/sh
# The main job on the bundled samples: C = A*B, checked against an FP64
# product, with the timing summary.  Without a GPU, gemmcli says so and runs
# the same job on its CPU kernel.
#   sh samples/run.sh [path/to/gemmcli [DIR]]
# C goes to DIR (make run: the build folder), else to a directory of this
# run's own, so that runs of several users or checkouts never share a file.
set -eu
gemmcli=${1:-./gemmcli}
dir=$(dirname "$0")
if [ $# -ge 2 ]; then
    mkdir -p "$2"
    outdir=$2
else
    outdir=$(mktemp -d "${TMPDIR:-/tmp}/gemmcli-sample.XXXXXX")
    trap 'rm -rf "$outdir"' EXIT
fi
out=$outdir/sample-c.npy

"$gemmcli" mul "$dir/a.npy" "$dir/b.npy" -o "$out" --verify --repeat 5
"$gemmcli" info "$out"
rm -f "$out"
