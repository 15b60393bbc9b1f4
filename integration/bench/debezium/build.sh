#!/usr/bin/env bash
# build.sh — downloads the benchmark's Debezium runner dependencies (the jars of pom.xml, from
# Maven Central) and compiles BenchRunner.java against them. Idempotent: nothing is done again
# while pom.xml and BenchRunner.java are unchanged. `make bench` calls it; safe to run by hand.
#
# Result: <repo>/.services/bench-debezium/{lib/*.jar,classes/BenchRunner.class}; the benchmark
# (integration/bench) starts
#   java -Xms<heap> -Xmx<heap> -cp "<repo>/.services/bench-debezium/classes:<repo>/.services/bench-debezium/lib/*" BenchRunner ...
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$HERE/../../.." && pwd -P)
BENCH_DEBEZIUM_HOME=${BENCH_DEBEZIUM_HOME:-$REPO_ROOT/.services/bench-debezium}

# apt_install; its say/die are replaced below.
# shellcheck source=../../services/env.sh
source "$REPO_ROOT/integration/services/env.sh"

say() { printf '[bench-debezium] %s\n' "$*" >&2; }
die() {
  printf '[bench-debezium] ERROR: %s\n' "$*" >&2
  exit 1
}

# A fresh machine may have only the JRE that Kafka needs.
command -v javac >/dev/null || apt_install openjdk-17-jdk-headless
command -v mvn >/dev/null || apt_install maven

mkdir -p "$BENCH_DEBEZIUM_HOME"
exec 8>"$BENCH_DEBEZIUM_HOME/.lock"
flock -w 900 8 || die "another build.sh holds $BENCH_DEBEZIUM_HOME/.lock"

# Jars: again only when pom.xml changed.
pom_sum=$(sha256sum <"$HERE/pom.xml" | cut -d' ' -f1)
if [[ ! -f $BENCH_DEBEZIUM_HOME/lib/.pom.sha256 || $(<"$BENCH_DEBEZIUM_HOME/lib/.pom.sha256") != "$pom_sum" ]]; then
  say "downloading Debezium jars with Maven (pom.xml); the first time takes a few minutes"
  rm -rf "$BENCH_DEBEZIUM_HOME/lib.tmp"
  if ! mvn -B -q -f "$HERE/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$BENCH_DEBEZIUM_HOME/lib.tmp" </dev/null >"$BENCH_DEBEZIUM_HOME/maven.log" 2>&1; then
    tail -n 40 "$BENCH_DEBEZIUM_HOME/maven.log" >&2
    die "mvn dependency:copy-dependencies failed (log: $BENCH_DEBEZIUM_HOME/maven.log)"
  fi
  printf '%s\n' "$pom_sum" >"$BENCH_DEBEZIUM_HOME/lib.tmp/.pom.sha256"
  rm -rf "${BENCH_DEBEZIUM_HOME:?}/lib"
  mv "$BENCH_DEBEZIUM_HOME/lib.tmp" "$BENCH_DEBEZIUM_HOME/lib"
  rm -f "$BENCH_DEBEZIUM_HOME/classes/.src.sha256"
fi

# The harness class: again only when its source or the jars changed.
src_sum=$(cat "$HERE/BenchRunner.java" "$BENCH_DEBEZIUM_HOME/lib/.pom.sha256" | sha256sum | cut -d' ' -f1)
if [[ ! -f $BENCH_DEBEZIUM_HOME/classes/.src.sha256 || $(<"$BENCH_DEBEZIUM_HOME/classes/.src.sha256") != "$src_sum" ]]; then
  say "compiling BenchRunner.java"
  rm -rf "$BENCH_DEBEZIUM_HOME/classes"
  mkdir -p "$BENCH_DEBEZIUM_HOME/classes"
  javac -nowarn -d "$BENCH_DEBEZIUM_HOME/classes" -cp "$BENCH_DEBEZIUM_HOME/lib/*" "$HERE/BenchRunner.java" ||
    die "javac BenchRunner.java failed"
  printf '%s\n' "$src_sum" >"$BENCH_DEBEZIUM_HOME/classes/.src.sha256"
fi
say "ready: $BENCH_DEBEZIUM_HOME"
