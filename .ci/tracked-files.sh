#!/usr/bin/env bash
# Fails when git tracks a build artifact: an executable binary (ELF, Mach-O,
# PE) or any file over 5 MB. Run by `make test` and `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((5 * 1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
  [[ -f $f ]] || continue
  size=$(stat -c %s -- "$f")
  if ((size > limit)); then
    echo "tracked file over 5 MB: $f ($size bytes)" >&2
    bad=1
  fi
  magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
  case $magic in
  7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf | cafebabe | 4d5a*)
    echo "tracked executable binary: $f (magic $magic)" >&2
    bad=1
    ;;
  esac
done < <(git ls-files -z)
exit $bad
