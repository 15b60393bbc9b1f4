# mariadb.sh — our own MariaDB server (Debian's mariadb-server package) on 127.0.0.1:3306,
# ready for change data capture: binary log in ROW format with full row images and full
# row metadata, GTIDs, server_id 1. Sourced by up.sh and down.sh after env.sh.
#
# State: $STATE_DIR/mariadb/{data,binlog,run,my.cnf,mariadb.log}. The server runs as the
# `mysql` OS user when we are root, so that folder belongs to it; when that user cannot reach
# the checkout (say, under /root) or the socket path would be too long, the folder lives in
# /var/lib/tributary/<hash of the checkout path>/mariadb and $STATE_DIR/mariadb links to it.
# Debian's own instance (/var/lib/mysql, systemd) is never touched.

MARIADB_PORT=3306
MARIADB_PASSWORD=root # of `root`@`%` (and root@localhost over the socket)
MARIADB_URL="mysql://root:$MARIADB_PASSWORD@127.0.0.1:$MARIADB_PORT/"

# mariadb_packages: the Debian packages MariaDB needs that are missing.
mariadb_packages() {
  [[ -x /usr/sbin/mariadbd ]] || echo mariadb-server
  command -v mariadb >/dev/null || echo mariadb-client
}

# mariadb_owner: the OS user that runs the server and owns its files.
mariadb_owner() { if ((EUID == 0)); then echo mysql; else id -un; fi; }

# as_mariadb CMD...: runs CMD as mariadb_owner.
as_mariadb() {
  if ((EUID == 0)); then
    (cd / && runuser -u mysql -- "$@")
  else
    "$@"
  fi
}

# mariadb_home [create]: prints the server's folder, choosing (and creating) it on first use.
mariadb_home() { server_home mariadb "$(mariadb_owner)" as_mariadb mariadb_stop_dir "${1:-}"; }

# mariadb_pid HOME: prints the pid of the server running from HOME.
mariadb_pid() { running_pid "$1/run/mariadb.pid" "--defaults-file=$1/my.cnf"; }

# mariadb_answers: true when root can log in over TCP with its password.
mariadb_answers() {
  MYSQL_PWD=$MARIADB_PASSWORD timeout 5 mariadb --no-defaults --protocol=TCP -h 127.0.0.1 \
    -P "$MARIADB_PORT" -u root -N -B -e 'SELECT 1' 2>/dev/null | grep -qx 1
}

# mariadb_socket_sql HOME SQL: runs SQL as the administrator over the unix socket (the
# account mariadb-install-db made for the OS user, authenticated by unix_socket).
mariadb_socket_sql() {
  local user=root
  ((EUID == 0)) || user=$(id -un)
  timeout 30 mariadb --no-defaults -S "$1/run/mariadb.sock" -u "$user" -N -B -e "$2"
}

# mariadb_wait HOME SECONDS PID: waits until the server (process PID) accepts connections on
# its socket; fails early when it stops running.
mariadb_wait() {
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    mariadb_socket_sql "$1" 'SELECT 1' >/dev/null 2>&1 && return 0
    alive "$3" || return 1
    sleep 0.5
  done
  return 1
}

# mariadb_stop_dir HOME: stops the server of HOME (SIGTERM is a clean shutdown).
mariadb_stop_dir() {
  local pid
  pid=$(mariadb_pid "$1") || return 0
  stop_pid "$pid" mariadb 60
}

# mariadb_configure HOME: (re)writes the server's option file.
mariadb_configure() {
  local home=$1
  cat >"$home/my.cnf" <<EOF
# Written by integration/services/mariadb.sh at each start: edit that script, not this file.
[mariadbd]
datadir = $home/data
socket = $home/run/mariadb.sock
pid-file = $home/run/mariadb.pid
log-error = $home/mariadb.log
bind-address = 127.0.0.1
port = $MARIADB_PORT
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci

# Change data capture: a row-based binary log with full images and GTIDs.
server-id = 1
log-bin = $home/binlog/mariadb-bin
binlog-format = ROW
binlog-row-image = FULL
# Column names and types in every table map event: rows are decoded with the shape they
# were written under (pkg/source/mysql/shape.go). Dynamic: SET GLOBAL applies it at once.
binlog-row-metadata = FULL
log-slave-updates = ON
gtid-strict-mode = ON
binlog-expire-logs-seconds = 604800

# Small: the test machines are shared.
innodb-buffer-pool-size = 64M
innodb-log-file-size = 48M
performance-schema = OFF
max-connections = 200
EOF
  chown "$(mariadb_owner)": "$home/my.cnf"
}

# mariadb_init HOME: creates the system tables, then the root accounts with $MARIADB_PASSWORD.
mariadb_init() {
  local home=$1
  say "mariadb: creating a server in $home/data"
  rm -rf "$home/data" "$home/binlog"
  mkdir -p "$home/data" "$home/binlog"
  chown "$(mariadb_owner)": "$home/data" "$home/binlog"
  if ! as_mariadb mariadb-install-db --defaults-file="$home/my.cnf" --user="$(mariadb_owner)" \
    --skip-test-db >"$home/install.log" 2>&1; then
    show_tail "$home/install.log"
    die "mariadb: mariadb-install-db failed"
  fi
}

# mariadb_accounts HOME: root over TCP with the password, from any loopback address.
mariadb_accounts() {
  mariadb_socket_sql "$1" "
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$MARIADB_PASSWORD';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
FLUSH PRIVILEGES;" >/dev/null || die "mariadb: could not create the root account"
}

mariadb_up() {
  local home pid
  [[ -x /usr/sbin/mariadbd ]] || die "mariadb: /usr/sbin/mariadbd is not installed"
  home=$(mariadb_home create)

  if pid=$(mariadb_pid "$home"); then
    if mariadb_answers; then
      say "mariadb: already running on 127.0.0.1:$MARIADB_PORT"
      return 0
    fi
    mariadb_wait "$home" 30 "$pid" && mariadb_accounts "$home" && mariadb_answers && return 0
    die "mariadb runs from $home but refuses root:$MARIADB_PASSWORD on 127.0.0.1:$MARIADB_PORT"
  fi

  local orphan
  if orphan=$(find_pid "--defaults-file=$home/my.cnf"); then
    # Its folder was removed under it (rm -rf .services without down.sh).
    say "mariadb: found this checkout's server running without its state folder"
    stop_pid "$orphan" mariadb 60
  fi

  mkdir -p "$home/run" "$home/binlog"
  chown "$(mariadb_owner)": "$home/run" "$home/binlog"
  mariadb_configure "$home"
  [[ -d $home/data/mysql ]] || mariadb_init "$home"

  port_open "$MARIADB_PORT" &&
    die "mariadb: port $MARIADB_PORT is taken by another process: $(port_owner "$MARIADB_PORT")"

  say "mariadb: starting $(/usr/sbin/mariadbd --version | awk '{print $3}') on 127.0.0.1:$MARIADB_PORT"
  # setsid: the server must outlive this script and its terminal.
  setsid /usr/sbin/mariadbd --defaults-file="$home/my.cnf" --user="$(mariadb_owner)" \
    </dev/null >>"$home/mariadb.log" 2>&1 9>&- &
  if ! mariadb_wait "$home" 90 $!; then
    show_tail "$home/mariadb.log"
    die "mariadb did not start (log: $home/mariadb.log)"
  fi
  mariadb_accounts "$home"
  mariadb_answers || {
    show_tail "$home/mariadb.log"
    die "mariadb started but refuses root:$MARIADB_PASSWORD on 127.0.0.1:$MARIADB_PORT"
  }
  say "mariadb: up on 127.0.0.1:$MARIADB_PORT ($MARIADB_URL)"
}

mariadb_down() {
  local home
  if home=$(mariadb_home) && mariadb_pid "$home" >/dev/null; then
    mariadb_stop_dir "$home"
  else
    say "mariadb: not running"
  fi
}
