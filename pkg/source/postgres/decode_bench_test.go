package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/source/sourcetest"
)

// The streamed hot path of this source without the network: a pgoutput
// Insert or Update message goes through handle (parsePgoutput, the copy
// of the message, decodeTuple, decodeText, the event) and the encoder's key and value,
// appended into buffers reused from one event to the next as the pipeline
// would if it reused them. allocs/op is the allocations per streamed event
// (docs/hot-path.md: at most 2). Run with
//
//	go test -run '^$' -bench DecodeEncode -benchmem ./pkg/source/postgres

// benchColumns are the ten columns of the benchmark table, one of each
// type a typical table has, with a value as PostgreSQL's text output
// writes it.
var benchColumns = []struct {
	name   string
	oid    uint32
	typmod int32
	typ    string
	text   string
}{
	{"id", oidInt4, -1, "int4", "1000042"},
	{"customer_id", oidInt8, -1, "int8", "9000000000077"},
	{"note", oidText, -1, "text", "please leave the parcel with the neighbour at number 12"},
	{"total", oidNumeric, 12<<16 | 2 + 4, "numeric", "1234.50"},
	{"created_at", oidTimestampTZ, -1, "timestamptz", "2024-03-01 10:00:00.123456+00"},
	{"paid", oidBool, -1, "bool", "t"},
	{"attrs", oidJSONB, -1, "jsonb", `{"gift": true, "tags": ["red", "xl"], "weight": 2.75}`},
	{"status", oidVarchar, 32 + 4, "varchar", "shipped"},
	{"due", oidDate, -1, "date", "2024-03-08"},
	{"thumb", oidBytea, -1, "bytea", `\x89504e470d0a1a0a0000000d49484452`},
}

// benchSource is a Source that knows the benchmark table as relation 16384,
// as if its Relation message had been read.
func benchSource() *Source {
	rel := &relation{oid: 16384, schema: "public", name: "orders", key: []string{"id"}, replident: "d"}
	for _, c := range benchColumns {
		rel.columns = append(rel.columns, catalogColumn{name: c.name, typOID: c.oid, typmod: c.typmod, typName: c.typ, notNull: c.name == "id"})
	}
	cfg := &pgx.ConnConfig{}
	cfg.Database = "shop"
	s := &Source{connCfg: cfg, rels: map[uint32]*relation{rel.oid: rel}, captured: map[uint32]string{rel.oid: "public.orders"}}
	s.opts.TopicPrefix = "shop"
	s.tables = map[uint32]*change.Table{rel.oid: rel.table(cfg.Database, nil, nil)}
	return s
}

// benchMessage is an Insert ('I') or an Update ('U', default replica
// identity, key unchanged: no old tuple) of the benchmark row, every
// column in text format.
func benchMessage(op byte) []byte {
	var texts []string
	for _, c := range benchColumns {
		texts = append(texts, c.text)
	}
	if op == 'U' {
		return encodePgoutput(&pglogrepl.UpdateMessage{RelationID: 16384, NewTuple: textTuple(texts...)})
	}
	return insertMessage(16384, texts...)
}

func BenchmarkDecodeEncode(b *testing.B) {
	for _, bm := range []struct {
		name string
		op   byte
	}{{"insert", 'I'}, {"update", 'U'}} {
		b.Run(bm.name, func(b *testing.B) {
			s := benchSource()
			enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "shop"})
			var key, value []byte
			emit := func(_ context.Context, ev *change.Event) error {
				var err error
				if key, _, err = enc.AppendKey(key[:0], ev); err != nil {
					return err
				}
				value, err = enc.AppendValue(value[:0], ev, 1_709_287_200_000_000)
				return err
			}
			ctx := context.Background()
			tx := txState{finalLSN: 0x16B3748, xid: 4242, commitMicros: 1_709_287_200_123_456}
			xld := pglogrepl.XLogData{WALStart: 0x16B3700, WALData: benchMessage(bm.op)}
			if err := s.handle(ctx, &tx, xld, sourcetest.FuncStream(emit)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				// Each change at an LSN of its own, as in a stream (changes
				// sharing one are the rows of a multi-row insert).
				xld.WALStart += 0x100
				if err := s.handle(ctx, &tx, xld, sourcetest.FuncStream(emit)); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(key) + len(value)))
		})
	}
}
