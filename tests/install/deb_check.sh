#!/usr/bin/env bash
# Builds the Debian package with CPack and checks it as dpkg would install
# it: the file list, the control fields, and a simulated run of an installed
# sample from the unpacked tree (gzip, to keep the test short). (A real `dpkg -i` needs root and a chroot;
# the unpacked tree has the same layout under /usr.)
#   deb_check.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v dpkg-deb >/dev/null || { echo "dpkg-deb not found: not a Debian system"; exit 0; }
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip > cpack.log 2>&1) ||
  { cat "$work/cpack.log" >&2; exit 1; }
deb=$(ls "$work"/pkg/streamlens_*.deb)

dpkg-deb -c "$deb" > "$work/files.txt"
for f in ./usr/bin/streamlens ./usr/lib/streamlens/libstreamlens_sqlite.so ./usr/share/streamlens/devices/h200.json \
         ./usr/share/streamlens/samples/two_gemms_one_stream.hlo ./usr/share/man/man1/streamlens.1.gz \
         ./usr/share/doc/streamlens/README.md; do
  grep -q " $f\$" "$work/files.txt" || { echo "not in the package: $f" >&2; exit 1; }
done
if [ -e "$build/libstreamlens_cuda.so" ]; then
  for f in ./usr/lib/streamlens/libstreamlens_cuda.so ./usr/lib/streamlens/libstreamlens_inject.so; do
    grep -q " $f\$" "$work/files.txt" || { echo "not in the package: $f" >&2; exit 1; }
  done
fi
if grep -vE ' \./usr(/|$)' "$work/files.txt" | grep -q .; then
  echo "the package installs outside /usr:" >&2; grep -vE ' \./usr(/|$)' "$work/files.txt" >&2; exit 1
fi

dpkg-deb -f "$deb" Package Version Architecture Depends > "$work/control.txt"
grep -q '^Package: streamlens$' "$work/control.txt" || { cat "$work/control.txt" >&2; exit 1; }
if grep -qiE '^Depends:.*(cuda|nccl|cublas|cupti)' "$work/control.txt"; then
  echo "the package depends on CUDA:" >&2; cat "$work/control.txt" >&2; exit 1
fi

dpkg-deb -x "$deb" "$work/root"
cd "$work"
env -u STREAMLENS_ASSETS "$work/root/usr/bin/streamlens" run \
  "$work/root/usr/share/streamlens/samples/two_gemms_one_stream.hlo" --backend sim --db run.db --json > run.json
grep -q '"makespan_ns"' run.json
echo "$(basename "$deb"): $(wc -l < files.txt) files, ran a sample from the unpacked tree"
