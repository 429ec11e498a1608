#!/usr/bin/env bash
# A hold-out set's captures, each what-if measured two ways
# (bench/FIDELITY-real.md, hold-out set 18): each program in one process
# under def, notriton and cboff (bench/gpu/capture_jax_one_process.sh), then
# each setting in a process of its own, with a second default process (def2)
# (bench/gpu/capture_jax.sh). On the GPU machine, from the repository root:
#   bench/gpu/capture_two_ways.sh BUILD_DIR OUT_DIR NAME:PROGRAM ...
# (BUILD_DIR holds libstreamlens_inject.so). Writes OUT_DIR/one/captures.tgz
# and OUT_DIR/sep/captures.tgz. HOST_CPUS=LIST pins every process (taskset -c).
set -u
BUILD=$1 OUT=$2
shift 2
date -u > "$OUT/start.txt"
echo "HOST_CPUS=${HOST_CPUS:-} (each process under taskset -c HOST_CPUS when set)"
python3 -c "import jax, inspect; print(jax.__version__, inspect.signature(jax.stages.Lowered.compile))"
sep=(); one=()
for p in "$@"; do IFS=: read -r n prog <<< "$p"
  one+=("${n}_L|$prog|large|def= notriton=xla_gpu_enable_triton_gemm:false cboff=xla_gpu_enable_command_buffer:")
  sep+=("${n}_L_def|$prog|large|" "${n}_L_notriton|$prog|large|--xla_gpu_enable_triton_gemm=false"
        "${n}_L_cboff|$prog|large|--xla_gpu_enable_command_buffer=" "${n}_L_def2|$prog|large|")
done
mkdir -p "$OUT/one" "$OUT/sep"
echo "== one process"
bash bench/gpu/capture_jax_one_process.sh "$BUILD" "$OUT/one" "${one[@]}" 2>&1 | grep -v "^total\|^d[rwx-]\|^-"
for d in /tmp/tmp.*/*.one/; do echo "== $d"; grep -v "^W\|^I0" "$d/capture.log" | tail -8; done 2>/dev/null
echo "== separate processes"
CAPTURE_ONLY=1 bash bench/gpu/capture_jax.sh "$BUILD" "$OUT/sep" "${sep[@]}" 2>&1 | grep -v "^total\|^d[rwx-]\|^-"
nvidia-smi --query-gpu=name,driver_version,clocks.current.sm --format=csv
date -u > "$OUT/end.txt"
