#!/usr/bin/env bash
# Captures real JAX programs with streamlens' CUPTI injection library and keeps
# XLA's dump of each beside its capture, so linking and trace-driven
# simulation can be developed and tested without a GPU. Run on the GPU machine
# from the repository root, with a CUDA build of streamlens:
#   bench/gpu/capture_jax.sh BUILD_DIR OUT_DIR 'NAME|PROGRAM|SIZE|XLA_FLAGS' ...
# PROGRAM and SIZE are those of tests/corpus/jax/make_dumps.py. For each spec:
# a plain run (JAX's own step time, no tracer: NAME/plain/expected.json), then
# a captured run (NAME/capture.jsonl: the raw records, importable with
# `streamlens import-capture`; NAME/dump: XLA's HLO and thunk dumps, and
# autotune_logs.txt, the candidates XLA's autotuner timed while compiling;
# NAME/expected.json: step times under the tracer). Writes OUT_DIR/captures.tgz
# after every spec, so a call stopped at its limit still returns what it took.
# CAPTURE_ONLY=1 skips the plain runs.
set -u
BUILD=$1 OUT=$2
shift 2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
inject=$(realpath "$BUILD/libstreamlens_inject.so")
# HOST_CPUS=LIST runs each process under `taskset -c LIST` (bench/FIDELITY-real.md,
# "The host's pace, pinned").
pin=()
[ -z "${HOST_CPUS:-}" ] || pin=(taskset -c "$HOST_CPUS")
work=$(mktemp -d)
for spec in "$@"; do
  IFS='|' read -r name prog size flags <<< "$spec"
  d="$work/$name"
  mkdir -p "$d/plain" "$d/dump"
  [ "${CAPTURE_ONLY:-0}" = 1 ] || XLA_FLAGS="$flags" timeout 120 "${pin[@]}" python3 tests/corpus/jax/make_dumps.py --child-single "$prog" "$d/plain" --size "$size" \
    > "$d/plain.log" 2>&1
  [ "${CAPTURE_ONLY:-0}" = 1 ] || echo "$name plain rc=$? $(cat "$d/plain/expected.json" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["jax_step_ms_median"])' 2>/dev/null) ms"
  CUDA_INJECTION64_PATH="$inject" STREAMLENS_CAPTURE_FILE="$d/capture.jsonl" \
    XLA_FLAGS="--xla_dump_to=$d/dump --xla_dump_hlo_as_text --xla_gpu_dump_autotune_logs_to=$d/dump/autotune_logs.txt $flags" \
    timeout 180 "${pin[@]}" python3 tests/corpus/jax/make_dumps.py --child-single "$prog" "$d" --size "$size" > "$d/capture.log" 2>&1
  echo "$name capture rc=$? $(wc -l < "$d/capture.jsonl" 2>/dev/null) records"
  find "$d/dump" -type f ! -name '*after_optimizations.txt' ! -name '*before_optimizations.txt' \
    ! -name '*thunk_sequence*.txt' ! -name autotune_logs.txt -delete
  rm -rf "$d"/dump/*/ 2>/dev/null
  tar czf "$OUT/captures.tgz" -C "$work" .
done
ls -la "$OUT"
