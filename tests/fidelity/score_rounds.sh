#!/usr/bin/env bash
# CTest fidelity.score.*: rescores committed H200 measurements with the
# current simulator (bench/fidelity/run.sh score) and fails when a scored
# program misses bench/FIDELITY.md's targets (check_targets.py).
#   score_rounds.sh SOURCE_DIR STREAMLENS MEASURED.db...
set -euo pipefail
src=${1:?source dir}
sl=${2:?streamlens binary}
shift 2
cd "$src"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
for db in "$@"; do
  name=$(basename "$db" .db)
  # round0 predates permute_behind_gemm (bench/fidelity/rounds/README.md).
  allow=()
  [ "$name" = round0 ] && allow=(--allow-missing permute_behind_gemm)
  bench/fidelity/run.sh score "$sl" "$db" "$work/$name.md" > "$work/$name.log" 2>&1 || {
    cat "$work/$name.log"; echo "$db: scoring failed"; rc=1; continue; }
  python3 tests/fidelity/check_targets.py "$work/$name.md" bench/fidelity/cases.txt "${allow[@]}" || {
    echo "report:"; sed -n '/^| program/,/^Mean/p' "$work/$name.md"; rc=1; }
done
exit $rc
