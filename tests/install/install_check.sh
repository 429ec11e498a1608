#!/usr/bin/env bash
# Installs the build into a temporary root (DESTDIR, prefix /usr) and uses
# the installed files from an unrelated directory: the binaries must find
# their device models, samples and plugins relative to the install prefix.
#   install_check.sh BUILD_DIR
set -euo pipefail
build=${1:?build dir}
root=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$root" "$work"' EXIT
DESTDIR=$root cmake --install "$build" --prefix /usr >/dev/null
prefix=$root/usr
bin=$prefix/bin/streamlens
share=$prefix/share/streamlens

for f in "$bin" "$prefix/lib/streamlens/libstreamlens_sqlite.so" "$share/devices/h200.json" \
         "$share/samples/two_gemms_one_stream.hlo" "$prefix/share/doc/streamlens/store.md" \
         "$prefix/share/man/man1/streamlens.1.gz"; do
  [ -e "$f" ] || { echo "not installed: ${f#"$root"}" >&2; exit 1; }
done

# CUDA builds: the backend plugin goes with the binary, and the installed binary loads CUDA only on demand.
if [ -e "$build/libstreamlens_cuda.so" ]; then
  [ -e "$prefix/lib/streamlens/libstreamlens_cuda.so" ] || { echo "not installed: /usr/lib/streamlens/libstreamlens_cuda.so" >&2; exit 1; }
  if ldd "$bin" | grep -qE 'lib(cudart|cublasLt|nccl|cupti)\.so'; then echo "installed binary links CUDA" >&2; exit 1; fi
  # Prove a cuda run loads the installed plugin, not the build's: break it, and the loader names it.
  plugin=$prefix/lib/streamlens/libstreamlens_cuda.so
  mv "$plugin" "$plugin.keep"
  echo "not a library" > "$plugin"
  set +e
  (cd "$work" && env -u STREAMLENS_CUDA_PLUGIN "$bin" run "$share/samples/small/two_gemms_one_stream.hlo" \
     --backend cuda --db cuda.db > /dev/null 2> cuda_err.txt)
  rc=$?
  set -e
  mv "$plugin.keep" "$plugin"
  if [ "$rc" -ne 3 ] || ! grep -q "$prefix/bin/../lib/streamlens/libstreamlens_cuda.so" "$work/cuda_err.txt"; then
    echo "the installed binary did not load $plugin (exit $rc):" >&2
    cat "$work/cuda_err.txt" >&2
    exit 1
  fi
fi

cd "$work"
# The installed samples and device models, from elsewhere, with nothing in the environment pointing back.
env -u STREAMLENS_ASSETS "$bin" run "$share/samples/two_gemms_one_stream.hlo" --backend sim --device h200 \
  --db run.db --json > run.json
grep -q '"makespan_ns"' run.json
[ "$(env -u STREAMLENS_ASSETS "$bin" query --db run.db 'select count(*) > 0 from events' | tail -1)" = 1 ]

# Prove the lookup goes to the installed copy, not the source tree: break it.
cp "$share/devices/h200.json" h200.keep
echo '{' > "$share/devices/h200.json"
set +e
env -u STREAMLENS_ASSETS "$bin" run "$share/samples/two_gemms_one_stream.hlo" --backend sim --device h200 \
  --db run.db > out.txt 2> err.txt
rc=$?
set -e
cp h200.keep "$share/devices/h200.json"
# The message names the file as found: PREFIX/bin/../share/streamlens/devices/h200.json.
if [ "$rc" -ne 1 ] || ! grep -q "^streamlens: error: $prefix/bin/../share/streamlens/devices/h200.json" err.txt; then
  echo "the installed binary did not read $share/devices/h200.json (exit $rc):" >&2
  cat err.txt >&2
  exit 1
fi

# The installed extension in the sqlite3 shell, when there is one.
if command -v sqlite3 >/dev/null; then
  n=$(sqlite3 -readonly run.db ".load $prefix/lib/streamlens/libstreamlens_sqlite" 'select count(*) from events;')
  [ "$n" -gt 0 ] || { echo "the installed extension saw no events" >&2; exit 1; }
fi
echo "installed under $root and ran from $work"
