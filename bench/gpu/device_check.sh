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
