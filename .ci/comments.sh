#!/usr/bin/env bash
# Fails when a comment in a non-test Go file under pkg/, cmd/ or functions/
# cites an issue number ("issue 28", "Issue #14", "#14"). A comment says
# what the code does and why; an issue number only says where it came
# from, and ages: that history belongs in commit messages and docs/.
# Run by `make test` and `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='(//|/\*).*([Ii]ssues?[ -]?#?[0-9]+|(^|[^A-Za-z0-9_/&])#[0-9]+\b)'
if hits=$(grep -rnE --include='*.go' --exclude='*_test.go' -- "$pattern" pkg cmd functions); then
  echo "$hits" >&2
  echo "these comments cite issue numbers: say what and why instead (the history goes in the commit message or docs/)" >&2
  exit 1
fi
