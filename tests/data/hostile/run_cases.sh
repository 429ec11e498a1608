#!/usr/bin/env bash
# Runs every case of cases.txt through the streamlens CLI: each must exit
# with one of its listed codes (never a crash, a hang or exit 0 by accident),
# and the database recorded first must come out with every run intact.
# Usage: run_cases.sh STREAMLENS
set -u
streamlens=$1
here=$(cd "$(dirname "$0")" && pwd)
sample=$here/../../../samples/two_gemms_two_streams.hlo
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
db=$scratch/keep.db
"$streamlens" run "$sample" --backend sim --db "$db" --name kept >/dev/null || { echo "setup failed"; exit 1; }
before=$("$streamlens" runs --json --db "$db" | grep -c '"id"')
failures=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  codes=${line%% *}
  args=${line#* }
  args=${args//@DIR@/$here}
  args=${args//@DB@/$db}
  args=${args//@SAMPLE@/$sample}
  eval "set -- $args"
  timeout 60 "$streamlens" "$@" >"$scratch/out" 2>"$scratch/err"
  rc=$?
  if [[ ",$codes," != *",$rc,"* ]]; then
    echo "FAIL: exit $rc (want $codes): streamlens $args"
    head -c 400 "$scratch/err"; echo
    failures=$((failures + 1))
  fi
done <"$here/cases.txt"
after=$("$streamlens" runs --json --db "$db" | grep -c '"id"')
if (( after < before )) || ! "$streamlens" show 1 --db "$db" >/dev/null; then
  echo "FAIL: the database lost runs ($before before, $after after)"
  failures=$((failures + 1))
fi
# A damaged copy: inflated counts must neither crash nor balloon.
if command -v sqlite3 >/dev/null; then
  cp "$db" "$scratch/damaged.db"
  sqlite3 "$scratch/damaged.db" "UPDATE runs SET event_count = 1000000000000000"
  timeout 60 "$streamlens" show 1 --db "$scratch/damaged.db" >/dev/null 2>&1
  rc=$?
  if (( rc != 0 )); then echo "FAIL: show on an inflated event_count exits $rc"; failures=$((failures + 1)); fi
fi
echo "$failures failure(s)"
(( failures == 0 ))
