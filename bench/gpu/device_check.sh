#!/usr/bin/env bash
# One device call for the whole GPU check (run from the repository root on the
# GPU machine, with the Release build dir carried): GPU tests, multi-process
# mode, the fidelity measurements, the benchmark table, capture.
#   bench/gpu/device_check.sh BUILD_DIR OUT_DIR
# Writes at most 8 files to OUT_DIR (the device tool's limit).
set -u
BUILD=${1:-build}
OUT=${2:-${OUT:-/tmp/streamlens-out}}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
SL="$BUILD/app/cli/streamlens"
step() { echo; echo "=== $* ($(date -u +%T))"; }
step gpu
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step gpu_tests
SL_CUPTI_DEBUG=1 timeout 180 "$BUILD/tests/gpu_tests" --gtest_brief=1 > "$OUT/gpu_tests.log" 2>&1
echo "gpu_tests rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|error|cupti debug" "$OUT/gpu_tests.log" | head -40
timeout 60 "$BUILD/tests/cupti_tests" --gtest_brief=1 2>&1 | tail -3
# The backend through the plugin libstreamlens_cuda.so, as streamlens loads it.
[ -x "$BUILD/tests/plugin_tests" ] && timeout 60 "$BUILD/tests/plugin_tests" --gtest_brief=1 2>&1 | tail -3

step multi-process: one streamlens per GPU, then merge
tmp=$(mktemp -d)
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=29611 timeout 120 "$SL" run \
    samples/small/allgather_overlap_gemm.hlo --backend cuda --init random --seed 3 --db "$tmp/rank$r.db" \
    --results "$tmp/rank$r.json" > "$tmp/rank$r.out" 2>&1 &
done
wait
cat "$tmp/rank0.out" "$tmp/rank1.out" | tail -12
timeout 60 "$SL" run samples/small/allgather_overlap_gemm.hlo --backend cpu --init random --seed 3 --db "$tmp/cpu.db" \
  --results "$tmp/cpu.json" > /dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def devices(path):
    return {r["device"]: r for r in json.load(open(path))["devices"]}
def close(a, b):  # the sample's GEMM runs on cuBLAS: f32 tolerance, the rest exact
    return all(abs(x - y) <= 1e-5 * max(1.0, abs(x)) for x, y in zip(a, b)) and len(a) == len(b)
cpu = devices(f"{d}/cpu.json")
for r in (0, 1):
    try:
        got = devices(f"{d}/rank{r}.json")[r]
    except Exception as e:
        print(f"rank {r}: no results ({e})"); continue
    same = all(close(o["values"], c["values"]) for o, c in zip(got["outputs"], cpu[r]["outputs"]))
    print(f"rank {r}: results match the cpu backend's device {r}: {same}")
PY
timeout 60 "$SL" merge "$tmp/merged.db" "$tmp/rank0.db" "$tmp/rank1.db" && timeout 30 "$SL" show last --db "$tmp/merged.db" | head -20
cp "$tmp/merged.db" "$OUT/merged.db" 2>/dev/null

step "warm-up: a one-iteration cuda run without and with one (first launches' cost)"
for w in "--warmup 0" "--warmup 1"; do
  timeout 60 "$SL" run samples/two_gemms_one_stream.hlo --backend cuda --db "$tmp/warm.db" $w --json |
    python3 -c 'import json,sys; print("'"$w"': makespan %.1f us" % (json.load(sys.stdin)["makespan_ns"] / 1e3))'
done

step benchmark table
timeout 420 "$(dirname "$0")/run.sh" "$BUILD" "$OUT" 2>&1 | tail -30

step fidelity measurements
timeout 240 bench/fidelity/run.sh measure "$SL" "$OUT" > "$OUT/fidelity_measure.log" 2>&1
echo "fidelity measure rc=$?"; grep -E "^==|failed|error" "$OUT/fidelity_measure.log" | head -40

step capture
timeout 60 "$SL" capture --db "$tmp/capture.db" -- python3 "$(dirname "$0")/torch_ref.py" capture_workload
echo "streamlens capture rc=$?"
timeout 30 "$SL" runs --db "$tmp/capture.db"
timeout 30 "$SL" show last --db "$tmp/capture.db" | head -15
