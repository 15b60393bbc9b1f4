#!/usr/bin/env bash
# run.sh <connector.properties> <out.jsonl> — runs the Debezium harness (build.sh must have
# run) in a JVM with a fixed small heap. Extra JVM options: $DEBEZIUM_JAVA_OPTS.
# Logging: SLF4J simple, level $DEBEZIUM_LOG_LEVEL (default warn), to stderr.
# Jars: the main set (pom.xml), or the set DEBEZIUM_JARS names (<set>/pom.xml; build.sh <set>).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$HERE/../.." && pwd -P)
DEBEZIUM_HOME=${DEBEZIUM_HOME:-$REPO_ROOT/.services/debezium}
# The classes of this Harness.java (build.sh names their directory by its hash).
[[ -f $DEBEZIUM_HOME/lib/.pom.sha256 ]] || {
  echo "[debezium] not built: run integration/debezium/build.sh" >&2
  exit 2
}
CLASSES=$DEBEZIUM_HOME/harness/$(cat "$HERE/Harness.java" "$DEBEZIUM_HOME/lib/.pom.sha256" | sha256sum | cut -d' ' -f1)
[[ -f $CLASSES/Harness.class ]] || {
  echo "[debezium] Harness.java changed since the last build: run integration/debezium/build.sh" >&2
  exit 2
}
LIB=$DEBEZIUM_HOME/lib
if [[ -n ${DEBEZIUM_JARS:-} ]]; then
  LIB=$DEBEZIUM_HOME/$DEBEZIUM_JARS/lib
  [[ -d $LIB ]] || {
    echo "[debezium] jar set $DEBEZIUM_JARS not built: run integration/debezium/build.sh $DEBEZIUM_JARS" >&2
    exit 2
  }
fi
# shellcheck disable=SC2086 # DEBEZIUM_JAVA_OPTS is a list of options
exec java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k \
  -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${DEBEZIUM_LOG_LEVEL:-warn}" \
  -Dorg.slf4j.simpleLogger.logFile=System.err \
  ${DEBEZIUM_JAVA_OPTS:-} \
  -cp "$CLASSES:$LIB/*" Harness "$@"
