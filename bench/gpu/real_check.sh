#!/usr/bin/env bash
# One device call for the real-program features (run from the repository root
# on the GPU machine with a CUDA build carried):
#   bench/gpu/real_check.sh BUILD_DIR OUT_DIR
# capture --xla-dump of JAX programs (linked steps, show), trace-driven
# simulation of each from its own capture, the same programs compiled with
# command buffers off (replay and the what-if on -> off), a profiler-range capture, suggest
# --verify cuda, and the GPU tests. Writes at most 8 files to OUT_DIR.
set -u
BUILD=${1:-build/release}
OUT=${2:-${OUT:-/tmp/streamlens-out}}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
SL="$BUILD/app/cli/streamlens"
DB="$OUT/real.db"
step() { echo; echo "=== $* ($(date -u +%T))"; }
step gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step gpu_tests
timeout 240 "$BUILD/tests/gpu_tests" --gtest_brief=1 > "$OUT/gpu_tests.log" 2>&1
echo "gpu_tests rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests ran" "$OUT/gpu_tests.log" | head -20
for spec in transformer_train_step_bf16:large mlp_train_step:large adam_update:large scan_rnn:large; do
  prog=${spec%%:*} size=${spec##*:}
  step "capture --xla-dump $prog ($size)"
  dump=$(mktemp -d)
  timeout 150 "$SL" capture --db "$DB" --name "$prog" --xla-dump "$dump" -- \
    python3 tests/corpus/jax/make_dumps.py --child-single "$prog" "$dump" --size "$size" 2>&1 | tail -3
  python3 -c 'import json,sys; print("JAX step under capture: %.3f ms" % json.load(open(sys.argv[1]))["jax_step_ms_median"])' "$dump/expected.json"
  timeout 60 "$SL" show last --db "$DB" | head -22
  module=$(ls "$dump"/*jit_*gpu_after_optimizations.txt | head -1)
  timeout 120 "$SL" run "$module" --backend sim --kernel-times last --db "$DB" --name "$prog replay" 2>&1 | head -4
  timeout 60 "$SL" compare last-1 last --db "$DB" 2>&1 | head -8
done
# Command buffers (bench/FIDELITY-real.md): each program again compiled with
# XLA's command buffers off; its own replay, and the what-if on -> off: the
# cb-off module with the cb-on capture's kernel times and --command-buffers off.
for prog in transformer_train_step_bf16 mlp_train_step scan_rnn; do
  step "capture --xla-dump $prog (large, command buffers off)"
  on_run=$("$SL" query --db "$DB" "select max(id) from runs where name='$prog'" | tail -1)
  dump=$(mktemp -d)
  XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout 150 "$SL" capture --db "$DB" --name "$prog nocb" \
    --xla-dump "$dump" -- python3 tests/corpus/jax/make_dumps.py --child-single "$prog" "$dump" --size large 2>&1 | tail -3
  timeout 60 "$SL" show last --db "$DB" | grep -E "median|steps" | head -3
  module=$(ls "$dump"/*jit_*gpu_after_optimizations.txt | head -1)
  timeout 120 "$SL" run "$module" --backend sim --kernel-times last --db "$DB" --name "$prog nocb replay" 2>&1 | head -4
  timeout 60 "$SL" compare last-1 last --db "$DB" 2>&1 | head -4
  timeout 120 "$SL" run "$module" --backend sim --kernel-times "$on_run" --command-buffers off --allow-tf32 \
    --db "$DB" --name "$prog what-if on->off" 2>&1 | head -4
  timeout 60 "$SL" compare last-2 last --db "$DB" 2>&1 | head -4
done

step "capture --capture-range cudaProfilerApi"
timeout 120 "$SL" capture --db "$DB" --name range --capture-range cudaProfilerApi -- python3 bench/gpu/profiler_range.py
"$SL" query --db "$DB" "select kind, count(*) from events where run_id=(select max(id) from runs) group by kind" 2>&1
step "suggest --verify cuda"
for s in two_gemms_one_stream two_gemms_two_streams; do
  timeout 150 "$SL" suggest samples/$s.hlo --verify cuda --repeats 3 --warmup 2 --iterations 5 --db "$OUT/suggest.db" 2>&1 | tail -12
done
step "cuda backend on a real dump (op by op today)"
timeout 120 "$SL" run tests/corpus/jax/large/mlp_train_step/module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt \
  --backend cuda --warmup 2 --iterations 5 --db "$OUT/suggest.db" 2>&1 | tail -5
ls -la "$OUT"
