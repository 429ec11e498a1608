#!/usr/bin/env bash
# GUI scale benchmark (builds nothing): a synthetic run of N events opened
# headless under Xvfb (llvmpipe) at three zooms. Per zoom it prints the open
# time, the peak RSS of the whole process (/usr/bin/time), bytes per event,
# and the ui+layout CPU time per frame (p50/p99) apart from the rasteriser
# (frame time minus ui+layout: ImGui's OpenGL backend on llvmpipe).
#
#   bench/gui/scale_bench.sh [BUILD_DIR=build] [EVENTS=1000000] [FRAMES=200]
#
# Zooms: full (the whole run), mid (1/100 of it), deep (1/100000: a few
# events per track). Each zoom is a fresh process, so each peak RSS includes
# opening the run and computing its statistics. Run one at a time: a
# 10M-event run needs a few GB.
set -euo pipefail
build=${1:-build}
events=${2:-1000000}
frames=${3:-200}
gui="$build/app/gui/streamlens-gui"
gen="$build/app/gui/streamlens-gui-bench-db"
for exe in "$gui" "$gen"; do
  [[ -x "$exe" ]] || { echo "error: $exe not built (ninja -C $build streamlens-gui streamlens-gui-bench-db)" >&2; exit 2; }
done
command -v xvfb-run > /dev/null || { echo "error: xvfb-run is not installed" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is not installed (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/bench.db"
span_ns=$("$gen" "$db" "$events" | tee /dev/stderr | awk '/^span_ns/ {print $2}')
span_us=$(( span_ns / 1000 ))

run_case() {  # name, script text
  local name=$1 script="$work/$1.txt" out="$work/$1.out" timing="$work/$1.time"
  printf '%s\n' "$2" > "$script"
  xvfb-run -a -s "-screen 0 1600x900x24" /usr/bin/time -v -o "$timing" "$gui" --db "$db" --run 1 \
    --size 1600x900 --script "$script" --bench-frames "$frames" > "$out"
  local rss_kb
  rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$timing")
  echo "== $name"
  sed 's/^bench: /  /' "$out"
  awk -v kb="$rss_kb" -v n="$events" 'BEGIN { printf "  peak RSS %.0f MB, %.0f B/event\n", kb / 1024, kb * 1024 / n }'
}
mid_start=$(( span_us / 2 ))
run_case full "fit"
run_case mid "zoom $mid_start $(( mid_start + span_us / 100 ))"
run_case deep "zoom $mid_start $(( mid_start + (span_us / 100000 > 1 ? span_us / 100000 : 1) ))"
