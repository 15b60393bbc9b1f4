#!/usr/bin/env bash
# cdk.sh [--path] — installs the AWS CDK CLI (npm package aws-cdk, pinned to CDK_CLI_VERSION) into
# <repo>/.services/cdk-<version>/, once per version, and prints the path of its `cdk`. `make
# synth` and `make test` run that CLI against cdk.json, offline, as a user would from the
# repository root. With --path, only prints where it is (or would be). Needs Node.js and npm; installs them from Debian when they are missing.
#
# The CLI and the construct library (aws-cdk-go in infra/go.mod) are versioned apart; a CLI
# reads every cloud-assembly schema up to its own, so bump this when aws-cdk-go is bumped.

source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

CDK_CLI_VERSION=2.1148.1
CDK_HOME=$STATE_DIR/cdk-$CDK_CLI_VERSION
CDK_BIN=$CDK_HOME/node_modules/.bin/cdk
if [[ ${1:-} == --path ]]; then
  printf '%s\n' "$CDK_BIN"
  exit 0
fi

if [[ ! -x $CDK_BIN ]]; then
  command -v npm >/dev/null || apt_install nodejs npm
  say "cdk: installing aws-cdk@$CDK_CLI_VERSION from npm"
  mkdir -p "$CDK_HOME"
  # A directory of its own so `npm install` never touches the repository's files.
  printf '{"private":true}\n' >"$CDK_HOME/package.json"
  if ! npm install --prefix "$CDK_HOME" --no-audit --no-fund --loglevel=error \
    "aws-cdk@$CDK_CLI_VERSION" </dev/null >"$CDK_HOME/npm.log" 2>&1; then
    show_tail "$CDK_HOME/npm.log"
    rm -rf "$CDK_HOME"
    die "cdk: npm install aws-cdk@$CDK_CLI_VERSION failed"
  fi
fi
printf '%s\n' "$CDK_BIN"
