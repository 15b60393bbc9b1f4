#!/usr/bin/env bash
# Fails when a comment in a non-test Go file under pkg/, cmd/ or functions/
# cites an issue number ("issue 28", "Issue #14", "#14", or "issue" at the
# end of a comment line and the number on the next). A comment says what
# the code does and why; an issue number only says where it came from, and
# ages: that history belongs in commit messages and docs/.
# Run by `make test` and `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=(pkg cmd functions)
opts=(-rnE --include='*.go' --exclude='*_test.go')
one='(//|/\*).*([Ii]ssues?[ -]?#?[0-9]+|(^|[^A-Za-z0-9_/&])#[0-9]+\b)'
hits=$(grep "${opts[@]}" -- "$one" "${dirs[@]}" || true)
# "issue" ending one comment line, its number opening the next: grep -A1
# prints the next line as path-N-text.
split=$(grep "${opts[@]}" -A1 -- '(//|/\*).*\b[Ii]ssues?[[:space:]]*$' "${dirs[@]}" |
  grep -E -- '\.go-[0-9]+-[[:space:]]*//[[:space:]]*#?[0-9]' || true)
if [[ -n $hits || -n $split ]]; then
  [[ -z $hits ]] || echo "$hits" >&2
  [[ -z $split ]] || echo "$split" >&2
  echo "these comments cite issue numbers: say what and why instead (the history goes in the commit message or docs/)" >&2
  exit 1
fi
