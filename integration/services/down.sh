#!/usr/bin/env bash
# down.sh [SERVICE...] — stops the services that up.sh started (SIGTERM or a fast shutdown,
# then a kill after a timeout). With no SERVICE, stops them all. Keeps their state in
# <repo>/.services; safe to run when nothing runs.

source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
source "$SERVICES_DIR/kafka.sh"
source "$SERVICES_DIR/postgres.sh"
source "$SERVICES_DIR/mariadb.sh"
source "$SERVICES_DIR/moto.sh"
source "$SERVICES_DIR/dynalite.sh"
source "$SERVICES_DIR/mongo.sh"
source "$SERVICES_DIR/apicurio.sh"

ALL=(kafka postgres mariadb moto dynalite mongo apicurio tls-sources)
services=("$@")
((${#services[@]})) || services=("${ALL[@]}")
for s in "${services[@]}"; do
  [[ " ${ALL[*]} " == *" $s "* ]] || die "unknown service '$s' (known: ${ALL[*]})"
done

[[ -d $STATE_DIR ]] || exit 0
# The fault tests' private servers (faults.sh), stopped with everything.
((${#@})) || "$SERVICES_DIR/faults.sh" all down || true
# The three-broker cluster of the Kafka fault tests (kafka-cluster.sh), likewise.
((${#@})) || "$SERVICES_DIR/kafka-cluster.sh" down || true
lock_state_dir

for s in "${services[@]}"; do
  case $s in
  kafka) kafka_down ;;
  postgres) pg_down ;;
  mariadb) mariadb_down ;;
  moto) moto_down ;;
  dynalite) dynalite_down ;;
  mongo) mongo_down ;;
  apicurio) apicurio_down ;;
  tls-sources) "$SERVICES_DIR/tls-sources.sh" down ;; # started only by the tests that need them
  esac
done
