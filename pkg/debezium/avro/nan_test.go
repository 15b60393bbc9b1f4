package avro_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// TestNaNIsJavasNaN: a float8 NaN is written as Java's Double.NaN, the
// bits Debezium's AvroConverter writes (0x7ff8000000000000, verified side
// by side: integration/avro TestReviewAvroNaNBitsAgainstDebezium), both
// straight from the row and recoded from the JSON; a real's as
// Float.NaN (0x7fc00000).
func TestNaNIsJavasNaN(t *testing.T) {
	tbl := &change.Table{ID: change.TableID{DB: "db", Schema: "public", Name: "nan"}, Key: []int{0}, Columns: []change.Column{
		{Name: "id", Type: change.Type{Kind: change.KindInt32, Precision: -1, Scale: -1, Length: -1}},
		{Name: "f", Type: change.Type{Kind: change.KindFloat64, Precision: -1, Scale: -1, Length: -1}, Optional: true},
		{Name: "r", Type: change.Type{Kind: change.KindFloat32, Precision: -1, Scale: -1, Length: -1}, Optional: true},
	}}
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "nan", Format: debezium.Format{Unwrap: true}})
	// Go's own NaN, as strconv.ParseFloat("NaN") gives it to the source.
	ev := &change.Event{Table: tbl, Op: change.OpCreate, Source: change.Source{Block: postgres.SourceBlock},
		After: change.Row{change.IntValue(1), change.FloatValue(math.NaN()), change.FloatValue(math.NaN())}}
	// The unwrapped row: id (int), then f and r, each [null, T] with
	// branch 1.
	want := []byte{2, 2}
	want = binary.LittleEndian.AppendUint64(want, 0x7ff8000000000000)
	want = append(want, 2)
	want = binary.LittleEndian.AppendUint32(want, 0x7fc00000)
	ctx := context.Background()
	topic := enc.Topic(tbl)
	r := &avro.Recoder{Registry: &memRegistry{}, Key: true, Value: true}
	direct, _, _, err := r.AppendValue(ctx, nil, enc, topic, ev, 0)
	if err != nil {
		t.Fatal(err)
	}
	js, err := enc.AppendValue(nil, ev, 0)
	if err != nil {
		t.Fatal(err)
	}
	recoded, err := r.RecodeValue(ctx, topic, js)
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string][]byte{"direct": direct, "recoded": recoded} {
		if len(got) < 5 || !bytes.Equal(got[5:], want) {
			t.Errorf("%s: % x, want the header and % x", what, got, want)
		}
	}
}
