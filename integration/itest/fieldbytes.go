package itest

import (
	"encoding/json"
	"testing"
)

// FieldBytes is the JSON text of one record as written, field by field,
// for comparing two writers byte for byte where decoding would hide a
// difference (an escape against the raw character): the key's payload
// fields ("key.<name>"), the after image's fields ("after.<name>") and
// both schemas ("key.schema", "value.schema"; none when the records
// have no schemas). Key is the decoded key payload, to pair the two
// writers' records.
type FieldBytes struct {
	Key    string
	Fields map[string]string
}

// RecordFieldBytes splits a record's key and value into FieldBytes;
// schemas tells whether they are {"schema":…,"payload":…} envelopes
// (JsonConverter's schemas.enable).
func RecordFieldBytes(t *testing.T, key, value []byte, schemas bool) FieldBytes {
	t.Helper()
	var k struct {
		Schema  json.RawMessage
		Payload map[string]json.RawMessage
	}
	var v struct {
		Schema  json.RawMessage
		Payload struct{ After map[string]json.RawMessage }
	}
	kp, vp := any(&k), any(&v)
	if !schemas {
		kp, vp = &k.Payload, &v.Payload
	}
	if err := json.Unmarshal(key, kp); err != nil {
		t.Fatalf("key %s: %v", key, err)
	}
	if err := json.Unmarshal(value, vp); err != nil {
		t.Fatalf("value %s: %v", value, err)
	}
	f := FieldBytes{Fields: map[string]string{}}
	if schemas {
		f.Fields["key.schema"], f.Fields["value.schema"] = string(k.Schema), string(v.Schema)
	}
	decoded := map[string]any{}
	for name, raw := range k.Payload {
		f.Fields["key."+name] = string(raw)
		var x any
		json.Unmarshal(raw, &x)
		decoded[name] = x
	}
	for name, raw := range v.Payload.After {
		f.Fields["after."+name] = string(raw)
	}
	b, _ := json.Marshal(decoded)
	f.Key = string(b)
	return f
}

// DebeziumRecordBytes is FieldBytes of each record the Debezium harness
// wrote to path (tombstones left out).
func DebeziumRecordBytes(t *testing.T, path string, schemas bool) []FieldBytes {
	t.Helper()
	var out []FieldBytes
	EachDebeziumLine(t, path, func(l DebeziumLine) {
		if !l.Tombstone {
			out = append(out, RecordFieldBytes(t, l.Key, l.Value, schemas))
		}
	})
	return out
}

// TopicRecordBytes is FieldBytes of each record of topic (tombstones left
// out).
func TopicRecordBytes(t *testing.T, topic string, schemas bool) []FieldBytes {
	t.Helper()
	var out []FieldBytes
	for _, r := range ReadRaw(t, topic) {
		if r.Value != nil {
			out = append(out, RecordFieldBytes(t, r.Key, r.Value, schemas))
		}
	}
	return out
}

// CompareFieldBytes reports every field whose JSON text differs between
// Debezium's record and Tributary's with the same key (the last of each
// key), and fails unless want keys were compared.
func CompareFieldBytes(t *testing.T, dbz, trib []FieldBytes, want int) {
	t.Helper()
	last := func(recs []FieldBytes) map[string]FieldBytes {
		m := map[string]FieldBytes{}
		for _, r := range recs {
			m[r.Key] = r
		}
		return m
	}
	d, g := last(dbz), last(trib)
	n := 0
	for key, dr := range d {
		gr, ok := g[key]
		if !ok {
			t.Errorf("key %s: Debezium wrote a record, Tributary none", key)
			continue
		}
		n++
		for name, dtext := range dr.Fields {
			if gtext, ok := gr.Fields[name]; !ok {
				t.Errorf("key %s: %s missing; Debezium's %s", key, name, dtext)
			} else if gtext != dtext {
				t.Errorf("key %s: %s differs\n  Debezium:  %s\n  Tributary: %s", key, name, dtext, gtext)
			}
		}
	}
	if n != want {
		t.Errorf("%d keys compared, want %d", n, want)
	}
}
