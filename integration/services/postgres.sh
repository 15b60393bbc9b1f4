# postgres.sh — our own PostgreSQL cluster (Debian's server package, whatever major version
# it is) on 127.0.0.1:5432, ready for logical replication. Sourced by up.sh and down.sh after
# env.sh.
#
# State: $STATE_DIR/postgres/{data,run,postgres.log}. The server refuses to run as root, so
# that folder belongs to the `postgres` OS user; when that user cannot reach the checkout
# (say, under /root) or the socket path would be too long, the folder lives in
# /var/lib/tributary/<hash of the checkout path>/ and $STATE_DIR/postgres links to it.

PG_PORT=5432
PG_PASSWORD=postgres # of the superuser `postgres`
PG_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres"

# pg_bindir: prints the bin folder of the newest installed PostgreSQL server.
pg_bindir() {
  local f newest=
  for f in /usr/lib/postgresql/*/bin/postgres; do
    [[ -x $f ]] && newest=$(printf '%s\n' "$newest" "$f" | sort -V | tail -n 1)
  done
  [[ -n $newest ]] || return 1
  dirname "$newest"
}

# pg_packages: the Debian packages PostgreSQL needs that are missing. PostGIS (for the
# geometry/geography fidelity tests; each test database runs CREATE EXTENSION postgis) is
# the package of the installed server's major version, or of Debian's default one when no
# server is installed yet. Installing it needs no server restart.
pg_packages() {
  local bin
  if bin=$(pg_bindir); then
    echo "postgresql-$(basename "$(dirname "$bin")")-postgis-3"
  else
    echo postgresql
    echo postgresql-postgis
  fi
  command -v psql >/dev/null || echo postgresql-client
}

# as_pg CMD...: runs CMD as the OS user that owns the cluster (`postgres` when we are root).
as_pg() {
  if ((EUID == 0)); then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# pg_owner: the OS user that owns the cluster files.
pg_owner() { if ((EUID == 0)); then echo postgres; else id -un; fi; }

# pg_home [create]: prints the cluster's folder, choosing (and creating) it on first use.
pg_home() { server_home postgres "$(pg_owner)" as_pg pg_stop_dir "${1:-}"; }

# pg_running HOME: true when the cluster in HOME runs.
pg_running() {
  local bin
  bin=$(pg_bindir) || return 1
  [[ -f $1/data/postmaster.pid ]] || return 1
  as_pg "$bin/pg_ctl" status -D "$1/data" >/dev/null 2>&1
}

# pg_answers: true when the superuser can log in over TCP with its password.
pg_answers() {
  PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=3 \
    psql -X -w -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -Atqc 'select 1' 2>/dev/null |
    grep -qx 1
}

# pg_wait HOME SECONDS: waits until the server answers; fails early when it stops running.
pg_wait() {
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    pg_answers && return 0
    pg_running "$1" || return 1
    sleep 0.5
  done
  return 1
}

# pg_stop_dir HOME: stops the cluster in HOME: fast shutdown, then immediate, then SIGKILL.
pg_stop_dir() {
  local home=$1 bin pid
  [[ -f $home/data/postmaster.pid ]] || return 0
  bin=$(pg_bindir) || return 0
  pg_running "$home" || return 0
  say "postgres: stopping"
  as_pg "$bin/pg_ctl" stop -D "$home/data" -m fast -w -t 30 -s && return 0
  say "postgres: fast shutdown timed out; stopping immediately"
  as_pg "$bin/pg_ctl" stop -D "$home/data" -m immediate -w -t 10 -s && return 0
  pid=$(head -n 1 "$home/data/postmaster.pid" 2>/dev/null) || return 0
  [[ $pid =~ ^[0-9]+$ ]] && stop_pid "$pid" postgres 1
}

# pg_free_port: frees our port of Debian's own clusters (`pg_lsclusters`). A cluster with
# only the databases every cluster has (postgres, template0, template1) is the one installing
# the package creates and may start: it is stopped. One that holds databases of its own is
# somebody's server: we refuse, naming it and its databases, and touch nothing.
pg_free_port() {
  command -v pg_lsclusters >/dev/null || return 0
  local ver name port status _ dbs
  while read -r ver name port status _; do
    [[ $port == "$PG_PORT" && $status == online* ]] || continue
    dbs=$(as_root runuser -u postgres -- psql -X -p "$port" -Atc \
      "SELECT string_agg(datname, ', ' ORDER BY datname) FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1')" 2>&1) ||
      die "Debian's PostgreSQL cluster $ver/$name holds port $PG_PORT and could not be inspected ($dbs); stop it (pg_ctlcluster $ver $name stop) or move it to another port, then run this again"
    if [[ -n $dbs ]]; then
      die "Debian's PostgreSQL cluster $ver/$name holds port $PG_PORT with databases of its own ($dbs): the test services will not stop it; stop it (pg_ctlcluster $ver $name stop) or move it to another port, then run this again"
    fi
    say "postgres: stopping Debian's cluster $ver/$name (no databases of its own), which holds port $PG_PORT"
    as_root pg_ctlcluster "$ver" "$name" stop || die "could not stop cluster $ver/$name"
  done < <(pg_lsclusters -h 2>/dev/null)
}

# pg_configure HOME: (re)writes our settings and client authentication rules.
pg_configure() {
  local data=$1/data
  cat >"$data/tributary.conf" <<EOF
# Written by integration/services/postgres.sh at each start: edit that script, not this file.
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$1/run'
password_encryption = 'scram-sha-256'
fsync = on

# Logical decoding for change data capture.
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
EOF
  grep -qx "include = 'tributary.conf'" "$data/postgresql.conf" ||
    printf "\n# Settings of the Tributary test services.\ninclude = 'tributary.conf'\n" >>"$data/postgresql.conf"

  cat >"$data/pg_hba.conf" <<'EOF'
# Written by integration/services/postgres.sh at each start: edit that script, not this file.
# TYPE  DATABASE     USER  ADDRESS        METHOD
local   all          all                  peer
local   replication  all                  peer
host    all          all   127.0.0.1/32   scram-sha-256
host    replication  all   127.0.0.1/32   scram-sha-256
EOF
  chown "$(pg_owner)": "$data/tributary.conf" "$data/pg_hba.conf"
}

# pg_initdb HOME BIN: creates the cluster, superuser `postgres` with password $PG_PASSWORD.
pg_initdb() {
  local home=$1 bin=$2 pwfile=$1/.pwfile
  say "postgres: creating a cluster in $home/data"
  rm -rf "$home/data"
  (umask 077 && printf '%s\n' "$PG_PASSWORD" >"$pwfile")
  chown "$(pg_owner)": "$pwfile"
  if ! as_pg "$bin/initdb" -D "$home/data" -U postgres --pwfile="$pwfile" -E UTF8 --no-locale \
    --auth-local=peer --auth-host=scram-sha-256 >"$home/initdb.log" 2>&1; then
    rm -f "$pwfile"
    show_tail "$home/initdb.log"
    die "postgres: initdb failed"
  fi
  rm -f "$pwfile"
}

pg_up() {
  local bin home ver
  bin=$(pg_bindir) || die "postgres: no server under /usr/lib/postgresql/*/bin"
  ver=$(basename "$(dirname "$bin")")
  home=$(pg_home create)

  if pg_running "$home"; then
    if pg_wait "$home" 30; then
      say "postgres: already running on 127.0.0.1:$PG_PORT"
      return 0
    fi
    pg_running "$home" &&
      die "postgres runs from $home/data but refuses postgres:$PG_PASSWORD on 127.0.0.1:$PG_PORT"
  fi

  local orphan
  if orphan=$(find_pid "/bin/postgres -D $home/data "); then
    # Its data folder was removed under it (rm -rf .services without down.sh). SIGINT is
    # PostgreSQL's fast shutdown.
    say "postgres: found this checkout's server running without its data folder"
    stop_pid "$orphan" postgres 30 INT
  fi

  if [[ -f $home/data/PG_VERSION ]]; then
    [[ $(<"$home/data/PG_VERSION") == "$ver" ]] ||
      die "postgres: the cluster in $home/data is version $(<"$home/data/PG_VERSION"), the server is $ver; reset with down.sh && rm -rf $STATE_DIR"
  else
    pg_initdb "$home" "$bin"
  fi
  mkdir -p "$home/run"
  chown "$(pg_owner)": "$home/run"
  pg_configure "$home"

  port_open "$PG_PORT" && pg_free_port
  port_open "$PG_PORT" && die "postgres: port $PG_PORT is taken by another process: $(port_owner "$PG_PORT")"

  say "postgres: starting $ver on 127.0.0.1:$PG_PORT"
  if ! as_pg "$bin/pg_ctl" start -D "$home/data" -l "$home/postgres.log" -w -t 60 -s 9>&-; then
    show_tail "$home/postgres.log"
    die "postgres did not start (log: $home/postgres.log)"
  fi
  pg_answers || {
    show_tail "$home/postgres.log"
    die "postgres started but refuses postgres:$PG_PASSWORD on 127.0.0.1:$PG_PORT"
  }
  say "postgres: up on 127.0.0.1:$PG_PORT ($PG_URL)"
}

pg_down() {
  local home
  if home=$(pg_home) && pg_running "$home"; then
    pg_stop_dir "$home"
  else
    say "postgres: not running"
  fi
}
