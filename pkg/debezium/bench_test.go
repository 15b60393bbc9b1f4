package debezium

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// benchTable is a typical 10-column orders table.
func benchTable() *change.Table {
	t := func(k change.Kind, p, s int) change.Type {
		return change.Type{Kind: k, Precision: p, Scale: s, Length: -1}
	}
	return &change.Table{
		ID: change.TableID{DB: "shop", Schema: "public", Name: "orders"},
		Columns: []change.Column{
			{Name: "id", Type: t(change.KindInt64, -1, -1)},
			{Name: "customer_id", Type: t(change.KindInt32, -1, -1)},
			{Name: "status", Type: t(change.KindString, -1, -1)},
			{Name: "email", Type: t(change.KindString, -1, -1), Optional: true},
			{Name: "paid", Type: t(change.KindBool, -1, -1)},
			{Name: "total", Type: t(change.KindDecimal, 12, 2)},
			{Name: "weight", Type: t(change.KindFloat64, -1, -1), Optional: true},
			{Name: "created_at", Type: t(change.KindTimestampTZ, -1, -1)},
			{Name: "shipped_at", Type: t(change.KindTimestamp, -1, -1), Optional: true},
			{Name: "notes", Type: t(change.KindString, -1, -1), Optional: true},
		},
		Key:     []int{0},
		Version: 1,
	}
}

func benchEvent() *change.Event {
	return &change.Event{
		Table: benchTable(),
		Op:    change.OpCreate,
		After: change.Row{
			change.IntValue(1_000_042),
			change.IntValue(77),
			change.TextValue("shipped"),
			change.TextValue("ada.lovelace@example.com"),
			change.IntValue(1),
			change.TextValue("1234.50"),
			change.FloatValue(2.75),
			change.IntValue(1_700_000_000_123_456),
			change.IntValue(1_700_000_360_000_000),
			{}, // NULL
		},
		Source: with(change.Source{Block: blocks["postgresql"], Name: "shop", DB: "shop", Schema: "public", Table: "orders",
			CommitMicros: 1_700_000_000_200_000, Sequence: `["123456000","123456789"]`}, "txId", 4242, "lsn", 123_456_789),
	}
}

func BenchmarkEncode10Col(b *testing.B) { benchmarkEncode(b, benchEvent()) }

// BenchmarkEncode10ColRead is BenchmarkEncode10Col for a backfilled row:
// a snapshot read, its source the one of the read before it.
func BenchmarkEncode10ColRead(b *testing.B) {
	ev := benchEvent()
	ev.Op = change.OpRead
	ev.Source.Snapshot, ev.Source.Sequence = "true", ""
	ev.Source = with(ev.Source, "txId", 0)
	benchmarkEncode(b, ev)
}

// benchmarkEncode encodes ev's key and value over and over.
func benchmarkEncode(b *testing.B, ev *change.Event) {
	e := NewEncoder(Options{TopicPrefix: "shop"})
	var kbuf, vbuf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		kbuf, _, err = e.AppendKey(kbuf[:0], ev)
		if err != nil {
			b.Fatal(err)
		}
		vbuf, err = e.AppendValue(vbuf[:0], ev, 1_700_000_001_000_000)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(kbuf) + len(vbuf)))
}

// The baseline: the same key and value built the usual Go way, with
// encoding/json over structs and maps. The schema is built once as Go
// structs (not as JSON) and marshalled with every message, as a
// straightforward encoder would.

type jsonSchema struct {
	Type       string            `json:"type"`
	Fields     []jsonSchema      `json:"fields,omitempty"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name,omitempty"`
	Version    int               `json:"version,omitempty"`
	Doc        string            `json:"doc,omitempty"`
	Parameters map[string]string `json:"parameters,omitempty"`
	Default    any               `json:"default,omitempty"`
	Field      string            `json:"field,omitempty"`
}

type jsonMessage struct {
	Schema  any `json:"schema"`
	Payload any `json:"payload"`
}

type jsonEnvelope struct {
	Before      map[string]any `json:"before"`
	After       map[string]any `json:"after"`
	Source      jsonSource     `json:"source"`
	Transaction any            `json:"transaction"`
	Op          string         `json:"op"`
	TsMs        int64          `json:"ts_ms"`
	TsUs        int64          `json:"ts_us"`
	TsNs        int64          `json:"ts_ns"`
}

type jsonSource struct {
	Version   string  `json:"version"`
	Connector string  `json:"connector"`
	Name      string  `json:"name"`
	TsMs      int64   `json:"ts_ms"`
	Snapshot  string  `json:"snapshot"`
	DB        string  `json:"db"`
	Sequence  *string `json:"sequence"`
	TsUs      int64   `json:"ts_us"`
	TsNs      int64   `json:"ts_ns"`
	Schema    string  `json:"schema"`
	Table     string  `json:"table"`
	TxID      *int64  `json:"txId"`
	LSN       *int64  `json:"lsn"`
	Xmin      *int64  `json:"xmin"`
	Origin    *string `json:"origin"`
	OriginLSN *int64  `json:"origin_lsn"`
}

func toJSONSchema(s *connectSchema, field string) jsonSchema {
	j := jsonSchema{Type: s.typ, Optional: s.optional, Name: s.name, Version: s.version, Doc: s.doc, Field: field}
	for _, f := range s.fields {
		j.Fields = append(j.Fields, toJSONSchema(&f.schema, f.name))
	}
	if len(s.params) > 0 {
		j.Parameters = map[string]string{}
		for _, p := range s.params {
			j.Parameters[p.key] = p.value
		}
	}
	if s.defaultJSON != nil {
		j.Default = json.RawMessage(s.defaultJSON)
	}
	return j
}

type jsonBaseline struct {
	keySchema, valueSchema any
}

func newJSONBaseline(t *change.Table, cached bool) *jsonBaseline {
	var fields, keyFields []jsonSchema
	for i := range t.Columns {
		s, _, _ := columnSchema(&t.Columns[i])
		fields = append(fields, toJSONSchema(&s, t.Columns[i].Name))
	}
	for _, k := range t.Key {
		keyFields = append(keyFields, fields[k])
	}
	topic := t.ID.Topic("shop")
	value := connectSchema{typ: "struct", optional: true, name: topic + ".Value"}
	for i := range t.Columns {
		s, _, _ := columnSchema(&t.Columns[i])
		value.fields = append(value.fields, connectField{t.Columns[i].Name, s})
	}
	env := envelopeSchema(topic, value, NewEncoder(Options{}).planFor(blocks["postgresql"]).schema)
	bl := &jsonBaseline{
		keySchema:   jsonSchema{Type: "struct", Fields: keyFields, Name: topic + ".Key"},
		valueSchema: toJSONSchema(&env, ""),
	}
	if cached {
		k, _ := json.Marshal(bl.keySchema)
		v, _ := json.Marshal(bl.valueSchema)
		bl.keySchema, bl.valueSchema = json.RawMessage(k), json.RawMessage(v)
	}
	return bl
}

func (bl *jsonBaseline) rowMap(t *change.Table, row change.Row) map[string]any {
	m := make(map[string]any, len(row))
	for i, c := range t.Columns {
		v := row[i]
		if v.Kind == change.Null {
			m[c.Name] = nil
			continue
		}
		switch c.Type.Kind {
		case change.KindBool:
			m[c.Name] = v.Int != 0
		case change.KindString:
			m[c.Name] = string(v.Bytes)
		case change.KindFloat64:
			m[c.Name] = v.Float
		case change.KindDecimal:
			ip, fp, _ := strings.Cut(string(v.Bytes), ".")
			x, _ := new(big.Int).SetString(ip+fp, 10)
			m[c.Name] = javaToByteArray(x) // []byte: encoding/json writes base64
		case change.KindTimestampTZ:
			m[c.Name] = time.UnixMicro(v.Int).UTC().Format("2006-01-02T15:04:05.000000Z")
		default:
			m[c.Name] = v.Int
		}
	}
	return m
}

func (bl *jsonBaseline) encode(ev *change.Event, nowMicros int64) (key, value []byte, err error) {
	t := ev.Table
	after := bl.rowMap(t, ev.After)
	keyPayload := map[string]any{t.Columns[t.Key[0]].Name: after[t.Columns[t.Key[0]].Name]}
	if key, err = json.Marshal(jsonMessage{bl.keySchema, keyPayload}); err != nil {
		return nil, nil, err
	}
	s := &ev.Source
	seq, tx, lsn := s.Sequence, s.Ints[s.Block.Slot("txId")], s.Ints[s.Block.Slot("lsn")]
	env := jsonEnvelope{
		After: after,
		Source: jsonSource{Version: Version, Connector: s.Block.Connector, Name: s.Name, TsMs: s.CommitMicros / 1000, Snapshot: "false",
			DB: s.DB, Sequence: &seq, TsUs: s.CommitMicros, TsNs: s.CommitMicros * 1000, Schema: s.Schema, Table: s.Table, TxID: &tx, LSN: &lsn},
		Op:   ev.Op.String(),
		TsMs: nowMicros / 1000, TsUs: nowMicros, TsNs: nowMicros * 1000,
	}
	value, err = json.Marshal(jsonMessage{bl.valueSchema, env})
	return key, value, err
}

func benchmarkJSON(b *testing.B, cached bool) {
	ev := benchEvent()
	bl := newJSONBaseline(ev.Table, cached)
	b.ReportAllocs()
	var n int
	for b.Loop() {
		k, v, err := bl.encode(ev, 1_700_000_001_000_000)
		if err != nil {
			b.Fatal(err)
		}
		n = len(k) + len(v)
	}
	b.SetBytes(int64(n))
}

// BenchmarkEncode10ColEncodingJSON marshals schema and payload per message.
func BenchmarkEncode10ColEncodingJSON(b *testing.B) { benchmarkJSON(b, false) }

// BenchmarkEncode10ColEncodingJSONCachedSchema gives encoding/json the same
// head start as our encoder: the schema is marshalled once and reused as a
// json.RawMessage. It is no faster: encoding/json validates and compacts a
// RawMessage every time it writes one.
func BenchmarkEncode10ColEncodingJSONCachedSchema(b *testing.B) { benchmarkJSON(b, true) }

// The baseline must produce the same message, or the comparison means
// nothing. encoding/json sorts map keys, so compare structure.
func TestJSONBaselineAgrees(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "shop"})
	ev := benchEvent()
	for _, cached := range []bool{false, true} {
		bk, bv, err := newJSONBaseline(ev.Table, cached).encode(ev, 1_700_000_001_000_000)
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := e.AppendKey(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.AppendValue(nil, ev, 1_700_000_001_000_000)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range [][2][]byte{{k, bk}, {v, bv}} {
			var a, b any
			if err := json.Unmarshal(p[0], &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(p[1], &b); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(a, b) {
				t.Errorf("baseline differs:\n ours %s\n base %s", p[0], p[1])
			}
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// BenchmarkDecimal covers the limb path (more than 18 digits), which must not
// allocate either.
func BenchmarkDecimal(b *testing.B) {
	for _, text := range []string{"-1234.50", "-12345678901234567890123456.789", "9" + strings.Repeat("0", 120) + ".25"} {
		b.Run(strings.TrimLeft(text[:min(len(text), 12)], "-"), func(b *testing.B) {
			var buf []byte
			in := []byte(text)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = appendDecimalFixed(buf[:0], in, 3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
