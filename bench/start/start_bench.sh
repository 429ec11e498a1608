#!/usr/bin/env bash
# Start-up cost of `streamlens`: wall time and peak RSS of commands that need
# no GPU (--version, check on a sample), the median of N runs each, and which
# CUDA libraries the binary loads at start. The baseline for loading the CUDA
# backend on demand (target: <= 10 ms and <= 20 MB for non-GPU commands).
#   bench/start/start_bench.sh [STREAMLENS] [N]
set -euo pipefail
bin=${1:-build/release/app/cli/streamlens}
n=${2:-21}
src=$(cd "$(dirname "$0")/../.." && pwd)
sample=$src/samples/two_gemms_one_stream.hlo
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

measure() {  # prints "median_ms median_rss_mb" of N runs of the command
  local times=() rss=()
  for _ in $(seq "$n"); do
    t0=$(date +%s%N)
    /usr/bin/time -o "$tmp" -f '%M' "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    times+=("$(( (t1 - t0) / 1000 ))")  # us, /usr/bin/time's own start included
    rss+=("$(awk '{print $1 / 1024}' <<<"$(tail -1 "$tmp")")")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v m=$(( (n + 1) / 2 )) 'NR == m {printf "%.1f ms", $1 / 1000}'
  printf '  '
  printf '%s\n' "${rss[@]}" | sort -n | awk -v m=$(( (n + 1) / 2 )) 'NR == m {printf "%.1f MB\n", $1}'
}

echo "binary: $bin"
echo "CUDA libraries loaded at start: $(ldd "$bin" | grep -cE 'libcuda|libcublas|libnccl|libcupti') ($(ldd "$bin" | grep -oE 'lib(cudart|cublasLt|cublas|nccl|cupti)[^ ]*' | sort -u | tr '\n' ' '))"
printf '%-28s %s\n' "streamlens --version" "$(measure "$bin" --version)"
printf '%-28s %s\n' "streamlens check SAMPLE" "$(measure "$bin" check "$sample")"
