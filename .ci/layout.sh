#!/usr/bin/env bash
# Fails when a Go package directory of the repository is not named in
# docs/architecture.md, so the architecture document cannot drift from the
# tree. Run by `make test` and `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r dir; do
  if ! grep -q -- "\`$dir\`" docs/architecture.md; then
    echo "docs/architecture.md does not name the package directory \`$dir\`" >&2
    bad=1
  fi
done < <(go list -f '{{.Dir}}' ./... | sed "s#^$PWD/##")
exit $bad
