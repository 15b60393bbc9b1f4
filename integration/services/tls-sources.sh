#!/usr/bin/env bash
# tls-sources.sh up|down — a PostgreSQL on 127.0.0.1:5433 and a MariaDB on 127.0.0.1:3307
# that accept TLS only, with a certificate signed by a test CA made here with openssl. Only
# the tests of verified TLS to the source (integration/tls/source_tls_test.go) start them; down.sh
# stops them. They are the shared servers' scripts (postgres.sh, mariadb.sh) with another
# port, another folder and these settings on top:
#   - certs/ (made once, remade when the server certificate has under a day left):
#     ca.pem (CN "Tributary test source CA"), server.crt for IP 127.0.0.1 only (so a
#     connection to "localhost" has the wrong host name), other-ca.pem (an authority that
#     signed nothing here), client.pem + client.key (CN tls_cert_user).
#   - PostgreSQL: ssl=on, hostssl only (plaintext rejected); postgres/postgres by password,
#     tls_cert_user (superuser) by client certificate only (`cert`).
#   - MariaDB: require_secure_transport=ON; root/root, and tls_cert_user/tls_cert_user
#     REQUIRE X509 (a certificate signed by the CA as well as the password).
# State: .services/tls-sources/{certs,postgres,mariadb}.

source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
source "$SERVICES_DIR/postgres.sh"
source "$SERVICES_DIR/mariadb.sh"

TLS_HOME=$STATE_DIR/tls-sources
CERTS=$TLS_HOME/certs
PG_PORT=5433
PG_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres"
MARIADB_PORT=3307
MARIADB_URL="mysql://root:$MARIADB_PASSWORD@127.0.0.1:$MARIADB_PORT/"

# Our own lock: the shared servers' up.sh/down.sh hold $STATE_DIR/.lock, and down.sh runs us.
lock_state_dir() {
  mkdir -p "$TLS_HOME"
  exec 9>"$TLS_HOME/.lock"
  flock -w 600 9 || die "another tls-sources.sh holds $TLS_HOME/.lock"
}

pg_home() { server_home tls-sources/postgres "$(pg_owner)" as_pg pg_stop_dir "${1:-}"; }
mariadb_home() { server_home tls-sources/mariadb "$(mariadb_owner)" as_mariadb mariadb_stop_dir "${1:-}"; }

# tls_certs: the test CA and certificates, made once.
tls_certs() {
  local d=$CERTS
  if [[ -s $d/client.key ]] && openssl x509 -checkend 86400 -noout -in "$d/server.crt" >/dev/null 2>&1; then
    return 0
  fi
  say "tls-sources: making a test CA and certificates in $d"
  rm -rf "$d.tmp"
  mkdir -p "$d.tmp"
  (
    cd "$d.tmp" || exit 1
    umask 077
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    local ca_ext=(-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign)
    openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 3650 -subj "/CN=Tributary test source CA" "${ca_ext[@]}" &&
      openssl req -x509 "${ec[@]}" -keyout other-ca.key -out other-ca.pem -days 3650 -subj "/CN=Tributary other CA" "${ca_ext[@]}" &&
      openssl req "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=127.0.0.1" &&
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 -out server.crt \
        -extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') &&
      openssl req "${ec[@]}" -keyout client.key -out client.csr -subj "/CN=tls_cert_user" &&
      openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 -out client.pem \
        -extfile <(printf 'extendedKeyUsage=clientAuth\n') &&
      rm -f ./*.csr ./*.srl ./other-ca.key
  ) >"$TLS_HOME/openssl.log" 2>&1 || {
    show_tail "$TLS_HOME/openssl.log"
    die "tls-sources: making test certificates with openssl failed"
  }
  chmod 644 "$d.tmp"/*.pem "$d.tmp"/*.crt
  rm -rf "$d"
  mv "$d.tmp" "$d"
}

# install_server_certs DIR OWNER: the server's copies (the servers insist on owning their key).
install_server_certs() {
  install -m 644 -o "$2" "$CERTS/ca.pem" "$1/ca.pem"
  install -m 644 -o "$2" "$CERTS/server.crt" "$1/server.crt"
  install -m 600 -o "$2" "$CERTS/server.key" "$1/server.key"
}

eval "base_$(declare -f pg_configure)"
pg_configure() {
  local data=$1/data
  base_pg_configure "$1"
  install_server_certs "$data" "$(pg_owner)"
  cat >>"$data/tributary.conf" <<EOF

# TLS only, with the test CA (integration/services/tls-sources.sh).
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
ssl_ca_file = 'ca.pem'
EOF
  cat >"$data/pg_hba.conf" <<'EOF'
# Written by integration/services/tls-sources.sh at each start: edit that script, not this file.
# TYPE     DATABASE     USER           ADDRESS        METHOD
local      all          all                           peer
local      replication  all                           peer
hostssl    all          tls_cert_user  127.0.0.1/32   cert
hostssl    replication  tls_cert_user  127.0.0.1/32   cert
hostssl    all          all            127.0.0.1/32   scram-sha-256
hostssl    replication  all            127.0.0.1/32   scram-sha-256
hostnossl  all          all            0.0.0.0/0      reject
EOF
}

pg_tls_up() {
  pg_up
  PGPASSWORD=$PG_PASSWORD psql -X -w -q "host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres sslmode=require" -v ON_ERROR_STOP=1 -c "
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tls_cert_user') THEN
    CREATE ROLE tls_cert_user LOGIN SUPERUSER;
  END IF;
END \$\$;" || die "tls-sources: could not create the role tls_cert_user"
}

eval "base_$(declare -f mariadb_configure)"
mariadb_configure() {
  local home=$1
  base_mariadb_configure "$home"
  mkdir -p "$home/ssl"
  chown "$(mariadb_owner)": "$home/ssl"
  install_server_certs "$home/ssl" "$(mariadb_owner)"
  cat >>"$home/my.cnf" <<EOF

# TLS only, with the test CA (integration/services/tls-sources.sh).
ssl-ca = $home/ssl/ca.pem
ssl-cert = $home/ssl/server.crt
ssl-key = $home/ssl/server.key
require-secure-transport = ON
EOF
}

# The 10.11 client does not use TLS unless asked.
mariadb_answers() {
  MYSQL_PWD=$MARIADB_PASSWORD timeout 5 mariadb --no-defaults --ssl --protocol=TCP -h 127.0.0.1 \
    -P "$MARIADB_PORT" -u root -N -B -e 'SELECT 1' 2>/dev/null | grep -qx 1
}

eval "base_$(declare -f mariadb_accounts)"
mariadb_accounts() {
  base_mariadb_accounts "$1"
  mariadb_socket_sql "$1" "
CREATE USER IF NOT EXISTS 'tls_cert_user'@'%' IDENTIFIED BY 'tls_cert_user' REQUIRE X509;
GRANT ALL PRIVILEGES ON *.* TO 'tls_cert_user'@'%';
FLUSH PRIVILEGES;" >/dev/null || die "tls-sources: could not create the account tls_cert_user"
}

# The servers outlive this script: they must not inherit a descriptor a caller holds a lock on
# (the tests run under `flock /tmp/it.lock go test …`, whose descriptor reaches us through go
# test and the test binary), or that lock is held until the servers stop.
close_inherited_fds() {
  local fd
  for fd in $(ls /proc/$$/fd); do
    ((fd > 2 && fd != 255)) || continue
    eval "exec $fd>&-" 2>/dev/null || true
  done
}

case ${1:-} in
up)
  close_inherited_fds
  lock_state_dir
  tls_certs
  pg_tls_up
  mariadb_up
  ;;
down)
  [[ -d $TLS_HOME ]] || exit 0
  lock_state_dir
  pg_down
  mariadb_down
  ;;
*) die "usage: tls-sources.sh up|down" ;;
esac
