#!/usr/bin/env bash
# One device call for command buffers run as CUDA graphs (docs/architecture.md,
# "Command buffers on the GPU"), from the repository root on the GPU machine
# with a CUDA build carried:
#   bench/gpu/graph_check.sh [BUILD_DIR] [OUT_DIR]
# The GPU tests; JAX dumps replayed with --command-buffers off and on (results
# against each other and JAX's, the graph counters, the iteration times beside
# JAX's own step); the tracer's overhead on the 10,000-tiny-kernel program as
# one graph and launched kernel by kernel.
set -u
BUILD=${1:-build/release}
OUT=${2:-${OUT:-/tmp/streamlens-graphs}}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
SL="$BUILD/app/cli/streamlens"
DB="$OUT/graphs.db"
rm -f "$DB"
step() { echo; echo "=== $* ($(date -u +%T))"; }

step gpu_tests
timeout 300 "$BUILD/tests/gpu_tests" --gtest_filter='CommandBuffer*:GraphEdges*' > "$OUT/gpu_tests.log" 2>&1
echo "gpu_tests rc=$?"; grep -E "^\[ +(OK|FAILED|SKIPPED) |Failure|Expected|Which is|note:" "$OUT/gpu_tests.log" | head -40

# Largest difference of two --results files, relative to each leaf's largest magnitude.
compare() {
  python3 - "$1" "$2" <<'PY'
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = 0.0
for da, db in zip(a["devices"], b["devices"]):
    for la, lb in zip(da["outputs"], db["outputs"]):
        scale = max([1.0] + [abs(v) for v in la["values"] if isinstance(v, (int, float)) and math.isfinite(v)])
        for x, y in zip(la["values"], lb["values"]):
            if isinstance(x, (int, float)) and isinstance(y, (int, float)) and math.isfinite(x) and math.isfinite(y):
                worst = max(worst, abs(x - y) / scale)
print(f"max relative difference {worst:.3g}")
PY
}

for spec in transformer_train_step_bf16:large mlp_train_step:large transformer_train_step_bf16:small mlp_train_step:small; do
  prog=${spec%%:*} size=${spec##*:}
  dir=tests/corpus/jax/$size/$prog
  module=$dir/module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt
  for cb in off on; do
    step "$prog ($size) --command-buffers $cb"
    timeout 180 "$SL" run "$module" --backend cuda --command-buffers "$cb" --warmup 3 --iterations 20 \
      --db "$DB" --name "$prog $size cb $cb" --results "$OUT/$prog.$size.$cb.json" 2>&1 | head -12
    timeout 60 "$SL" show last --db "$DB" 2>/dev/null |
      grep -E "^run |command_buffer|records_in_graphs|graph_records|kernels_without|records_order" || true
  done
  echo "graphs on vs off: $(compare "$OUT/$prog.$size.off.json" "$OUT/$prog.$size.on.json")"
  echo "graphs on vs JAX: $(compare "$dir/expected.json" "$OUT/$prog.$size.on.json")"
  python3 -c 'import json,sys; print("JAX step: %.3f ms" % json.load(open(sys.argv[1]))["jax_step_ms_median"])' \
    "$dir/expected.json" 2>/dev/null || true
done

step "tracer overhead, 10,000 tiny kernels: one graph, then kernel by kernel"
tiny="$OUT/tiny_kernels.hlo"
awk 'BEGIN { n = 10000; print "HloModule tiny_kernels\n\nENTRY %main {\n  %a0 = f32[256]{0} parameter(0)";
  for (i = 1; i <= n; i++) printf "  %s%%a%d = f32[256]{0} add(%%a%d, %%a0)\n", (i == n ? "ROOT " : ""), i, i - 1;
  print "}" }' > "$tiny"
timeout 240 "$BUILD/bench/gpu/gpu_bench" tracer_graph "$tiny" 20 2>&1 | tail -3
timeout 240 "$BUILD/bench/gpu/gpu_bench" tracer_program "$tiny" 20 2>&1 | tail -3
rm -f "$tiny"
