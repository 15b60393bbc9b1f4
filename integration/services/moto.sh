# moto.sh — the AWS emulator (moto server from PyPI) on 127.0.0.1:5000, serving every service
# moto knows (DynamoDB, SSM, SQS, STS, …) on one port. Sourced by up.sh and down.sh after
# env.sh. Point an AWS SDK at it with
#   AWS_ENDPOINT_URL=http://127.0.0.1:5000 AWS_REGION=us-east-1
#   AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
# Its state is in memory: a restart forgets every table, parameter and queue.
#
# State: $STATE_DIR/moto/{venv,moto.log,moto.pid}; the venv is rebuilt when MOTO_VERSION changes.

MOTO_VERSION=5.2.5
MOTO_PORT=5000
MOTO_HOME=$STATE_DIR/moto
MOTO_PIDFILE=$MOTO_HOME/moto.pid
MOTO_SERVER=$MOTO_HOME/venv/bin/moto_server

# moto_packages: the Debian packages moto needs that are missing (Python with venv).
moto_packages() {
  command -v python3 >/dev/null || echo python3
  python3 -c 'import venv, ensurepip' 2>/dev/null || echo python3-venv
}

# moto_install: installs moto[server]==$MOTO_VERSION into its own venv, unless it is there.
moto_install() {
  [[ -x $MOTO_SERVER && -f $MOTO_HOME/venv/.moto-version && $(<"$MOTO_HOME/venv/.moto-version") == "$MOTO_VERSION" ]] &&
    return 0
  say "moto: installing moto[server]==$MOTO_VERSION from PyPI"
  mkdir -p "$MOTO_HOME"
  rm -rf "$MOTO_HOME/venv"
  python3 -m venv "$MOTO_HOME/venv" >"$MOTO_HOME/pip.log" 2>&1 || {
    show_tail "$MOTO_HOME/pip.log"
    die "moto: python3 -m venv failed"
  }
  if ! "$MOTO_HOME/venv/bin/pip" install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION" \
    </dev/null >>"$MOTO_HOME/pip.log" 2>&1; then
    show_tail "$MOTO_HOME/pip.log"
    die "moto: pip install moto[server]==$MOTO_VERSION failed"
  fi
  printf '%s\n' "$MOTO_VERSION" >"$MOTO_HOME/venv/.moto-version"
}

# moto_pid: prints the pid of this checkout's moto server if it runs.
moto_pid() {
  running_pid "$MOTO_PIDFILE" "$MOTO_SERVER" || find_pid "$MOTO_SERVER -H 127.0.0.1"
}

# moto_answers: true when the server answers its dashboard API.
moto_answers() {
  port_open "$MOTO_PORT" || return 1
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$MOTO_PORT &&
    printf 'GET /moto-api/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && head -c 12 <&3" 2>/dev/null |
    grep -q '^HTTP/1.[01] 200'
}

# moto_wait PID SECONDS: waits until the server answers; fails early if PID exits.
moto_wait() {
  local pid=$1 deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    moto_answers && return 0
    alive "$pid" || return 1
    sleep 0.3
  done
  return 1
}

moto_up() {
  local pid
  if pid=$(moto_pid); then
    moto_wait "$pid" 30 || {
      show_tail "$MOTO_HOME/moto.log"
      die "moto runs (pid $pid) but does not answer on 127.0.0.1:$MOTO_PORT; try down.sh moto then up.sh moto"
    }
    say "moto: already running (pid $pid) on 127.0.0.1:$MOTO_PORT"
    return 0
  fi
  if port_open "$MOTO_PORT"; then
    # Another checkout's (or a hand-started) moto serves the same API: share it rather than
    # fail; down.sh leaves it alone since it is not ours.
    moto_answers && {
      say "moto: another moto server already answers on 127.0.0.1:$MOTO_PORT ($(port_owner "$MOTO_PORT")); using it"
      return 0
    }
    die "moto: port $MOTO_PORT is taken by another process: $(port_owner "$MOTO_PORT")"
  fi

  moto_install
  say "moto: starting on 127.0.0.1:$MOTO_PORT"
  rm -f "$MOTO_PIDFILE"
  printf -- '----- start %s -----\n' "$(date -Is)" >>"$MOTO_HOME/moto.log"
  (
    cd "$MOTO_HOME" || exit 1
    # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
    MOTO_PIDFILE=$MOTO_PIDFILE setsid bash -c 'echo $$ >"$MOTO_PIDFILE"; exec "$@"' moto \
      "$MOTO_SERVER" -H 127.0.0.1 -p "$MOTO_PORT" </dev/null >>"$MOTO_HOME/moto.log" 2>&1 9>&- &
  )
  local i
  for ((i = 0; i < 50; i++)); do
    pid=$(moto_pid) && break
    sleep 0.1
  done
  if [[ -z ${pid:-} ]] || ! moto_wait "$pid" 60; then
    show_tail "$MOTO_HOME/moto.log"
    [[ -z ${pid:-} ]] || stop_pid "$pid" moto 10
    die "moto did not come up on 127.0.0.1:$MOTO_PORT within 60s (log: $MOTO_HOME/moto.log)"
  fi
  say "moto: up (pid $pid) on 127.0.0.1:$MOTO_PORT"
}

moto_down() {
  local pid
  if pid=$(moto_pid); then
    stop_pid "$pid" moto 10
  else
    say "moto: not running"
  fi
  rm -f "$MOTO_PIDFILE"
}
