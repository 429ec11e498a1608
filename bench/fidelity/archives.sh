#!/usr/bin/env bash
# The fidelity captures' archives live in git history, not in the working
# tree: 31 of them came to 44 MB, and the device machine takes a working
# tree of at most 64 MiB. bench/fidelity/real/ARCHIVES.tsv names each one,
# its sha256 and a commit that holds it; .gitignore keeps restored copies out
# of the tree git tracks.
#   bench/fidelity/archives.sh restore [NAME ...]  every archive, or those named
#   bench/fidelity/archives.sh add PATH ...       commit new archives into history,
#                                                 then out of the tree, and list them
# Needs a clone with history (not --depth 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
real=bench/fidelity/real
list=$real/ARCHIVES.tsv
cmd=${1:-}
shift || true
case "$cmd" in
  restore)
    status=0
    while IFS=$'\t' read -r name sum commit; do
      [ "$name" = archive ] && continue
      if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF "$name"; then continue; fi
      if ! git cat-file -e "$commit:$real/$name" 2>/dev/null; then
        echo "$name: commit $commit is not in this clone (a shallow clone?)" >&2; status=1; continue
      fi
      git show "$commit:$real/$name" > "$real/$name"
      if [ "$(sha256sum "$real/$name" | cut -c1-64)" != "$sum" ]; then
        echo "$name: sha256 differs from $list" >&2; rm -f "$real/$name"; status=1; continue
      fi
      echo "$real/$name"
    done < "$list"
    exit $status ;;
  add)
    [ $# -gt 0 ] || { echo "usage: $0 add PATH ..." >&2; exit 2; }
    for p in "$@"; do
      case "$p" in "$real"/*.tar.xz) ;; *) echo "$p: not $real/*.tar.xz" >&2; exit 2 ;; esac
      git add -f "$p"
    done
    git commit -q -m "Fidelity archives: $(printf '%s ' "${@##*/}")"
    commit=$(git rev-parse --short=12 HEAD)
    for p in "$@"; do
      printf '%s\t%s\t%s\n' "$(basename "$p")" "$(sha256sum "$p" | cut -c1-64)" "$commit" >> "$list"
      git rm -q --cached "$p"
    done
    git add "$list"
    git commit -q -m "Fidelity archives out of the tree (in $commit, listed in ARCHIVES.tsv)"
    echo "in history at $commit; the files stay here, ignored" ;;
  *) echo "usage: $0 restore [NAME ...] | add PATH ..." >&2; exit 2 ;;
esac
