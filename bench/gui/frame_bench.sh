#!/usr/bin/env bash
# GUI frame-time benchmark (builds nothing): a synthetic run of N events
# (default 1,000,000) on 6 tracks, rendered under Xvfb (llvmpipe) at full
# zoom-out and at a mid zoom (1/100 of the run), plus the time to open it.
#
#   bench/gui/frame_bench.sh [BUILD_DIR=build] [EVENTS=1000000] [FRAMES=300]
#
# Use a Release build: the numbers of a sanitizer build mean little.
set -euo pipefail
build=${1:-build}
events=${2:-1000000}
frames=${3:-300}
gui="$build/app/gui/streamlens-gui"
gen="$build/app/gui/streamlens-gui-bench-db"
for exe in "$gui" "$gen"; do
  [[ -x "$exe" ]] || { echo "error: $exe not built (ninja -C $build streamlens-gui streamlens-gui-bench-db)" >&2; exit 2; }
done
command -v xvfb-run > /dev/null || { echo "error: xvfb-run is not installed" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/bench.db"
span_ns=$("$gen" "$db" "$events" | tee /dev/stderr | awk '/^span_ns/ {print $2}')

run_case() {  # name, script text
  local name=$1 script="$work/$1.txt"
  printf '%s\n' "$2" > "$script"
  echo "== $name"
  xvfb-run -a -s "-screen 0 1600x900x24" "$gui" --db "$db" --run 1 --size 1600x900 \
    --script "$script" --bench-frames "$frames" | sed 's/^bench: /  /'
}
# Mid zoom shows 1/100 of the run, from its middle.
span_us=$(( span_ns / 1000 ))
mid_start=$(( span_us / 2 ))
mid_end=$(( mid_start + span_us / 100 ))
run_case full-zoom-out "fit"
run_case mid-zoom "zoom $mid_start $mid_end"
