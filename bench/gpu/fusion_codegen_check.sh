#!/usr/bin/env bash
# Generated fusion kernels on the GPU machine, in one call from the
# repository root:
#   bench/gpu/fusion_codegen_check.sh BUILD_DIR OUT_DIR
# 0. builds streamlens, the CUDA plugin and the test executables in BUILD_DIR
#    (configured if it is not); BUILD_FIRST=0 skips this, with the binaries
#    carried (app/cli/streamlens, libstreamlens_cuda.so, tests/{codegen,
#    nvrtc,gpu}_tests, CMakeCache.txt of BUILD_DIR);
# 1. the CPU tests of the fusion plans and NVRTC (codegen_tests,
#    nvrtc_tests), then the GPU tests (gpu_tests: every fusion path and
#    the cublas custom-call against the cpu backend);
# 2. for four JAX programs, back to back in one call: JAX's own step time
#    (make_dumps.py, median of its timed steps), then the replay of the
#    committed after-optimizations dump on the cuda backend, once with an
#    empty kernel cache (cold NVRTC) and once cached; prints the median
#    iteration, the ratio to JAX, the codegen_* counters and the 10 slowest
#    kernels (by instruction) of each program;
# 3. kernel by kernel against XLA (COMPARE_PROGRAMS, default the transformer
#    and the MLP): XLA's kernels captured from the JAX program, the same
#    module replayed on the cuda backend, the 10 largest per-instruction
#    differences of `streamlens compare` (full output in OUT/compare_*.txt).
#    Needs libstreamlens_inject.so in BUILD_DIR (carried with BUILD_FIRST=0).
set -u
BUILD=${1:-build/release}
OUT=${2:-${OUT:-/tmp/streamlens-out}}
mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
SL="$BUILD/app/cli/streamlens"
DB="$OUT/codegen.db"
step() { echo; echo "=== $* ($(date -u +%T))"; }
if [ "${BUILD_FIRST:-1}" = 1 ]; then
  step build
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTREAMLENS_TESTS=ON > "$OUT/build.log" 2>&1
  fi
  cmake --build "$BUILD" -j"$(nproc)" --target streamlens streamlens_cuda streamlens_inject codegen_tests nvrtc_tests gpu_tests \
    >> "$OUT/build.log" 2>&1
  rc=$?; echo "build rc=$rc"; grep -E "error|FAILED" "$OUT/build.log" | head -20
  [ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
fi
# Tests read the corpus from the source directory compiled into them: with a
# build carried from another checkout, that path points here.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
if [ -n "$src" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
for t in codegen_tests nvrtc_tests gpu_tests; do
  step "$t"
  [ "${SKIP_GPU_TESTS:-0}" = 1 ] && [ "$t" = gpu_tests ] && continue
  timeout 300 "$BUILD/tests/$t" --gtest_brief=1 > "$OUT/$t.log" 2>&1
  echo "$t rc=$?"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests ran|Failure|^ *(Which is|Expected)" "$OUT/$t.log" | head -40
done
cache=$(mktemp -d)
median_ms() {  # the median iteration's span (first start to last end) of the store's last run, in ms
  "$SL" query --db "$DB" --csv "select max(end_ns) - min(start_ns) from events
     where run_id = (select max(id) from runs) group by iteration" 2>/dev/null |
    python3 -c 'import sys
v=sorted(int(l) for l in sys.stdin.read().split() if l.strip().lstrip("-").isdigit())
print("%.3f" % (v[len(v)//2] / 1e6) if v else "nan")'
}
top_kernels() {  # the store's last run: the 10 instructions with the most GPU time per iteration
  "$SL" query --db "$DB" "select instruction, count(*) / 20 as kernels_per_iter,
     sum(dur_ns) / 20000.0 as us_per_iter from events
     where run_id = (select max(id) from runs) group by instruction order by us_per_iter desc limit 10" 2>&1 | head -12
}
counters() {
  "$SL" query --db "$DB" "select name, value from counters where run_id = (select max(id) from runs) and name like 'codegen%'" 2>&1 | tr '\n' ' '
}
printf '\n%-28s %10s %10s %10s %8s\n' program jax_ms cold_ms cached_ms ratio > "$OUT/table.txt"
for prog in transformer_train_step_bf16 mlp_train_step adam_update layernorm_gelu; do
  step "$prog"
  dump=$(mktemp -d)
  timeout 200 python3 tests/corpus/jax/make_dumps.py --child-single "$prog" "$dump" --size large 2>&1 | tail -2
  jax=$(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["jax_step_ms_median"])' "$dump/expected.json" 2>/dev/null || echo nan)
  module=$(ls tests/corpus/jax/large/$prog/*gpu_after_optimizations.txt | head -1)
  rm -rf "$cache"/*
  out=$(XDG_CACHE_HOME="$cache" timeout 200 "$SL" run "$module" --backend cuda --warmup 3 --iterations 20 --db "$DB" \
    --name "$prog cold" 2>&1); echo "$out" | tail -3
  cold=$(median_ms); echo "cold counters: $(counters)"
  out=$(XDG_CACHE_HOME="$cache" timeout 200 "$SL" run "$module" --backend cuda --warmup 3 --iterations 20 --db "$DB" \
    --name "$prog cached" 2>&1); echo "$out" | tail -3
  cached=$(median_ms); echo "cached counters: $(counters)"
  echo "slowest kernels (cached run):"; top_kernels
  ratio=$(python3 -c 'import sys; a,b=sys.argv[1:]; print("%.2fx" % (float(b)/float(a)) if a!="nan" and b!="nan" else "-")' "$jax" "$cached")
  printf '%-28s %10s %10s %10s %8s\n' "$prog" "$jax" "$cold" "$cached" "$ratio" >> "$OUT/table.txt"
  rm -rf "$dump"
done
cat "$OUT/table.txt"

# 3. Kernel by kernel against XLA: capture the JAX program (CUPTI, XLA's dump
#    beside it; the run is linked to the module that ran), replay that very
#    module on the cuda backend, and `streamlens compare` the two median
#    steps, which lines kernels up by instruction: the 10 largest per-
#    instruction differences. Skipped when too little of the device call's
#    600 s is left (SECONDS counts this script's own).
for prog in ${COMPARE_PROGRAMS-transformer_train_step_bf16 mlp_train_step}; do
  left=$((540 - SECONDS))
  step "kernel by kernel: $prog (${left} s left)"
  [ $left -lt 90 ] && { echo "skipped: too little time left"; continue; }
  cap=$(mktemp -d)
  mkdir -p "$cap/out"
  timeout $((left - 40)) "$SL" capture --db "$DB" --name "$prog xla" --xla-dump "$cap/dump" -- \
    python3 tests/corpus/jax/make_dumps.py --child-single "$prog" "$cap/out" --size large > "$cap/capture.log" 2>&1
  rc=$?; echo "capture rc=$rc"; [ $rc = 0 ] || { tail -5 "$cap/capture.log"; rm -rf "$cap"; continue; }
  xla=$("$SL" query --db "$DB" --csv "select max(id) from runs" | tail -1)
  module=$(ls "$cap"/dump/*gpu_after_optimizations.txt 2>/dev/null | head -1)
  [ -n "$module" ] || { echo "no after-optimizations module in the dump"; rm -rf "$cap"; continue; }
  XDG_CACHE_HOME="$cache" timeout 30 "$SL" run "$module" --backend cuda --warmup 3 --iterations 20 --db "$DB" \
    --name "$prog replay of the captured module" 2>&1 | tail -2
  ours=$("$SL" query --db "$DB" --csv "select max(id) from runs" | tail -1)
  "$SL" compare "$xla" "$ours" --db "$DB" > "$OUT/compare_$prog.txt" 2>&1
  sed -n '1,3p' "$OUT/compare_$prog.txt"
  grep -A 11 '^per-instruction deltas' "$OUT/compare_$prog.txt"
  rm -rf "$cap"
done
ls -la "$OUT"
