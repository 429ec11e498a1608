#!/usr/bin/env bash
# The host's pace from call to call: the same JAX programs, compiled with
# XLA's command buffers off (every kernel launched by the host), captured in
# CALLS separate processes in a row, interleaved. Run on the GPU machine from
# the repository root with a CUDA build; score the archive without a GPU with
# bench/fidelity/host_pace_spread.sh.
#   bench/gpu/host_pace_calls.sh BUILD_DIR OUT_DIR [CALLS]
set -u
BUILD=$1 OUT=$2 CALLS=${3:-4}
off=--xla_gpu_enable_command_buffer=
specs=()
for i in $(seq 1 "$CALLS"); do
  specs+=("kc${i}_L_cboff|calib_kernel_chain|large|$off" "mom${i}_L_cboff|mlp_momentum_small|large|$off"
          "mlpS${i}_S_cboff|mlp_train_step|small|$off")
done
CAPTURE_ONLY=1 bash "$(dirname "$0")/capture_jax.sh" "$BUILD" "$OUT" "${specs[@]}"
