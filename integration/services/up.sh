#!/usr/bin/env bash
# up.sh [SERVICE...] — installs what is missing and starts the real services that the
# integration tests talk to, all on 127.0.0.1:
#   kafka     Apache Kafka 4, one KRaft node, PLAINTEXT 127.0.0.1:9092 (no topic auto-creation)
#   postgres  PostgreSQL, 127.0.0.1:5432, wal_level=logical, postgres/postgres
#   mariadb   MariaDB, 127.0.0.1:3306, binlog ROW/FULL with GTIDs, root/root
#   moto      AWS emulator (DynamoDB, SSM, SQS, STS, …), http://127.0.0.1:5000
#   dynalite  a second DynamoDB engine for the checkpoint store's tests, http://127.0.0.1:4567
#   mongo     mongo-java-server (wire-compatible MongoDB, in memory), 127.0.0.1:27017
#   apicurio  a Confluent-compatible schema registry (Avro tests), http://127.0.0.1:8081
# With no SERVICE, starts them all. Also installs kcat and jq. Services that already run and
# answer are left alone, so running it again is cheap. State: <repo>/.services (see README.md).

source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
source "$SERVICES_DIR/kafka.sh"
source "$SERVICES_DIR/postgres.sh"
source "$SERVICES_DIR/mariadb.sh"
source "$SERVICES_DIR/moto.sh"
source "$SERVICES_DIR/dynalite.sh"
source "$SERVICES_DIR/mongo.sh"
source "$SERVICES_DIR/apicurio.sh"

ALL=(postgres mariadb kafka moto dynalite mongo apicurio)
services=("$@")
((${#services[@]})) || services=("${ALL[@]}")
for s in "${services[@]}"; do
  [[ " ${ALL[*]} " == *" $s "* ]] || die "unknown service '$s' (known: ${ALL[*]})"
done

lock_state_dir

# One apt-get run for everything that is missing.
packages=()
command -v kcat >/dev/null || packages+=(kcat)
command -v jq >/dev/null || packages+=(jq)
for s in "${services[@]}"; do
  case $s in
  kafka) mapfile -t -O "${#packages[@]}" packages < <(kafka_packages) ;;
  postgres) mapfile -t -O "${#packages[@]}" packages < <(pg_packages) ;;
  mariadb) mapfile -t -O "${#packages[@]}" packages < <(mariadb_packages) ;;
  moto) mapfile -t -O "${#packages[@]}" packages < <(moto_packages) ;;
  dynalite) mapfile -t -O "${#packages[@]}" packages < <(dynalite_packages) ;;
  mongo) mapfile -t -O "${#packages[@]}" packages < <(mongo_packages) ;;
  apicurio) mapfile -t -O "${#packages[@]}" packages < <(apicurio_packages) ;;
  esac
done
((${#packages[@]} == 0)) || apt_install "${packages[@]}"

for s in "${services[@]}"; do
  case $s in
  kafka) kafka_up ;;
  postgres) pg_up ;;
  mariadb) mariadb_up ;;
  moto) moto_up ;;
  dynalite) dynalite_up ;;
  mongo) mongo_up ;;
  apicurio) apicurio_up ;;
  esac
done
# Debezium (embedded engine + connectors) for the side-by-side tests and the benchmark: jars
# cached in .services/debezium, nothing to start. Needs javac (openjdk-17-jdk-headless).
command -v javac >/dev/null || apt_install openjdk-17-jdk-headless
bash "$REPO_ROOT/integration/debezium/build.sh" || die "integration/debezium/build.sh failed"
say "ready: ${services[*]}"
