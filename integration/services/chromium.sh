#!/usr/bin/env bash
# Headless Chromium for the status page test (integration/cli/cli_page_test.go):
# Debian's chromium package, installed once. Idempotent and quick when it
# is already there.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "chromium is missing: run 'apt-get install -y --no-install-recommends chromium' as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium
