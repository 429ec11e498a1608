#!/usr/bin/env bash
# One device call for the whole GPU check (run from the repository root on the
# GPU machine, with the build dir carried): GPU tests, capture, benchmarks.
#   bench/gpu/device_check.sh BUILD_DIR OUT_DIR
set -u
BUILD=${1:-build}
OUT=${2:-${OUT:-/tmp/streamlens-out}}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 240 "$BUILD/tests/gpu_tests" 2>&1 | tee "$OUT/gpu_tests.log" | tail -40
timeout 60 "$BUILD/tests/cupti_tests" 2>&1 | tail -3
timeout 280 "$(dirname "$0")/run.sh" "$BUILD" "$OUT" 2>&1 | tail -60
# End to end through the CLI, when it was built too.
SL=$(find "$BUILD" -maxdepth 3 -type f -name streamlens -perm -u+x | head -1)
if [ -n "$SL" ]; then
  timeout 60 "$SL" run samples/small/two_gemms_two_streams.hlo --backend cuda --db "$OUT/e2e.db" \
    --warmup 1 --iterations 2 --results "$OUT/results.json" --json > "$OUT/run.json"; echo "streamlens run rc=$?"
  head -c 1500 "$OUT/run.json"; echo
  timeout 60 "$SL" capture --db "$OUT/e2e.db" -- python3 "$(dirname "$0")/torch_ref.py" capture_workload
  echo "streamlens capture rc=$?"
  timeout 30 "$SL" runs --db "$OUT/e2e.db"
fi
