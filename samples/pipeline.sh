#!/bin/sh
# gemmcli in a shell pipeline: a gzip-compressed CSV matrix is transposed,
# the transpose goes out as CSV on stdout, and awk sums each of its rows.
# Run from anywhere: sh samples/pipeline.sh [path/to/gemmcli]
set -eu
gemmcli=${1:-./gemmcli}
dir=$(dirname "$0")

# (without a GPU, gemmcli runs it on the CPU)
gzip -dc "$dir/b.csv.gz" |
    "$gemmcli" transpose - -o - --format csv --quiet |
    awk -F, '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "row %d: sum %.4f\n", NR, s }' |
    head -n 5
