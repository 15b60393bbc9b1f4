#!/usr/bin/env bash
# faults.sh SERVICE ACTION — private servers for the fault tests (integration/faults/),
# so that restarting or killing them never disturbs the shared services other tests use.
#
#   faults.sh mariadb up        start (creating it on first use) MariaDB on 127.0.0.1:3316
#   faults.sh mariadb-replica up|stop|down   another on 127.0.0.1:3318 with server_id 2: the
#                               GTID replica the failover test promotes
#   faults.sh mariadb restart   clean shutdown (SIGTERM), then start again
#   faults.sh mariadb stop      clean shutdown
#   faults.sh mariadb down      stop if running (down.sh calls it)
#   faults.sh postgres up|stop|down                    PostgreSQL on 127.0.0.1:5442
#   faults.sh postgres restart-fast|restart-immediate  pg_ctl restart -m fast|immediate
#   faults.sh mariadb-minimal up|stop|down   a second one on 127.0.0.1:3317 with
#                               binlog_row_metadata = MINIMAL (the schema history tests)
#   faults.sh all down
#
# State: $STATE_DIR/faults/{mariadb,mariadb-minimal,mariadb-replica,postgres}. Same settings as
# mariadb.sh (binlog ROW, FULL images and metadata, GTIDs; root/root) and postgres.sh (wal_level
# logical; postgres/postgres), over TCP. Each server also listens on 127.0.0.2: the blocked-port
# tests (integration/faults/blockport_test.go) drop the packets of that address only, so the test's
# writer keeps committing through 127.0.0.1 while the pipeline's connections go silent.

source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# The servers started here outlive this script.
close_inherited_fds

FAULT_MARIADB_PORT=3316
FAULT_HOME=$STATE_DIR/faults/mariadb

fault_owner() { if ((EUID == 0)); then echo mysql; else id -un; fi; }
fault_as() { if ((EUID == 0)); then (cd / && runuser -u mysql -- "$@"); else "$@"; fi; }
fault_pid() { running_pid "$FAULT_HOME/run/mariadb.pid" "--defaults-file=$FAULT_HOME/my.cnf"; }
fault_sql() {
  local user=root
  ((EUID == 0)) || user=$(id -un)
  timeout 30 mariadb --no-defaults -S "$FAULT_HOME/run/mariadb.sock" -u "$user" -N -B -e "$1"
}

fault_mariadb_start() {
  local h=$FAULT_HOME
  if fault_pid >/dev/null; then return 0; fi
  mkdir -p "$h/run" "$h/binlog" "$h/data"
  cat >"$h/my.cnf" <<EOF
# Written by integration/services/faults.sh.
[mariadbd]
datadir = $h/data
socket = $h/run/mariadb.sock
pid-file = $h/run/mariadb.pid
log-error = $h/mariadb.log
bind-address = 127.0.0.1,127.0.0.2
port = $FAULT_MARIADB_PORT
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
server-id = ${FAULT_SERVER_ID:-1}
log-bin = $h/binlog/mariadb-bin
binlog-format = ROW
binlog-row-image = FULL
binlog-row-metadata = ${FAULT_ROW_METADATA:-FULL}
log-slave-updates = ON
gtid-strict-mode = ON
binlog-expire-logs-seconds = 604800
innodb-buffer-pool-size = 32M
innodb-log-file-size = 48M
performance-schema = OFF
max-connections = 100
EOF
  chown "$(fault_owner)": "$STATE_DIR/faults"
  chown -R "$(fault_owner)": "$h"
  if [[ ! -d $h/data/mysql ]]; then
    fault_as mariadb-install-db --defaults-file="$h/my.cnf" --user="$(fault_owner)" --skip-test-db \
      >"$h/install.log" 2>&1 || { show_tail "$h/install.log"; die "faults: mariadb-install-db failed"; }
  fi
  port_open "$FAULT_MARIADB_PORT" && die "faults: port $FAULT_MARIADB_PORT is taken: $(port_owner "$FAULT_MARIADB_PORT")"
  setsid /usr/sbin/mariadbd --defaults-file="$h/my.cnf" --user="$(fault_owner)" \
    </dev/null >>"$h/mariadb.log" 2>&1 9>&- &
  local pid=$! deadline=$((SECONDS + 90))
  until fault_sql 'SELECT 1' >/dev/null 2>&1; do
    alive "$pid" || { show_tail "$h/mariadb.log"; die "faults: mariadb did not start"; }
    ((SECONDS < deadline)) || die "faults: mariadb did not start in 90 s"
    sleep 0.3
  done
  fault_sql "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY 'root';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION; FLUSH PRIVILEGES;" >/dev/null
}

fault_mariadb_stop() {
  local pid
  pid=$(fault_pid) || return 0
  stop_pid "$pid" mariadb 60
}

FAULT_PG_PORT=5442
FAULT_PG_HOME=$STATE_DIR/faults/postgres
fault_pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
fault_as_pg() { if ((EUID == 0)); then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
fault_pg_owner() { if ((EUID == 0)); then echo postgres; else id -un; fi; }

fault_pg_up() {
  local h=$FAULT_PG_HOME bin
  bin=$(fault_pg_bin) || die "faults: no PostgreSQL server installed"
  mkdir -p "$h/run"
  chown "$(fault_pg_owner)": "$h" "$h/run"
  if [[ ! -f $h/data/PG_VERSION ]]; then
    printf 'postgres\n' >"$h/pwfile"
    chown "$(fault_pg_owner)": "$h/pwfile"
    fault_as_pg "$bin/initdb" -D "$h/data" -U postgres --pwfile="$h/pwfile" -E UTF8 --no-locale \
      --auth-local=peer --auth-host=scram-sha-256 >"$h/initdb.log" 2>&1 ||
      { show_tail "$h/initdb.log"; die "faults: initdb failed"; }
  fi
  # Rewritten at every start, so an existing data directory gets new settings. A short
  # wal_sender_timeout makes the replication silence limit (10 s) quick to reach in tests.
  cat >"$h/data/faults.conf" <<EOF
listen_addresses = '127.0.0.1,127.0.0.2'
port = $FAULT_PG_PORT
unix_socket_directories = '$h/run'
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
shared_buffers = 32MB
wal_sender_timeout = 10s
EOF
  cat >"$h/data/pg_hba.conf" <<'EOF'
local   all          all                  peer
local   replication  all                  peer
host    all          all   127.0.0.0/8    scram-sha-256
host    replication  all   127.0.0.0/8    scram-sha-256
EOF
  grep -q "^include_if_exists = 'faults.conf'" "$h/data/postgresql.conf" ||
    echo "include_if_exists = 'faults.conf'" >>"$h/data/postgresql.conf"
  chown "$(fault_pg_owner)": "$h/data/faults.conf" "$h/data/pg_hba.conf"
  fault_as_pg "$bin/pg_ctl" status -D "$h/data" >/dev/null 2>&1 && return 0
  port_open "$FAULT_PG_PORT" && die "faults: port $FAULT_PG_PORT is taken: $(port_owner "$FAULT_PG_PORT")"
  fault_as_pg "$bin/pg_ctl" start -D "$h/data" -l "$h/postgres.log" -w -t 60 -s 9>&- ||
    { show_tail "$h/postgres.log"; die "faults: postgres did not start"; }
}

# fault_pg_ctl ARGS...: pg_ctl ARGS (stop -m fast, restart -m immediate, …) when it runs.
fault_pg_ctl() {
  local bin
  bin=$(fault_pg_bin) || return 0
  [[ -f $FAULT_PG_HOME/data/PG_VERSION ]] || return 0
  fault_as_pg "$bin/pg_ctl" status -D "$FAULT_PG_HOME/data" >/dev/null 2>&1 || return 0
  fault_as_pg "$bin/pg_ctl" "$@" -D "$FAULT_PG_HOME/data" -l "$FAULT_PG_HOME/postgres.log" -w -t 60 -s 9>&-
}

# fault_minimal CMD: CMD for the MINIMAL-metadata MariaDB (another home, port and setting).
fault_minimal() {
  FAULT_HOME=$STATE_DIR/faults/mariadb-minimal FAULT_MARIADB_PORT=3317 FAULT_ROW_METADATA=MINIMAL "$@"
}

# fault_replica CMD: CMD for the replica MariaDB (another home, port and server_id).
fault_replica() {
  FAULT_HOME=$STATE_DIR/faults/mariadb-replica FAULT_MARIADB_PORT=3318 FAULT_SERVER_ID=2 "$@"
}

case "${1:-} ${2:-}" in
"postgres up") fault_pg_up ;;
"postgres restart-fast") fault_pg_ctl restart -m fast ;;
"postgres restart-immediate") fault_pg_ctl restart -m immediate ;;
"postgres stop" | "postgres down") fault_pg_ctl stop -m fast ;;

"mariadb up" | "mariadb start") fault_mariadb_start ;;
"mariadb restart") fault_mariadb_stop && fault_mariadb_start ;;
"mariadb stop" | "mariadb down") fault_mariadb_stop ;;
"mariadb-minimal up" | "mariadb-minimal start") fault_minimal fault_mariadb_start ;;
"mariadb-minimal stop" | "mariadb-minimal down") fault_minimal fault_mariadb_stop ;;
"mariadb-replica up" | "mariadb-replica start") fault_replica fault_mariadb_start ;;
"mariadb-replica stop" | "mariadb-replica down") fault_replica fault_mariadb_stop ;;
"all down") fault_mariadb_stop && fault_minimal fault_mariadb_stop && fault_replica fault_mariadb_stop && fault_pg_ctl stop -m fast ;;
*) die "usage: faults.sh mariadb up|restart|stop|down | faults.sh mariadb-minimal|mariadb-replica up|stop|down | faults.sh postgres up|restart-fast|restart-immediate|stop|down | faults.sh all down" ;;
esac
