#!/usr/bin/env bash
# Fails when docs/cli.md is not what scripts/gen-cli-docs makes from the
# binary's --help (a new option or command without its reference).
set -euo pipefail
src=${1:?source dir}; bin=${2:?streamlens binary}
if ! diff -u "$src/docs/cli.md" <("$src/scripts/gen-cli-docs" "$bin"); then
  echo "docs/cli.md is out of date: scripts/gen-cli-docs $bin > docs/cli.md" >&2
  exit 1
fi
