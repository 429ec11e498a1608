#!/usr/bin/env bash
# Hold-out set 18 (bench/FIDELITY-real.md): each program captured in one
# process under def, notriton and cboff, then each setting in a process of
# its own, with a second default process (def2). On the GPU machine:
#   bench/gpu/holdout18_capture.sh BUILD_DIR OUT_DIR   (BUILD_DIR: libstreamlens_inject.so)
set -u
BUILD=$1 OUT=$2
date -u > $OUT/start.txt
python3 -c "import jax, inspect; print(jax.__version__, inspect.signature(jax.stages.Lowered.compile))"
P="rma:residual_mlp_adam_f32 ahg:attention_head_grad_bf16 elm:scan_elman_grad_bf16 ssi:fori_subspace_iteration mgr:scan_mixture_gate_readout"
sep=(); one=()
for p in $P; do IFS=: read -r n prog <<< "$p"
  one+=("${n}_L|$prog|large|def= notriton=xla_gpu_enable_triton_gemm:false cboff=xla_gpu_enable_command_buffer:")
  sep+=("${n}_L_def|$prog|large|" "${n}_L_notriton|$prog|large|--xla_gpu_enable_triton_gemm=false" "${n}_L_cboff|$prog|large|--xla_gpu_enable_command_buffer=" "${n}_L_def2|$prog|large|")
done
mkdir -p $OUT/h18one $OUT/h18sep
echo "== one process"; bash bench/gpu/capture_jax_one_process.sh "$BUILD" $OUT/h18one "${one[@]}" 2>&1 | grep -v "^total\|^d[rwx-]\|^-"
for d in /tmp/tmp.*/*.one/; do echo "== $d"; tail -8 "$d/capture.log"; cat "$d/settings.json" | grep -v '"module_\|autotune' | head -40; done 2>/dev/null
echo "== separate"; CAPTURE_ONLY=1 bash bench/gpu/capture_jax.sh "$BUILD" $OUT/h18sep "${sep[@]}" 2>&1 | grep -v "^total\|^d[rwx-]\|^-"
nvidia-smi --query-gpu=name,driver_version,clocks.current.sm --format=csv
date -u > $OUT/end.txt
