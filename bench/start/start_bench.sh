#!/usr/bin/env bash
# Start-up cost of `streamlens`: wall time and peak RSS of commands that need
# no GPU (--version, check on a sample), the median of N runs each, timed by
# spawn_time.cc (posix_spawn + wait4's rusage of the child), and which CUDA
# libraries the binary loads at start (none: CUDA is the on-demand plugin
# libstreamlens_cuda.so). Target: <= 10 ms and <= 20 MB for non-GPU commands.
#   bench/start/start_bench.sh [STREAMLENS] [N]
set -euo pipefail
bin=${1:-build/release/app/cli/streamlens}
n=${2:-21}
here=$(cd "$(dirname "$0")" && pwd)
sample=$here/../../samples/two_gemms_one_stream.hlo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${CXX:-c++}" -std=c++20 -O2 -o "$tmp/spawn_time" "$here/spawn_time.cc"

echo "binary: $bin"
echo "CUDA libraries loaded at start: $(ldd "$bin" | grep -cE 'libcuda|libcublas|libnccl|libcupti') ($(ldd "$bin" | grep -oE 'lib(cudart|cublasLt|cublas|nccl|cupti)[^ ]*' | sort -u | tr '\n' ' '))"
printf '%-28s %s\n' "streamlens --version" "$("$tmp/spawn_time" "$n" "$bin" --version)"
printf '%-28s %s\n' "streamlens check SAMPLE" "$("$tmp/spawn_time" "$n" "$bin" check "$sample")"
