# dynalite.sh — dynalite, an open-source DynamoDB server (Node.js, from the npm registry), on
# 127.0.0.1:4567 with its tables in memory: the second DynamoDB engine the checkpoint store's
# tests run against, beside moto. Sourced by up.sh and down.sh after env.sh; also runs on
# its own: `dynalite.sh up` / `dynalite.sh down` (the same, for this one service).
#
# Why dynalite: Amazon's own DynamoDB Local is under the vendor's terms, not an open-source
# licence, so the project does not use it. dynalite was written against the live service,
# error messages and limits included, independently of moto; it has no transactions
# (TransactWriteItems answers UnknownOperationException), so tests of the paths that need
# them (checkpoints over 400 KB, drop) run against moto only.
#
# Point an AWS SDK at it with
#   AWS_ENDPOINT_URL=http://127.0.0.1:4567 AWS_REGION=us-east-1
#   AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
# A restart forgets every table.
#
# State: $STATE_DIR/dynalite/{app,dynalite.log,dynalite.pid}; app/ holds the npm install of
# dynalite/package.json and its lock, redone when either changes. dynalite/serve.js starts it.

# Run on its own (see the end), it needs env.sh's helpers first.
[[ ${BASH_SOURCE[0]} != "$0" ]] || source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

DYNALITE_PORT=4567
DYNALITE_HOME=$STATE_DIR/dynalite
DYNALITE_PIDFILE=$DYNALITE_HOME/dynalite.pid
DYNALITE_CLI=$DYNALITE_HOME/app/node_modules/dynalite/cli.js
# serve.js runs dynalite (as cli.js would) but survives clients that vanish mid-request.
DYNALITE_SERVE=$SERVICES_DIR/dynalite/serve.js

# dynalite_packages: the Debian packages dynalite needs that are missing (Node.js and npm).
dynalite_packages() {
  command -v node >/dev/null || echo nodejs
  command -v npm >/dev/null || echo npm
}

# dynalite_install: installs the locked dependency set of dynalite/package.json into
# $DYNALITE_HOME/app, unless that same set is installed (the folder keeps their checksum).
dynalite_install() {
  local src=$SERVICES_DIR/dynalite sum
  sum=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
  [[ -f $DYNALITE_CLI && -f $DYNALITE_HOME/app/.lock.sha256 && $(<"$DYNALITE_HOME/app/.lock.sha256") == "$sum" ]] &&
    return 0
  say "dynalite: installing dynalite/package.json with npm"
  mkdir -p "$DYNALITE_HOME"
  rm -rf "$DYNALITE_HOME/app.tmp"
  mkdir -p "$DYNALITE_HOME/app.tmp"
  cp "$src/package.json" "$src/package-lock.json" "$DYNALITE_HOME/app.tmp/"
  # --ignore-scripts: the one install script (classic-level's) only picks a prebuilt LevelDB
  # binding that the package ships; the tables are kept in memory, which needs none.
  if ! (cd "$DYNALITE_HOME/app.tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    </dev/null >"$DYNALITE_HOME/npm.log" 2>&1); then
    show_tail "$DYNALITE_HOME/npm.log"
    die "dynalite: npm ci failed"
  fi
  printf '%s\n' "$sum" >"$DYNALITE_HOME/app.tmp/.lock.sha256"
  rm -rf "${DYNALITE_HOME:?}/app"
  mv "$DYNALITE_HOME/app.tmp" "$DYNALITE_HOME/app"
}

# dynalite_pid: prints the pid of this checkout's dynalite if it runs.
dynalite_pid() {
  running_pid "$DYNALITE_PIDFILE" "$DYNALITE_SERVE" || find_pid "$DYNALITE_SERVE --host 127.0.0.1"
}

# dynalite_answers: true when the server answers a DynamoDB request (ListTables) on its port.
dynalite_answers() {
  port_open "$DYNALITE_PORT" || return 1
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$DYNALITE_PORT &&
    printf 'POST / HTTP/1.0\r\nHost: 127.0.0.1\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n{}' >&3 &&
    cat <&3" 2>/dev/null | grep -qi '^x-amzn-RequestId:'
}

# dynalite_wait PID SECONDS: waits until the server answers; fails early if PID exits.
dynalite_wait() {
  local pid=$1 deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    dynalite_answers && return 0
    alive "$pid" || return 1
    sleep 0.2
  done
  return 1
}

dynalite_up() {
  local pid
  if pid=$(dynalite_pid); then
    dynalite_wait "$pid" 30 || {
      show_tail "$DYNALITE_HOME/dynalite.log"
      die "dynalite runs (pid $pid) but does not answer on 127.0.0.1:$DYNALITE_PORT; try down.sh dynalite then up.sh dynalite"
    }
    say "dynalite: already running (pid $pid) on 127.0.0.1:$DYNALITE_PORT"
    return 0
  fi
  if port_open "$DYNALITE_PORT"; then
    # Another checkout's dynalite: share it (tests use tables of their own); down.sh leaves
    # it alone since it is not ours.
    dynalite_answers && {
      say "dynalite: a DynamoDB server already answers on 127.0.0.1:$DYNALITE_PORT ($(port_owner "$DYNALITE_PORT")); using it"
      return 0
    }
    die "dynalite: port $DYNALITE_PORT is taken by another process: $(port_owner "$DYNALITE_PORT")"
  fi

  dynalite_install
  say "dynalite: starting on 127.0.0.1:$DYNALITE_PORT"
  rm -f "$DYNALITE_PIDFILE"
  printf -- '----- start %s -----\n' "$(date -Is)" >>"$DYNALITE_HOME/dynalite.log"
  # Tables become ACTIVE after 50 ms rather than dynalite's default 500 ms: tests create one
  # per run and wait for it.
  (
    cd "$DYNALITE_HOME" || exit 1
    # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
    DYNALITE_PIDFILE=$DYNALITE_PIDFILE NODE_PATH=$DYNALITE_HOME/app/node_modules \
      setsid bash -c 'echo $$ >"$DYNALITE_PIDFILE"; exec "$@"' dynalite \
      node "$DYNALITE_SERVE" --host 127.0.0.1 --port "$DYNALITE_PORT" \
      --createTableMs 50 --deleteTableMs 50 --updateTableMs 50 \
      </dev/null >>"$DYNALITE_HOME/dynalite.log" 2>&1 9>&- &
  )
  local i
  for ((i = 0; i < 50; i++)); do
    pid=$(dynalite_pid) && break
    sleep 0.1
  done
  if [[ -z ${pid:-} ]] || ! dynalite_wait "$pid" 30; then
    show_tail "$DYNALITE_HOME/dynalite.log"
    [[ -z ${pid:-} ]] || stop_pid "$pid" dynalite 10
    die "dynalite did not come up on 127.0.0.1:$DYNALITE_PORT within 30s (log: $DYNALITE_HOME/dynalite.log)"
  fi
  say "dynalite: up (pid $pid) on 127.0.0.1:$DYNALITE_PORT"
}

dynalite_down() {
  local pid
  if pid=$(dynalite_pid); then
    stop_pid "$pid" dynalite 10
  else
    say "dynalite: not running"
  fi
  rm -f "$DYNALITE_PIDFILE"
}

# Run on its own: dynalite.sh up|down, under the same lock as up.sh and down.sh.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  case ${1:-} in
  up)
    lock_state_dir
    mapfile -t missing < <(dynalite_packages)
    ((${#missing[@]} == 0)) || apt_install "${missing[@]}"
    dynalite_up
    ;;
  down)
    [[ -d $STATE_DIR ]] || exit 0
    lock_state_dir
    dynalite_down
    ;;
  *) die "usage: dynalite.sh up|down" ;;
  esac
fi
