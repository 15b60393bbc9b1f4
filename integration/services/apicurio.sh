# apicurio.sh — a Confluent-compatible schema registry for the Avro tests: Apicurio Registry
# 2.4.2.Final, in-memory (H2), built from Maven Central as a Quarkus runner (apicurio/pom.xml),
# on http://127.0.0.1:8081; the Confluent API is under /apis/ccompat/v7. Sourced by up.sh and
# down.sh after env.sh. Its state is in memory: a restart forgets every schema.
#
# State: $STATE_DIR/apicurio/{build,apicurio.log,apicurio.pid}; rebuilt when apicurio/ changes.

APICURIO_PORT=8081
APICURIO_HOME=$STATE_DIR/apicurio
APICURIO_PIDFILE=$APICURIO_HOME/apicurio.pid
APICURIO_JAR=$APICURIO_HOME/build/target/apicurio-runner-1-runner.jar

# apicurio_packages: the Debian packages the build and the registry need that are missing.
apicurio_packages() {
  command -v mvn >/dev/null || echo maven
  command -v javac >/dev/null || echo openjdk-17-jdk-headless
}

# apicurio_build: builds the runner jar, unless it was built from the same sources (the build
# folder keeps their checksum).
apicurio_build() {
  local src=$SERVICES_DIR/apicurio sum
  sum=$(cd "$src" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
  [[ -f $APICURIO_JAR && -f $APICURIO_HOME/build/.src.sha256 && $(<"$APICURIO_HOME/build/.src.sha256") == "$sum" ]] &&
    return 0
  say "apicurio: building the registry with Maven (apicurio/pom.xml)"
  rm -rf "$APICURIO_HOME/build"
  mkdir -p "$APICURIO_HOME/build"
  cp -r "$src/." "$APICURIO_HOME/build/"
  if ! mvn -B -q -f "$APICURIO_HOME/build/pom.xml" package -DskipTests </dev/null >"$APICURIO_HOME/maven.log" 2>&1; then
    show_tail "$APICURIO_HOME/maven.log"
    die "apicurio: mvn package failed"
  fi
  printf '%s\n' "$sum" >"$APICURIO_HOME/build/.src.sha256"
}

# apicurio_pid: prints the pid of this checkout's registry if it runs.
apicurio_pid() {
  running_pid "$APICURIO_PIDFILE" "$APICURIO_JAR" || find_pid "$APICURIO_JAR"
}

# apicurio_answers: true when the Confluent API lists its subjects.
apicurio_answers() {
  port_open "$APICURIO_PORT" || return 1
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$APICURIO_PORT &&
    printf 'GET /apis/ccompat/v7/subjects HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && head -c 12 <&3" 2>/dev/null |
    grep -q '^HTTP/1.[01] 200'
}

# apicurio_wait PID SECONDS: waits until the registry answers; fails early if PID exits.
apicurio_wait() {
  local pid=$1 deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    apicurio_answers && return 0
    alive "$pid" || return 1
    sleep 0.5
  done
  return 1
}

apicurio_up() {
  local pid
  if pid=$(apicurio_pid); then
    apicurio_wait "$pid" 60 || {
      show_tail "$APICURIO_HOME/apicurio.log"
      die "apicurio runs (pid $pid) but does not answer on 127.0.0.1:$APICURIO_PORT; try down.sh apicurio then up.sh apicurio"
    }
    say "apicurio: already running (pid $pid) on 127.0.0.1:$APICURIO_PORT"
    return 0
  fi
  if port_open "$APICURIO_PORT"; then
    # Another checkout's registry serves the same API: share it, as moto.sh does.
    apicurio_answers && {
      say "apicurio: another registry already answers on 127.0.0.1:$APICURIO_PORT ($(port_owner "$APICURIO_PORT")); using it"
      return 0
    }
    die "apicurio: port $APICURIO_PORT is taken by another process: $(port_owner "$APICURIO_PORT")"
  fi

  apicurio_build
  say "apicurio: starting on 127.0.0.1:$APICURIO_PORT"
  # Its in-memory H2 store, as the registry's own default, but waiting up to
  # 30 s for a table lock rather than H2's default: two writers registering
  # at once (Tributary and Debezium's converter, in the oracle tests) made
  # a registration fail with "Timeout trying to lock table" in a CI run.
  local APICURIO_DB_URL='jdbc:h2:mem:registry_db;LOCK_TIMEOUT=30000'
  rm -f "$APICURIO_PIDFILE"
  printf -- '----- start %s -----\n' "$(date -Is)" >>"$APICURIO_HOME/apicurio.log"
  (
    cd "$APICURIO_HOME" || exit 1
    # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
    APICURIO_PIDFILE=$APICURIO_PIDFILE setsid bash -c 'echo $$ >"$APICURIO_PIDFILE"; exec "$@"' apicurio \
      env REGISTRY_DATASOURCE_URL="$APICURIO_DB_URL" java -Xmx384m -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$APICURIO_PORT" -jar "$APICURIO_JAR" \
      </dev/null >>"$APICURIO_HOME/apicurio.log" 2>&1 9>&- &
  )
  local i
  for ((i = 0; i < 50; i++)); do
    pid=$(apicurio_pid) && break
    sleep 0.1
  done
  if [[ -z ${pid:-} ]] || ! apicurio_wait "$pid" 120; then
    show_tail "$APICURIO_HOME/apicurio.log"
    [[ -z ${pid:-} ]] || stop_pid "$pid" apicurio 10
    die "apicurio did not come up on 127.0.0.1:$APICURIO_PORT within 120s (log: $APICURIO_HOME/apicurio.log)"
  fi
  say "apicurio: up (pid $pid) on 127.0.0.1:$APICURIO_PORT"
}

apicurio_down() {
  local pid
  if pid=$(apicurio_pid); then
    stop_pid "$pid" apicurio 10
  else
    say "apicurio: not running"
  fi
  rm -f "$APICURIO_PIDFILE"
}
