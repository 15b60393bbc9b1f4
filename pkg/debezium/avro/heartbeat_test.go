package avro_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// TestRecodeHeartbeat: with format.key / format.value avro, the heartbeat
// records (destination.heartbeat) are recoded like the rows: a schema
// registered once per subject of the heartbeat topic, the records
// decoding to the JSON heartbeat's payloads.
func TestRecodeHeartbeat(t *testing.T) {
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registryURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &avro.Recoder{Registry: reg, Key: true, Value: true}
	prefix := fmt.Sprintf("avrohb%d", time.Now().UnixNano())
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: prefix})
	topic := "__debezium-heartbeat." + prefix
	ctx := context.Background()
	for i := range 3 {
		key := enc.HeartbeatKey(prefix)
		value := enc.AppendHeartbeatValue(nil, 1_767_225_600_000+int64(i))
		k, err := rec.RecodeKey(ctx, topic, key)
		if err != nil {
			t.Fatalf("heartbeat %d key: %v", i, err)
		}
		checkRecord(t, reg, key, k, fmt.Sprintf("heartbeat %d key", i))
		v, err := rec.RecodeValue(ctx, topic, value)
		if err != nil {
			t.Fatalf("heartbeat %d value: %v", i, err)
		}
		checkRecord(t, reg, value, v, fmt.Sprintf("heartbeat %d value", i))
	}
	if n := rec.Registrations(); n != 2 {
		t.Errorf("%d registrations, want 2 (the heartbeat topic's key and value)", n)
	}
}
