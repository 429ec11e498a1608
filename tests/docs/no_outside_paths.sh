#!/usr/bin/env bash
# The repository stands alone: no tracked file may point at documents a user
# who clones it does not have (a sibling `shared` folder, a design file cited
# by section). Documentation lives in docs/.
set -euo pipefail
src=${1:?source dir}
cd "$src"
# The patterns are assembled so that this script does not match itself.
sibling='\.\.''/shared|/work''/shared'
design='DESIGN(\.md)? (section|§)|DESIGN''\.md'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files() { git ls-files -z; }
else
  files() { find . -type f -not -path './build/*' -not -path './.git/*' -print0; }
fi
hits=$(files | xargs -0 grep -InE "$sibling|$design" -- 2>/dev/null || true)
if [ -n "$hits" ]; then
  printf '%s\n' "$hits" >&2
  echo "these lines point outside the repository; point them at docs/ instead" >&2
  exit 1
fi
