#!/bin/sh
# Runs gemmcli on every malformed input of tests/make_malformed.py, and on
# the output-side failures, and checks for each: the documented exit status,
# a message on stderr that names the file and says what is wrong, nothing on
# stdout, and no output file (nor a temporary one) left behind.
#   tests/malformed.sh [./gemmcli]
set -u
bin=$(cd "$(dirname "${1:-./gemmcli}")" && pwd)/$(basename "${1:-./gemmcli}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gemmcli-malformed.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cases=$work/cases
out=$work/out
mkdir -p "$out"
if ! python3 "$here/make_malformed.py" "$cases" >/dev/null; then
    echo "malformed: cannot make the cases" >&2
    exit 1
fi

passed=0
failed=0
fail() {
    failed=$((failed + 1))
    echo "malformed: FAIL $*" >&2
}

# expect STATUS TEXT FILE_NAMED -- COMMAND...: runs COMMAND in $out.
expect() {
    want=$1 text=$2 named=$3
    shift 4
    (cd "$out" && "$@") >"$work/stdout" 2>"$work/stderr"
    rc=$?
    what="$(basename "$named"): gemmcli $(echo "$*" | sed "s|$bin ||; s|$cases/||g; s|$out/||g")"
    ok=1
    if [ "$rc" -ne "$want" ]; then
        fail "$what: exit $rc, expected $want: $(cat "$work/stderr")"
        ok=0
    elif ! grep -qF -- "$named" "$work/stderr"; then
        fail "$what: message does not name $named: $(cat "$work/stderr")"
        ok=0
    elif ! grep -qF -- "$text" "$work/stderr"; then
        fail "$what: message lacks '$text': $(cat "$work/stderr")"
        ok=0
    elif ! grep -q '^gemmcli: ' "$work/stderr"; then
        fail "$what: message does not start with 'gemmcli: '"
        ok=0
    elif [ -s "$work/stdout" ]; then
        fail "$what: wrote to stdout"
        ok=0
    elif [ -n "$(ls -A "$out")" ]; then
        fail "$what: left $(find "$out" -mindepth 1 | tr '\n' ' ')"
        ok=0
        rm -rf "${out:?}"/* "$out"/.[!.]*
    fi
    [ "$ok" = 1 ] && passed=$((passed + 1))
}

tab=$(printf '\t')
while IFS=$tab read -r file status text opts; do
    # shellcheck disable=SC2086
    expect "$status" "$text" "$cases/$file" -- \
        "$bin" convert -q $opts "$cases/$file" -o "$out/result.npy"
    # shellcheck disable=SC2086
    expect "$status" "$text" "$cases/$file" -- "$bin" info $opts "$cases/$file"
    # The same bytes through stdin must fail the same way, naming <stdin>.
    case $file in
    *.csv.gz | *.npy | *.csv | *.npz)
        fmt=${file#*.}
        # shellcheck disable=SC2086
        (cd "$out" && "$bin" convert -q --in-format "$fmt" $opts - -o "$out/stdin.npy" \
            <"$cases/$file") >/dev/null 2>"$work/stderr"
        rc=$?
        if [ "$rc" -ne "$status" ] || ! grep -q '<stdin>' "$work/stderr" ||
            [ -e "$out/stdin.npy" ]; then
            fail "$file through stdin: exit $rc: $(cat "$work/stderr")"
        else
            passed=$((passed + 1))
        fi
        ;;
    esac
done <"$cases/manifest.tsv"

good=$work/good.npy
python3 -c "import numpy as np; np.save('$good', np.ones((2, 3), np.float32))"
mkdir -p "$work/a_directory"
expect 3 "cannot open" "$work/missing.npy" -- "$bin" convert -q "$work/missing.npy" -o "$out/x.npy"
expect 3 "is a directory" "$work/a_directory" -- \
    "$bin" convert -q "$work/a_directory" -o "$out/x.npy"
expect 3 "inner dimensions" "$good" -- "$bin" mul -q --kernel cpu "$good" "$good" -o "$out/c.npy"
expect 4 "No such file or directory" "$out/no/such/dir/x.npy" -- \
    "$bin" convert -q "$good" -o "$out/no/such/dir/x.npy"
expect 4 "No space left" "/dev/full" -- "$bin" convert -q "$good" -o /dev/full --format npy
expect 4 "No space left" "/dev/full" -- "$bin" convert -q "$good" -o /dev/full --format csv.gz
expect 4 "is a directory" "$work/a_directory" -- \
    "$bin" convert -q "$good" -o "$work/a_directory" --format npy

# A reader that has gone away: stdout is a pipe closed at the far end.  The
# run ends as a Unix filter does, killed by SIGPIPE, saying nothing.
python3 - "$bin" "$good" >"$work/pipe.txt" 2>&1 <<'EOF'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([sys.argv[1], "convert", "-q", sys.argv[2], "-o", "-", "--format", "csv"],
                   stdout=w, stderr=subprocess.PIPE)
print(p.returncode, p.stderr.decode().strip())
EOF
if [ "$(cat "$work/pipe.txt")" = "-13 " ]; then
    passed=$((passed + 1))
else
    fail "closed stdout pipe: $(cat "$work/pipe.txt")"
fi

# A failed conversion must not clobber an existing output.
cp "$good" "$out/keep.npy"
"$bin" convert -q "$cases/ragged.csv" -o "$out/keep.npy" 2>/dev/null
if cmp -s "$good" "$out/keep.npy" && [ "$(ls -A "$out")" = keep.npy ]; then
    passed=$((passed + 1))
else
    fail "a failed convert changed or left files beside keep.npy: $(ls -A "$out")"
fi
rm -f "$out/keep.npy"

echo "malformed: $passed passed, $failed failed ($(wc -l <"$cases/manifest.tsv") malformed files)"
[ "$failed" -eq 0 ]
