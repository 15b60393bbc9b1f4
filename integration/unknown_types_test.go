package integration

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// unknownTypesTable has columns of types Tributary cannot encode: tsquery
// (Debezium drops it too) and box (one Debezium maps to a Geometry that
// Tributary does not build yet).
const unknownTypesTable = `CREATE TABLE odd (id integer PRIMARY KEY, q tsquery, b box, note text)`

// TestUnknownTypesReported: by default a column of a type Tributary cannot
// encode is left out of the messages, as Debezium does, but never
// silently: a warning names table, column and type, and
// tributary_columns_dropped counts the table's dropped columns, at
// start-up and again after a schema change adds another.
func TestUnknownTypesReported(t *testing.T) {
	e := newEnv(t, "unk")
	e.exec(unknownTypesTable)
	e.exec(`INSERT INTO odd VALUES (1, 'a & b', '((0,0),(1,1))', 'one')`)
	topic := e.prefix + ".public.odd"
	createSinglePartitionTopics(t, topic)
	addr := freeAddr(t)
	p := e.start("run", "--config", e.writeConfig(""), "--metrics-addr", addr)
	dropped := func() float64 {
		return samples(scrape(t, addr), "tributary_columns_dropped", `table="public.odd"`)[""]
	}
	waitFor(t, 60*time.Second, "the backfilled row", func() bool { return !p.exited() && topicEnd(topic) >= 1 })
	waitFor(t, 10*time.Second, "tributary_columns_dropped 2", func() bool { return dropped() == 2 })
	for _, want := range []string{`"column":"q","type":"tsquery"`, `"column":"b","type":"box"`} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("no start-up warning with %s; output:\n%s", want, p.out)
		}
	}

	// A schema change that adds another: reported again, the gauge follows.
	e.exec(`ALTER TABLE odd ADD COLUMN l pg_lsn`)
	e.exec(`INSERT INTO odd VALUES (2, 'c', '((1,1),(2,2))', 'two', '0/16B3748')`)
	waitFor(t, 30*time.Second, "tributary_columns_dropped 3", func() bool { return dropped() == 3 })
	if !strings.Contains(p.out.String(), `"column":"l","type":"pg_lsn"`) {
		t.Errorf("no warning for the added pg_lsn column; output:\n%s", p.out)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.out)
	}
	recs := readTopicRaw(t, topic)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		after := r.value.(map[string]any)["payload"].(map[string]any)["after"].(map[string]any)
		for _, c := range []string{"q", "b", "l"} {
			if _, ok := after[c]; ok {
				t.Errorf("column %s published by default: %v", c, after)
			}
		}
		if after["note"] == nil {
			t.Errorf("column note missing: %v", after)
		}
	}
}

// TestUnknownTypesIncluded: with source.include_unknown_types the same
// columns are published, as Debezium's include.unknown.datatypes does:
// bytes holding the PostgreSQL text form; nothing is reported dropped.
func TestUnknownTypesIncluded(t *testing.T) {
	e := newEnv(t, "unkin")
	e.exec(unknownTypesTable)
	e.exec(`INSERT INTO odd VALUES (1, 'a & b', '((0,0),(1,1))', 'one')`)
	topic := e.prefix + ".public.odd"
	createSinglePartitionTopics(t, topic)
	addr := freeAddr(t)
	p := e.start("run", "--config", e.writeSourceConfig("  include_unknown_types: true\n", ""), "--metrics-addr", addr)
	waitFor(t, 60*time.Second, "the backfilled row", func() bool { return !p.exited() && topicEnd(topic) >= 1 })
	e.exec(`UPDATE odd SET q = 'x | y' WHERE id = 1`)
	waitFor(t, 30*time.Second, "the update", func() bool { return topicEnd(topic) >= 2 })
	body := scrape(t, addr)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.out)
	}
	if strings.Contains(p.out.String(), "column left out of messages") || strings.Contains(body, `tributary_columns_dropped{`) {
		t.Errorf("columns reported dropped with include_unknown_types; output:\n%s\n/metrics:\n%s", p.out, body)
	}
	recs := readTopicRaw(t, topic)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, want := range []string{"'a' & 'b'", "'x' | 'y'"} {
		v := recs[i].value.(map[string]any)
		after := v["payload"].(map[string]any)["after"].(map[string]any)
		q, _ := after["q"].(string)
		if b, _ := base64.StdEncoding.DecodeString(q); string(b) != want {
			t.Errorf("record %d: q = %q (%q), want the bytes of %q", i, q, b, want)
		}
		b, _ := base64.StdEncoding.DecodeString(after["b"].(string))
		if string(b) != "(1,1),(0,0)" {
			t.Errorf("record %d: b = %q, want the bytes of (1,1),(0,0)", i, b)
		}
		if typ := afterFieldType(v, "q"); typ != "bytes" {
			t.Errorf("record %d: field q of type %q in the schema, want bytes", i, typ)
		}
	}
}

// afterFieldType is the Connect type of column col in a value message's
// "after" schema; "" when it has none.
func afterFieldType(v map[string]any, col string) string {
	typ, _ := afterColumn(v, col)["type"].(string)
	return typ
}
