#!/usr/bin/env bash
# A hold-out set's programs captured one at a time by capture_two_ways.sh
# (both protocols), each whole or not at all, while a device call's time
# lasts: a program is started only while fewer than BUDGET_S seconds
# (default 330) have passed since this script began, since programs of
# milliseconds of GEMMs a step autotune for a minute or more each
# (bench/FIDELITY-real.md, hold-out set 34). On the GPU machine, from the
# repository root:
#   bench/gpu/capture_sets_timed.sh BUILD_DIR OUT_DIR NAME:PROGRAM ...
# Writes OUT_DIR/NAME.tgz for each program captured (its one/ and sep/
# captures.tgz and its log) and OUT_DIR/timed.log; the programs it did not
# start are named there as "skipped".
set -u
BUILD=$1 OUT=$2
shift 2
budget=${BUDGET_S:-330}
began=$(date +%s)
here=$(dirname "$(realpath "$0")")
for p in "$@"; do
  name=${p%%:*}
  elapsed=$(($(date +%s) - began))
  if [ "$elapsed" -ge "$budget" ]; then
    echo "$name skipped ($elapsed s gone of $budget)" | tee -a "$OUT/timed.log"
    continue
  fi
  work=$(mktemp -d)
  bash "$here/capture_two_ways.sh" "$BUILD" "$work" "$p" > "$work/capture.log" 2>&1
  tar czf "$OUT/$name.tgz" -C "$work" .
  echo "$name captured in $(($(date +%s) - began - elapsed)) s" | tee -a "$OUT/timed.log"
  rm -rf "$work"
done
