#!/usr/bin/env bash
# `capture` of commands with several processes, and NVTX ranges opened before
# the program first uses CUDA (run from the repository root on the GPU
# machine with a CUDA build carried):
#   bench/gpu/capture_check.sh BUILD_DIR OUT_DIR [OLD_BUILD_DIR]
# OLD_BUILD_DIR: the same captures with an earlier build, for comparison.
set -u
BUILD=${1:-build/release}
OUT=${2:-${OUT:-/tmp/streamlens-out}}
OLD=${3:-}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
step() { echo; echo "=== $* ($(date -u +%T))"; }
gemms_per_run() {
  "$1" query --db "$2" "select r.id, r.name, r.status, count(e.name) as gemms from runs r left join events e
    on e.run_id = r.id and e.kind = 'gemm' group by r.id order by r.id" 2>&1
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for which in new old; do
  B=$BUILD; [ "$which" = old ] && B=$OLD
  [ -n "$B" ] || continue
  SL="$B/app/cli/streamlens" DB="$OUT/$which.db"
  step "$which: capture -- python3 bench/gpu/capture_processes.py (5, 4 and 6 GEMMs in three processes)"
  timeout 120 "$SL" capture --db "$DB" --name procs -- python3 bench/gpu/capture_processes.py 2>&1 | tail -6
  echo "rc=${PIPESTATUS[0]}"
  gemms_per_run "$SL" "$DB"
  step "$which: capture --capture-range nvtx:train -- python3 bench/gpu/nvtx_range.py torch_early"
  timeout 120 "$SL" capture --db "$DB" --name early --capture-range nvtx:train -- \
    python3 bench/gpu/nvtx_range.py torch_early 2>&1 | tail -3
  "$SL" query --db "$DB" "select name, kind, count(*) from events where run_id = (select max(id) from runs)
    group by name, kind" 2>&1 | cut -c1-110
done
SL="$BUILD/app/cli/streamlens" DB="$OUT/new.db"
step "capture --capture-range nvtx:train -- python3 bench/gpu/nvtx_range.py torch (range after CUDA start)"
timeout 120 "$SL" capture --db "$DB" --name late --capture-range nvtx:train -- python3 bench/gpu/nvtx_range.py torch \
  2>&1 | tail -2
step "capture --capture-range nvtx:jax_train -- python3 bench/gpu/nvtx_range.py jax"
timeout 120 "$SL" capture --db "$DB" --name jax --capture-range nvtx:jax_train -- python3 bench/gpu/nvtx_range.py jax \
  2>&1 | tail -2
step "capture --capture-range cudaProfilerApi -- python3 bench/gpu/profiler_range.py"
timeout 120 "$SL" capture --db "$DB" --name range --capture-range cudaProfilerApi -- python3 bench/gpu/profiler_range.py \
  2>&1 | tail -2
step "Ctrl-C at a terminal during capture (bench/gpu/ctrl_c_capture.py)"
timeout 150 python3 bench/gpu/ctrl_c_capture.py "$SL" "$DB" 2>&1 | tail -6
"$SL" query --db "$DB" "select r.name, r.status, count(e.name) as gemms from runs r join events e on e.run_id = r.id
  and e.kind = 'gemm' where r.name = 'ctrl-c' group by r.id" 2>&1
step "capture -- /bin/true (no CUDA)"
timeout 60 "$SL" capture --db "$DB" -- /bin/true; echo "rc=$?"
step cupti_tests
timeout 120 "$BUILD/tests/cupti_tests" --gtest_brief=1 2>&1 | tail -3
