#!/usr/bin/env bash
# The executables name no CUDA library in their dynamic section (DT_NEEDED):
# CUDA is loaded only with the plugin libstreamlens_cuda.so, on demand.
#   needed_check.sh BINARY...
set -euo pipefail
needed() {
  if command -v readelf >/dev/null; then
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
  else
    objdump -p "$1" | awk '$1 == "NEEDED" {print $2}'
  fi
}
status=0
for bin in "$@"; do
  libs=$(needed "$bin")
  [ -n "$libs" ] || { echo "$bin: no DT_NEEDED entries read (not a dynamic executable?)" >&2; exit 1; }
  if cuda=$(grep -E '^lib(cuda|cudart|cublas|cublasLt|nccl|cupti|nvrtc|nvJitLink)\.so' <<<"$libs"); then
    echo "$bin needs CUDA libraries at start: $(tr '\n' ' ' <<<"$cuda")" >&2
    status=1
  fi
done
exit $status
