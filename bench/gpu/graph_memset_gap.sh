#!/usr/bin/env bash
# bench/gpu/graph_memset_gap.py in each mode under streamlens' CUPTI capture,
# then the report. Run on the GPU machine from the repository root:
#   bench/gpu/graph_memset_gap.sh BUILD_DIR OUT_DIR
set -u
BUILD=$1 OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
inject=$(realpath "$BUILD/libstreamlens_inject.so")
for mode in idle busy nomemset memcpy gemm gemm_busy; do
  CUDA_INJECTION64_PATH="$inject" STREAMLENS_CAPTURE_FILE="$OUT/graph_$mode.jsonl" \
    timeout 120 python3 "$(dirname "$0")/graph_memset_gap.py" "$mode" > "$OUT/graph_$mode.log" 2>&1
  echo "$mode rc=$?"
done
python3 "$(dirname "$0")/graph_update_gap_report.py" "$OUT"/graph_*.jsonl
