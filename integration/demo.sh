#!/usr/bin/env bash
# make demo: a shop database with an orders table, streamed to Kafka by
# Tributary; a few changes; the messages read back with kcat.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.services/demo"
mkdir -p "$state"
export PGPASSWORD=postgres
psql_admin() { psql -v ON_ERROR_STOP=1 -q -h 127.0.0.1 -U postgres "$@"; }

echo "== resetting the demo (database tributary_demo, topics shop.*)"
psql_admin -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'tributary_shop' AND database = 'tributary_demo'" >/dev/null
psql_admin -d postgres -c "DROP DATABASE IF EXISTS tributary_demo WITH (FORCE)" -c "CREATE DATABASE tributary_demo"
rm -rf "$state/checkpoints"
topic_exists() { kcat -b 127.0.0.1:9092 -L -t shop.public.orders 2>/dev/null | grep -q 'with [1-9][0-9]* partitions'; }
if topic_exists; then
  "$root/integration/services/kafka-topics.sh" --delete --if-exists --topic shop.public.orders >/dev/null
  for _ in $(seq 1 30); do topic_exists || break; sleep 1; done  # deletion is asynchronous
fi

psql_admin -d tributary_demo <<'SQL'
CREATE TABLE orders (
  id serial PRIMARY KEY,
  customer text NOT NULL,
  amount numeric(10,2) NOT NULL,
  paid boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO orders (customer, amount) VALUES ('ada', 12.50), ('grace', 99.00), ('linus', 5.25);
SQL

cat > "$state/shop.yaml" <<YAML
name: shop
source:
  type: postgres
  url: postgres://postgres:\${env:PGPASSWORD}@127.0.0.1:5432/tributary_demo?sslmode=disable
  tables: [public.orders]
destination:
  bootstrap_servers: 127.0.0.1:9092
  topic_prefix: shop
  disable_tls: true          # the local broker has a plaintext listener
  create_missing_topics: true
checkpoint:
  path: $state/checkpoints
YAML

echo "== starting tributary (log: $state/tributary.log)"
"$root/bin/tributary" run --config "$state/shop.yaml" >"$state/tributary.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
count() { kcat -C -b 127.0.0.1:9092 -t shop.public.orders -e -q -f '%o\n' 2>/dev/null | wc -l; }
for _ in $(seq 1 60); do [ "$(count)" -ge 3 ] && break; sleep 1; done

echo "== changing rows: insert, update, delete"
psql_admin -d tributary_demo <<'SQL'
INSERT INTO orders (customer, amount) VALUES ('margaret', 42.00);
UPDATE orders SET paid = true WHERE customer = 'grace';
DELETE FROM orders WHERE customer = 'linus';
SQL
for _ in $(seq 1 30); do [ "$(count)" -ge 6 ] && break; sleep 1; done

echo "== stopping tributary (SIGTERM: flush, checkpoint, exit 0)"
kill -TERM $pid
wait $pid && echo "tributary exited 0"
trap - EXIT

echo "== messages on shop.public.orders (key payload → op, before, after)"
kcat -C -b 127.0.0.1:9092 -t shop.public.orders -e -q -J \
  | jq -c '{partition, offset, key: (.key|fromjson|.payload), op: (.payload|fromjson|.payload.op), before: (.payload|fromjson|.payload.before), after: (.payload|fromjson|.payload.after)}'
echo "== one full message (value with schema)"
kcat -C -b 127.0.0.1:9092 -t shop.public.orders -e -q -c 1 -f '%s\n' | jq '{schema: {name: .schema.name, fields: [.schema.fields[].field]}, payload}'

# A stopped pipeline's replication slot holds every byte of WAL written
# after it: the demo removes what it left on the database (the topic stays).
echo "== removing the demo pipeline's slot, publication and checkpoint (tributary drop)"
"$root/bin/tributary" drop --config "$state/shop.yaml" --yes
