#!/usr/bin/env bash
# The injection library's periodic flush on the GPU machine (bench/RESULTS.md,
# 2026-12-07): a JAX program killed with SIGKILL mid-run under `capture`
# keeps what it recorded, and the flush costs the program's step nothing
# measurable (rounds of no capture, STREAMLENS_FLUSH_MS=1000 and =0, taking
# turns). From the repository root, BUILD holding a CUDA build:
#   bench/gpu/periodic_flush_check.sh BUILD [ROUNDS]
set -u
BUILD=$1 ROUNDS=${2:-5}
export STREAMLENS_ASSETS=$PWD/assets STREAMLENS_INJECT=$PWD/$BUILD/libstreamlens_inject.so
export XLA_PYTHON_CLIENT_PREALLOCATE=false LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
SL=$BUILD/app/cli/streamlens
[ -x "$SL" ] || SL=$BUILD/streamlens
db=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== a JAX loop killed (SIGKILL) 7 s after it started"
timeout 100 "$SL" capture --db "$db/k.db" --name killed -- \
  bash -c 'python3 bench/gpu/jit_step_loop.py 20 & p=$!; sleep 7; kill -9 $p; wait $p' 2>&1 | grep "captured"
"$SL" query "select count(*) as events, (max(end_ns) - min(start_ns)) / 1000000 as span_ms from events" --db "$db/k.db"
echo "== the loop's median step: no capture, and captured with the flush every 1000 ms and never"
for round in $(seq "$ROUNDS"); do
  echo "round $round, no capture: $(python3 bench/gpu/jit_step_loop.py 6 2>/dev/null | tail -1)"
  for ms in 1000 0; do
    echo "round $round, STREAMLENS_FLUSH_MS=$ms: $(STREAMLENS_FLUSH_MS=$ms timeout 100 "$SL" capture --db "$db/o.db" \
      --name "flush$ms" -- python3 bench/gpu/jit_step_loop.py 6 2>&1 | grep 'median step')"
  done
done
rm -rf "$db"
