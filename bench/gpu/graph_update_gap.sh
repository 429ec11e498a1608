#!/usr/bin/env bash
# bench/gpu/graph_update_gap.py under streamlens' CUPTI capture, both ways,
# with XLA's command buffer log (how often it recorded the graph again), then
# the report. Run on the GPU machine from the repository root:
#   bench/gpu/graph_update_gap.sh BUILD_DIR OUT_DIR PROGRAM ...
set -u
BUILD=$1 OUT=$2
shift 2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export XLA_PYTHON_CLIENT_PREALLOCATE=false TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=command_buffer_thunk=3
inject=$(realpath "$BUILD/libstreamlens_inject.so")
for prog in "$@"; do
  for mode in keep drop; do
    f="$OUT/${prog}_$mode"
    CUDA_INJECTION64_PATH="$inject" STREAMLENS_CAPTURE_FILE="$f.jsonl" \
      timeout 120 python3 "$(dirname "$0")/graph_update_gap.py" "$prog" "$mode" > "$f.log" 2>&1
    echo "$prog $mode rc=$? $(grep -c 'Updated command buffer' "$f.log") re-recordings," \
      "$(grep -c 'Execute command buffer' "$f.log") executions"
  done
done
python3 "$(dirname "$0")/graph_update_gap_report.py" "$OUT"/*.jsonl
