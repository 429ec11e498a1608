#!/usr/bin/env bash
# Does pinning the host process hold XLA's host pace from one process to the
# next? (bench/FIDELITY-real.md, "The host's pace, pinned".) On the GPU
# machine, from the repository root:
#   bench/gpu/host_pace_affinity.sh ROUNDS PROGRAM[:XLA_FLAGS] ...
# For each round, each program and each CPU set (free: none; then each of
# PIN_SETS, default "4-7 5"), one process of bench/gpu/host_pace_probe.py,
# taking turns so that a drift of the machine falls on every CPU set alike.
# With INJECT=path/to/libstreamlens_inject.so each run is also captured
# (CUPTI), to see the tracer's own share. Prints one JSON line a process.
set -u
rounds=$1
shift
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
export JAX_COMPILATION_CACHE_DIR=${JAX_COMPILATION_CACHE_DIR:-$(mktemp -d)}
read -r -a pin_sets <<< "${PIN_SETS:-4-7 5}"
nproc; lscpu | grep -E "Model name|Socket|Thread|NUMA node|MHz" ; nvidia-smi topo -m | head -4
cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo "no cpufreq governor"
probe() {  # label cpuset program flags
  local label=$1 cpus=$2 prog=$3 flags=$4 pre=() env=()
  [ "$cpus" = free ] || pre=(taskset -c "$cpus")
  [ -z "${INJECT:-}" ] || env=(CUDA_INJECTION64_PATH="$INJECT" STREAMLENS_CAPTURE_FILE=/tmp/hpa_capture.jsonl)
  env "${env[@]}" XLA_FLAGS="$flags" timeout 120 "${pre[@]}" python3 bench/gpu/host_pace_probe.py \
    "$prog" "$label" 200 --size large 2> /tmp/hpa_err.log | grep '^{' || tail -3 /tmp/hpa_err.log
}
for spec in "$@"; do  # fill the compile cache
  IFS=: read -r prog flags <<< "$spec"
  probe warmup free "$prog" "$flags" > /dev/null
done
for r in $(seq "$rounds"); do
  for spec in "$@"; do
    IFS=: read -r prog flags <<< "$spec"
    for cpus in free "${pin_sets[@]}"; do
      probe "r$r cpus=$cpus flags=$flags" "$cpus" "$prog" "$flags"
    done
  done
done
