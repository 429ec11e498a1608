#!/usr/bin/env bash
# Captures real JAX programs as bench/gpu/capture_jax.sh does, but with every
# XLA setting of a program compiled and run in ONE process, taking turns
# (tests/corpus/jax/one_process_settings.py), so a what-if between settings
# is measured on one host pace rather than two processes' (which differ by up
# to a third on the GPU machine: bench/FIDELITY-real.md, "The host's pace").
# Run on the GPU machine from the repository root, with a CUDA build:
#   bench/gpu/capture_jax_one_process.sh BUILD_DIR OUT_DIR \
#     'PREFIX|PROGRAM|SIZE|SETTING=KEY:VALUE,... SETTING=...' ...
# For each spec and setting it writes OUT_DIR's captures.tgz with
# PREFIX_SETTING/{capture.jsonl,dump/,expected.json}, the layout that
# bench/fidelity/whatif_score.sh reads, and PREFIX.one/{settings.json,
# capture.log}: the options each compilation took, and the process's log.
set -u
BUILD=$1 OUT=$2
shift 2
here=$(dirname "$(realpath "$0")")
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
inject=$(realpath "$BUILD/libstreamlens_inject.so")
# HOST_CPUS=LIST runs each process under `taskset -c LIST` (bench/FIDELITY-real.md,
# "The host's pace, pinned").
pin=()
[ -z "${HOST_CPUS:-}" ] || pin=(taskset -c "$HOST_CPUS")
work=$(mktemp -d)
for spec in "$@"; do
  IFS='|' read -r prefix prog size settings <<< "$spec"
  one="$work/$prefix.one"
  mkdir -p "$one/all_dump"
  # shellcheck disable=SC2086  # the settings are one word each
  CUDA_INJECTION64_PATH="$inject" STREAMLENS_CAPTURE_FILE="$one/capture.jsonl" \
    XLA_FLAGS="--xla_dump_to=$one/all_dump --xla_dump_hlo_as_text --xla_gpu_dump_autotune_logs_to=$one/all_dump/autotune_logs.txt" \
    timeout 300 "${pin[@]}" python3 tests/corpus/jax/one_process_settings.py "$prog" "$one" --size "$size" $settings \
    > "$one/capture.log" 2>&1
  echo "$prefix capture rc=$? $(wc -l < "$one/capture.jsonl" 2>/dev/null) records"
  python3 "$here/split_capture.py" "$one/capture.jsonl" "$one/settings.json" "$work/$prefix" || continue
  for s in $settings; do
    name=${s%%=*}
    d="$work/${prefix}_$name"
    [ -d "$one/$name/dump" ] && mv "$one/$name/dump" "$d/dump"
    [ -f "$one/$name/expected.json" ] && mv "$one/$name/expected.json" "$d/expected.json"
    find "$d/dump" -type f ! -name '*after_optimizations.txt' ! -name '*before_optimizations.txt' \
      ! -name '*thunk_sequence*.txt' ! -name autotune_logs.txt -delete 2>/dev/null
    rm -rf "$d"/dump/*/ 2>/dev/null
  done
  rm -rf "$one/all_dump" "$one/capture.jsonl" "$one"/*/
  tar czf "$OUT/captures.tgz" -C "$work" .
done
ls -la "$OUT"
