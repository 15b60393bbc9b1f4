package postgres_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestUnknownTypesReported: by default a column of a type Tributary cannot
// encode is left out of the messages, as Debezium does, but never
// silently: a warning names table, column and type, and
// tributary_columns_dropped counts the table's dropped columns, at
// start-up and again after a schema change adds another.
func TestUnknownTypesReported(t *testing.T) {
	e := itest.NewEnv(t, "unk")
	e.Exec(itest.UnknownTypesTable)
	e.Exec(`INSERT INTO odd VALUES (1, 'a & b', '((0,0),(1,1))', 'one')`)
	topic := e.Prefix + ".public.odd"
	itest.CreateSinglePartitionTopics(t, topic)
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", e.WriteConfig(""), "--metrics-addr", addr)
	dropped := func() float64 {
		return itest.Samples(itest.Scrape(t, addr), "tributary_columns_dropped", `table="public.odd"`)[""]
	}
	itest.WaitFor(t, 60*time.Second, "the backfilled row", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 1 })
	itest.WaitFor(t, 10*time.Second, "tributary_columns_dropped 2", func() bool { return dropped() == 2 })
	for _, want := range []string{`"column":"q","type":"tsquery"`, `"column":"b","type":"box"`} {
		if !strings.Contains(p.Out.String(), want) {
			t.Errorf("no start-up warning with %s; output:\n%s", want, p.Out)
		}
	}

	// A schema change that adds another: reported again, the gauge follows.
	e.Exec(`ALTER TABLE odd ADD COLUMN l pg_lsn`)
	e.Exec(`INSERT INTO odd VALUES (2, 'c', '((1,1),(2,2))', 'two', '0/16B3748')`)
	itest.WaitFor(t, 30*time.Second, "tributary_columns_dropped 3", func() bool { return dropped() == 3 })
	if !strings.Contains(p.Out.String(), `"column":"l","type":"pg_lsn"`) {
		t.Errorf("no warning for the added pg_lsn column; output:\n%s", p.Out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.Out)
	}
	recs := itest.ReadTopicRaw(t, topic)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		after := r.Value.(map[string]any)["payload"].(map[string]any)["after"].(map[string]any)
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
// bytes holding the text form (a geometric type's as pgjdbc prints it);
// nothing is reported dropped.
func TestUnknownTypesIncluded(t *testing.T) {
	e := itest.NewEnv(t, "unkin")
	e.Exec(itest.UnknownTypesTable)
	e.Exec(`INSERT INTO odd VALUES (1, 'a & b', '((0,0),(1,1))', 'one')`)
	topic := e.Prefix + ".public.odd"
	itest.CreateSinglePartitionTopics(t, topic)
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", e.WriteSourceConfig("  include_unknown_types: true\n", ""), "--metrics-addr", addr)
	itest.WaitFor(t, 60*time.Second, "the backfilled row", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 1 })
	e.Exec(`UPDATE odd SET q = 'x | y' WHERE id = 1`)
	itest.WaitFor(t, 30*time.Second, "the update", func() bool { return itest.TopicEnd(topic) >= 2 })
	body := itest.Scrape(t, addr)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.Out)
	}
	if strings.Contains(p.Out.String(), "column left out of messages") || strings.Contains(body, `tributary_columns_dropped{`) {
		t.Errorf("columns reported dropped with include_unknown_types; output:\n%s\n/metrics:\n%s", p.Out, body)
	}
	recs := itest.ReadTopicRaw(t, topic)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, want := range []string{"'a' & 'b'", "'x' | 'y'"} {
		v := recs[i].Value.(map[string]any)
		after := v["payload"].(map[string]any)["after"].(map[string]any)
		q, _ := after["q"].(string)
		if b, _ := base64.StdEncoding.DecodeString(q); string(b) != want {
			t.Errorf("record %d: q = %q (%q), want the bytes of %q", i, q, b, want)
		}
		b, _ := base64.StdEncoding.DecodeString(after["b"].(string))
		// Debezium's bytes of a box are its JDBC driver's PGbox text,
		// numbers as Java doubles (docs/types.md), not PostgreSQL's
		// "(1,1),(0,0)".
		if string(b) != "(1.0,1.0),(0.0,0.0)" {
			t.Errorf("record %d: b = %q, want the bytes of (1.0,1.0),(0.0,0.0)", i, b)
		}
		if typ := itest.AfterFieldType(v, "q"); typ != "bytes" {
			t.Errorf("record %d: field q of type %q in the schema, want bytes", i, typ)
		}
	}
}
