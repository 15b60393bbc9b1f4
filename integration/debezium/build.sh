#!/usr/bin/env bash
# build.sh — downloads Debezium (the jars of pom.xml, from Maven Central) and compiles
# Harness.java against them. Idempotent: nothing is done again while pom.xml and Harness.java
# are unchanged. Called by integration/services/up.sh; safe to run by hand.
#
# Result: <repo>/.services/debezium/{lib/*.jar,harness/<hash>/Harness.class}, <hash> the sha256
# of Harness.java and lib/.pom.sha256; run the harness with run.sh, which finds that directory.
# (see README.md beside this file, or run.sh which does exactly that).
#
# Usage: build.sh [set...] — also builds the named extra jar sets (<set>/pom.xml beside this
# file → .services/debezium/<set>/lib; run.sh picks one with DEBEZIUM_JARS=<set>). Without
# arguments it builds every set.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$HERE/../.." && pwd -P)
DEBEZIUM_HOME=${DEBEZIUM_HOME:-$REPO_ROOT/.services/debezium}

say() { printf '[debezium] %s\n' "$*" >&2; }
die() {
  printf '[debezium] ERROR: %s\n' "$*" >&2
  exit 1
}

command -v java >/dev/null || die "java (17 or newer) is missing: apt-get install openjdk-17-jdk-headless"
command -v javac >/dev/null || die "javac is missing: apt-get install openjdk-17-jdk-headless"
command -v mvn >/dev/null || die "mvn is missing: apt-get install maven"

mkdir -p "$DEBEZIUM_HOME"
exec 8>"$DEBEZIUM_HOME/.lock"
flock -w 900 8 || die "another build.sh holds $DEBEZIUM_HOME/.lock"

# fetch_jars <pom.xml> <lib dir>: the pom's jars into the folder, again only when the pom changed.
fetch_jars() {
  local pom=$1 lib=$2 sum
  sum=$(sha256sum <"$pom" | cut -d' ' -f1)
  if [[ -f $lib/.pom.sha256 && $(<"$lib/.pom.sha256") == "$sum" ]]; then
    return 0
  fi
  say "downloading the jars of $pom with Maven; the first time takes a few minutes"
  rm -rf "$lib.tmp"
  mkdir -p "$(dirname "$lib")"
  if ! mvn -B -q -f "$pom" dependency:copy-dependencies \
    -DoutputDirectory="$lib.tmp" </dev/null >"$DEBEZIUM_HOME/maven.log" 2>&1; then
    tail -n 40 "$DEBEZIUM_HOME/maven.log" >&2
    die "mvn dependency:copy-dependencies failed for $pom (log: $DEBEZIUM_HOME/maven.log)"
  fi
  printf '%s\n' "$sum" >"$lib.tmp/.pom.sha256"
  rm -rf "${lib:?}"
  mv "$lib.tmp" "$lib"
}

fetch_jars "$HERE/pom.xml" "$DEBEZIUM_HOME/lib"
sets=("$@")
if [[ ${#sets[@]} -eq 0 ]]; then
  for p in "$HERE"/*/pom.xml; do
    [[ -f $p ]] && sets+=("$(basename "$(dirname "$p")")")
  done
fi
for set in "${sets[@]}"; do
  [[ -f $HERE/$set/pom.xml ]] || die "no jar set $set (want $HERE/$set/pom.xml)"
  fetch_jars "$HERE/$set/pom.xml" "$DEBEZIUM_HOME/$set/lib"
  # A set's own Java sources (<set>/*.java), compiled against its jars into <set>/classes.
  srcs=("$HERE/$set"/*.java)
  if [[ -f ${srcs[0]} ]]; then
    sum=$(cat "${srcs[@]}" "$DEBEZIUM_HOME/$set/lib/.pom.sha256" | sha256sum | cut -d' ' -f1)
    out=$DEBEZIUM_HOME/$set/classes
    if [[ ! -f $out/.src.sha256 || $(<"$out/.src.sha256") != "$sum" ]]; then
      say "compiling $set/*.java"
      rm -rf "$out"
      mkdir -p "$out"
      javac -nowarn -d "$out" -cp "$DEBEZIUM_HOME/$set/lib/*" "${srcs[@]}" || die "javac $set/*.java failed"
      printf '%s\n' "$sum" >"$out/.src.sha256"
    fi
  fi
done

# The harness class: again only when its source or the jars changed, into a directory named
# by their hash (run.sh finds it the same way): checkouts with different Harness.java sharing
# one DEBEZIUM_HOME each get their own, and none is removed under a running JVM.
src_sum=$(cat "$HERE/Harness.java" "$DEBEZIUM_HOME/lib/.pom.sha256" | sha256sum | cut -d' ' -f1)
classes=$DEBEZIUM_HOME/harness/$src_sum
if [[ ! -f $classes/Harness.class ]]; then
  say "compiling Harness.java"
  rm -rf "$classes.tmp"
  mkdir -p "$classes.tmp"
  javac -nowarn -d "$classes.tmp" -cp "$DEBEZIUM_HOME/lib/*" "$HERE/Harness.java" ||
    die "javac Harness.java failed"
  rm -rf "$classes"
  mv "$classes.tmp" "$classes"
fi
say "ready: $DEBEZIUM_HOME"
