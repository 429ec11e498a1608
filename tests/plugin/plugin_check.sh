#!/usr/bin/env bash
# The CUDA backend is a plugin loaded on demand: the binary links no CUDA
# library, starts and simulates without one, and a cuda run without a
# loadable plugin fails with the loader's reason (exit 3).
#   plugin_check.sh STREAMLENS SAMPLE
set -euo pipefail
bin=${1:?streamlens} sample=${2:?sample}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

if ldd "$bin" | grep -E 'lib(cudart|cublas|cublasLt|nccl|cupti)\.so'; then
  echo "streamlens links CUDA libraries at start" >&2
  exit 1
fi
"$bin" --version >/dev/null

# No plugin where it is looked for: cuda fails clearly, auto falls back to the simulator.
set +e
STREAMLENS_CUDA_PLUGIN=$work/missing.so "$bin" run "$sample" --backend cuda --db a.db 2> err.txt
rc=$?
set -e
[ "$rc" -eq 3 ] || { echo "cuda without plugin: exit $rc, expected 3" >&2; cat err.txt >&2; exit 1; }
grep -q "the CUDA backend is not available" err.txt || { cat err.txt >&2; exit 1; }
STREAMLENS_CUDA_PLUGIN=$work/missing.so "$bin" run "$sample" --db a.db > out.txt 2> err.txt
grep -q "using the simulator" err.txt || { echo "auto did not fall back to sim" >&2; cat err.txt >&2; exit 1; }

# Every other path to CUDA goes through the same loader: suggest --verify, capture.
src=$(cd "$(dirname "$0")/../.." && pwd)
expect_no_plugin() {  # CMD...: exit 3 and the loader's reason
  set +e
  STREAMLENS_CUDA_PLUGIN=$work/missing.so "$@" > /dev/null 2> err.txt
  rc=$?
  set -e
  [ "$rc" -eq 3 ] || { echo "$*: exit $rc without the plugin, expected 3" >&2; cat err.txt >&2; exit 1; }
  grep -q "the CUDA backend is not available" err.txt || { echo "$*:" >&2; cat err.txt >&2; exit 1; }
}
expect_no_plugin "$bin" suggest "$sample" --verify cuda --db s.db
expect_no_plugin "$bin" capture --db c.db -- /bin/true
# Reading a capture needs no CUDA at all.
STREAMLENS_CUDA_PLUGIN=$work/missing.so "$bin" import "$src/tests/corpus/captures/mlp/capture.jsonl" --db i.db \
  > out.txt 2> err.txt || { echo "import without the plugin failed" >&2; cat err.txt >&2; exit 1; }
grep -q "imported" out.txt || { cat out.txt >&2; exit 1; }

# A plugin file the loader rejects (as when CUDA's libraries are missing): its reason is shown.
echo "not a library" > broken.so
set +e
STREAMLENS_CUDA_PLUGIN=$work/broken.so "$bin" run "$sample" --backend cuda --db a.db 2> err.txt
rc=$?
set -e
[ "$rc" -eq 3 ] || { echo "cuda with a broken plugin: exit $rc, expected 3" >&2; exit 1; }
grep -q "broken.so" err.txt || { cat err.txt >&2; exit 1; }
echo "ok"
