package integration

import (
	"testing"
	"time"
)

// TestMySQLUnknownTypesIncluded: with source.include_unknown_types a
// MariaDB column of a type Tributary does not map (INET6) is published
// as bytes, in backfilled and streamed messages alike, with the schema
// type "bytes" that PostgreSQL's messages have for such columns.
func TestMySQLUnknownTypesIncluded(t *testing.T) {
	e := newMyEnv(t, "myunk")
	e.exec(`CREATE TABLE odd (id INT PRIMARY KEY, ip INET6, note VARCHAR(10))`)
	e.exec(`INSERT INTO odd VALUES (1, '::1', 'one')`)
	topic := e.prefix + "." + e.db + ".odd"
	p := e.start("run", "--config", e.writeConfig("  include_unknown_types: true\n"))
	waitFor(t, 60*time.Second, "the backfilled row", func() bool { return !p.exited() && topicEnd(topic) >= 1 })
	e.exec(`INSERT INTO odd VALUES (2, '2001:db8::7', 'two')`)
	waitFor(t, 30*time.Second, "the streamed row", func() bool { return !p.exited() && topicEnd(topic) >= 2 })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.out)
	}
	recs := readTopicRaw(t, topic)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, r := range recs {
		v := r.value.(map[string]any)
		after := v["payload"].(map[string]any)["after"].(map[string]any)
		if s, _ := after["ip"].(string); s == "" {
			t.Errorf("record %d: ip = %v, want base64 bytes", i, after["ip"])
		}
		if typ := afterFieldType(v, "ip"); typ != "bytes" {
			t.Errorf("record %d (%v): field ip of type %q in the schema, want bytes", i, v["payload"].(map[string]any)["op"], typ)
		}
	}
}
