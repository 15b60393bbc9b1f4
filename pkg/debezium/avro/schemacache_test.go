package avro_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// TestRecoderSchemasBounded: records of ever new schemas on one subject
// (expanded outbox payloads whose keys are data) do not make the Recoder's
// memory grow without end: after thousands of distinct schemas its heap is
// that of about a thousand, and a schema seen long ago is still encoded.
func TestRecoderSchemasBounded(t *testing.T) {
	rec := &avro.Recoder{Registry: fixedRegistry{}, Value: true}
	ctx := context.Background()
	msg := func(i int) []byte {
		var fields, values []string
		for f := 0; f < 30; f++ {
			fields = append(fields, fmt.Sprintf(`{"type":"int32","optional":true,"field":"k%d_item_quantity_%d"}`, i, f))
			values = append(values, fmt.Sprintf(`"k%d_item_quantity_%d":%d`, i, f, f))
		}
		return []byte(`{"schema":{"type":"struct","fields":[` + strings.Join(fields, ",") + `],"optional":true,"name":"payload"},"payload":{` + strings.Join(values, ",") + `}}`)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	if _, err := rec.RecodeValue(ctx, "outbox.event.order", msg(0)); err != nil {
		t.Fatal(err)
	}
	before := heap()
	const n = 6000
	for i := 1; i < n; i++ {
		if _, err := rec.RecodeValue(ctx, "outbox.event.order", msg(i)); err != nil {
			t.Fatal(err)
		}
	}
	grown := heap() - before
	if grown > 16<<20 {
		t.Errorf("the Recoder's heap grew by %d MiB over %d schemas of one subject", grown>>20, n)
	}
	if out, err := rec.RecodeValue(ctx, "outbox.event.order", msg(0)); err != nil || len(out) == 0 {
		t.Errorf("the first schema again: %v", err)
	}
}
