#!/usr/bin/env bash
# kafka-topics.sh ARGS... — Kafka's own topic tool (what `kafka-topics.sh` is in a Kafka
# download) against the broker that up.sh started; --bootstrap-server is filled in.
#   kafka-topics.sh --create --topic shop.public.orders --partitions 3
#   kafka-topics.sh --describe --topic shop.public.orders
#   kafka-topics.sh --delete --topic shop.public.orders
#   kafka-topics.sh --list

source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
source "$SERVICES_DIR/kafka.sh"

[[ -f $KAFKA_HOME/lib/.pom.sha256 ]] || die "no Kafka jars in $KAFKA_HOME/lib: run up.sh first"
exec java -Xmx256m -Djava.awt.headless=true \
  -Dkafka.logs.dir="$KAFKA_HOME/logs" -Dkafka.log.name=tools \
  -Dlog4j2.configurationFile="$SERVICES_DIR/kafka/log4j2.xml" \
  -cp "$KAFKA_HOME/lib/*" org.apache.kafka.tools.TopicCommand \
  --bootstrap-server "127.0.0.1:$KAFKA_PORT" "$@"
