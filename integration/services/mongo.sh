# mongo.sh — mongo-java-server (Maven Central, de.bwaldvogel:mongo-java-server, in-memory
# backend with its oplog on) on 127.0.0.1:27017: the wire-compatible MongoDB server the
# MongoDB source's integration tests run against. Sourced by up.sh and down.sh after env.sh;
# also runs on its own: `mongo.sh up` / `mongo.sh down`.
#
# What it is not: a standalone server (no replica set), change streams on one collection at a
# time, update events without updateDescription, resume tokens that are its own oplog time in
# hex. docs/mongodb.md lists the differences from a real server.
# Connect with mongodb://127.0.0.1:27017/?directConnection=true. A restart forgets all data.
# Everything it is sent stays in its heap (its oplog is never truncated), so make bench's
# MongoDB scenarios need more than the tests: MONGO_HEAP (default 2g) is its -Xmx.
#
# State: $STATE_DIR/mongo/{lib/*.jar,classes/MongoServerMain.class,mongo.log,mongo.pid}; the
# jars are fetched again when mongo/pom.xml changes, the class when its source changes.

# Run on its own (see the end), it needs env.sh's helpers first.
[[ ${BASH_SOURCE[0]} != "$0" ]] || source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

MONGO_PORT=27017
MONGO_HOME=$STATE_DIR/mongo
MONGO_PIDFILE=$MONGO_HOME/mongo.pid
MONGO_MAIN=MongoServerMain

# mongo_packages: the Debian packages the server needs that are missing (a JDK and Maven).
mongo_packages() {
  command -v javac >/dev/null || echo openjdk-17-jdk-headless
  command -v mvn >/dev/null || echo maven
}

# mongo_install: the jars of mongo/pom.xml into $MONGO_HOME/lib and the launcher compiled
# against them, each again only when its source changed.
mongo_install() {
  local src=$SERVICES_DIR/mongo lib=$MONGO_HOME/lib sum
  mkdir -p "$MONGO_HOME"
  sum=$(sha256sum <"$src/pom.xml" | cut -d' ' -f1)
  if [[ ! -f $lib/.pom.sha256 || $(<"$lib/.pom.sha256") != "$sum" ]]; then
    say "mongo: downloading mongo-java-server with Maven"
    rm -rf "$lib.tmp"
    if ! mvn -B -q -f "$src/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib.tmp" \
      </dev/null >"$MONGO_HOME/maven.log" 2>&1; then
      show_tail "$MONGO_HOME/maven.log"
      die "mongo: mvn dependency:copy-dependencies failed (log: $MONGO_HOME/maven.log)"
    fi
    printf '%s\n' "$sum" >"$lib.tmp/.pom.sha256"
    rm -rf "${lib:?}"
    mv "$lib.tmp" "$lib"
  fi
  sum=$(cat "$src/$MONGO_MAIN.java" "$lib/.pom.sha256" | sha256sum | cut -d' ' -f1)
  if [[ ! -f $MONGO_HOME/classes/.src.sha256 || $(<"$MONGO_HOME/classes/.src.sha256") != "$sum" ]]; then
    say "mongo: compiling $MONGO_MAIN.java"
    rm -rf "$MONGO_HOME/classes"
    mkdir -p "$MONGO_HOME/classes"
    javac -nowarn -d "$MONGO_HOME/classes" -cp "$lib/*" "$src/$MONGO_MAIN.java" ||
      die "mongo: javac $MONGO_MAIN.java failed"
    printf '%s\n' "$sum" >"$MONGO_HOME/classes/.src.sha256"
  fi
}

# mongo_pid: prints the pid of this checkout's server if it runs.
mongo_pid() {
  running_pid "$MONGO_PIDFILE" "$MONGO_MAIN" || find_pid "$MONGO_MAIN 127.0.0.1 $MONGO_PORT"
}

# mongo_wait PID SECONDS: waits until the port accepts connections (the launcher binds only
# once the backend is ready); fails early if PID exits.
mongo_wait() {
  local pid=$1 deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    port_open "$MONGO_PORT" && return 0
    alive "$pid" || return 1
    sleep 0.2
  done
  return 1
}

mongo_up() {
  local pid
  if pid=$(mongo_pid); then
    mongo_wait "$pid" 30 || {
      show_tail "$MONGO_HOME/mongo.log"
      die "mongo runs (pid $pid) but does not listen on 127.0.0.1:$MONGO_PORT; try down.sh mongo then up.sh mongo"
    }
    say "mongo: already running (pid $pid) on 127.0.0.1:$MONGO_PORT"
    return 0
  fi
  port_open "$MONGO_PORT" && die "mongo: port $MONGO_PORT is taken by another process: $(port_owner "$MONGO_PORT")"

  mongo_install
  say "mongo: starting mongo-java-server on 127.0.0.1:$MONGO_PORT"
  rm -f "$MONGO_PIDFILE"
  printf -- '----- start %s -----\n' "$(date -Is)" >>"$MONGO_HOME/mongo.log"
  (
    cd "$MONGO_HOME" || exit 1
    # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
    MONGO_PIDFILE=$MONGO_PIDFILE setsid bash -c 'echo $$ >"$MONGO_PIDFILE"; exec "$@"' mongo \
      java -Xmx"${MONGO_HEAP:-2g}" -cp "$MONGO_HOME/classes:$MONGO_HOME/lib/*" "$MONGO_MAIN" 127.0.0.1 "$MONGO_PORT" \
      </dev/null >>"$MONGO_HOME/mongo.log" 2>&1 9>&- &
  )
  local i
  for ((i = 0; i < 50; i++)); do
    pid=$(mongo_pid) && break
    sleep 0.1
  done
  if [[ -z ${pid:-} ]] || ! mongo_wait "$pid" 60; then
    show_tail "$MONGO_HOME/mongo.log"
    [[ -z ${pid:-} ]] || stop_pid "$pid" mongo 10
    die "mongo did not come up on 127.0.0.1:$MONGO_PORT within 60s (log: $MONGO_HOME/mongo.log)"
  fi
  say "mongo: up (pid $pid) on 127.0.0.1:$MONGO_PORT"
}

mongo_down() {
  local pid
  if pid=$(mongo_pid); then
    stop_pid "$pid" mongo 10
  else
    say "mongo: not running"
  fi
  rm -f "$MONGO_PIDFILE"
}

# Run on its own: mongo.sh up|down, under the same lock as up.sh and down.sh.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  case ${1:-} in
  up)
    lock_state_dir
    mapfile -t missing < <(mongo_packages)
    ((${#missing[@]} == 0)) || apt_install "${missing[@]}"
    mongo_up
    ;;
  down)
    [[ -d $STATE_DIR ]] || exit 0
    lock_state_dir
    mongo_down
    ;;
  *) die "usage: mongo.sh up|down" ;;
  esac
fi
