package avro_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// TestRecodeTransactionMarks: with format.provide_transaction_metadata and
// Avro, a transaction's BEGIN and END (the END with its tables' counts, the
// BEGIN with nulls) are recoded like the rows: one key and one value schema
// for the transaction topic, the records decoding to the JSON's payloads.
func TestRecodeTransactionMarks(t *testing.T) {
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: registryURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &avro.Recoder{Registry: reg, Key: true, Value: true}
	prefix := fmt.Sprintf("avrotx%d", time.Now().UnixNano())
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: prefix})
	topic := enc.TransactionTopic()
	ctx := context.Background()
	marks := []*change.TxMark{
		{ID: "771:24023128", CommitMicros: 1_767_225_600_123_456},
		{End: true, ID: "771:24023500", CommitMicros: 1_767_225_600_123_456, Count: 3,
			Tables: []change.TxTable{{Name: "shop.public.a", Count: 2}, {Name: "shop.public.b", Count: 1}}},
		{ID: "772:24023900", CommitMicros: 1_767_225_601_000_000},
		{End: true, ID: "772:24024000", CommitMicros: 1_767_225_601_000_000, Count: 1, Tables: []change.TxTable{{Name: "shop.public.a", Count: 1}}},
	}
	for i, m := range marks {
		buf, vstart := enc.AppendTxMark(nil, m)
		key, value := buf[:vstart:vstart], buf[vstart:]
		k, err := rec.RecodeKey(ctx, topic, key)
		if err != nil {
			t.Fatalf("mark %d key: %v", i, err)
		}
		checkRecord(t, reg, key, k, fmt.Sprintf("mark %d key", i))
		v, err := rec.RecodeValue(ctx, topic, value)
		if err != nil {
			t.Fatalf("mark %d value: %v", i, err)
		}
		checkRecord(t, reg, value, v, fmt.Sprintf("mark %d value", i))
	}
	if n := rec.Registrations(); n != 2 {
		t.Errorf("%d registrations, want 2 (the transaction topic's key and value)", n)
	}
}
