package pipeline

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Key and value buffers are reused once their records' promises ran
// (recordbuf.go). A buffer reused early would put one row's bytes into
// another's record while it waits in the producer: a key that names another
// row than its value, or JSON cut off. Many thousand records in flight
// against the local broker, deletes with their tombstones (two records on
// one buffer), then every record read back: each key names its value's
// row, each delete is followed by its tombstone, nothing is missing.
func TestRecordBuffersKeepEveryRecord(t *testing.T) {
	addr := localBroker(t)
	p := emitBenchPipeline(t, addr)
	p.DeleteMode = "record_and_tombstone"
	ctx := context.Background()
	evs := emitBenchEvents(emitBenchTable(), 30_000)
	want := 0
	for _, ev := range evs {
		if err := p.emit(ctx, ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Op {
		case change.OpNone:
		case change.OpDelete:
			want += 2
		default:
			want++
		}
	}
	if err := p.Producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := context.Cause(p.produceCtx); err != nil {
		t.Fatal(err)
	}

	topic, _ := p.Encoder.TableTopic(emitBenchTable())
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var got int
	deleted := map[int32]int64{} // per partition: the id of a delete whose tombstone is due
	for got < want {
		fs := cl.PollFetches(rctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d of %d records: %v", got, want, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			var key struct {
				Payload struct{ ID int64 } `json:"payload"`
			}
			if err := json.Unmarshal(r.Key, &key); err != nil {
				t.Fatalf("record at %d/%d: key %q: %v", r.Partition, r.Offset, r.Key, err)
			}
			part := r.Partition
			if r.Value == nil {
				if id, ok := deleted[part]; !ok || id != key.Payload.ID {
					t.Fatalf("tombstone at %d/%d for id %d follows no delete of it (pending %v)", r.Partition, r.Offset, key.Payload.ID, deleted)
				}
				delete(deleted, part)
				return
			}
			var val struct {
				Payload struct {
					Op            string
					Before, After *struct{ ID int64 }
				} `json:"payload"`
			}
			if err := json.Unmarshal(r.Value, &val); err != nil {
				t.Fatalf("record at %d/%d: value is not JSON: %v", r.Partition, r.Offset, err)
			}
			row := val.Payload.After
			if val.Payload.Op == "d" {
				row = val.Payload.Before
				deleted[part] = key.Payload.ID
			}
			if row == nil || row.ID != key.Payload.ID {
				t.Fatalf("record at %d/%d: key names id %d, value is of %+v", r.Partition, r.Offset, key.Payload.ID, row)
			}
		})
	}
	if got != want || len(deleted) != 0 {
		t.Fatalf("read %d records, want %d; deletes without their tombstone: %v", got, want, deleted)
	}
}

// localBroker is the address of the broker make services-up starts; the
// test fails at once when nothing listens there.
func localBroker(t *testing.T) string {
	t.Helper()
	const addr = "127.0.0.1:9092"
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("no broker on %s (make services-up): %v", addr, err)
	}
	conn.Close()
	return addr
}
