package mysql_test

import (
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLUnknownTypesIncluded: with source.include_unknown_types a
// MariaDB column of a type Tributary does not map (INET6) is published
// as bytes, in backfilled and streamed messages alike, with the schema
// type "bytes" that PostgreSQL's messages have for such columns.
func TestMySQLUnknownTypesIncluded(t *testing.T) {
	e := itest.NewMyEnv(t, "myunk")
	e.Exec(`CREATE TABLE odd (id INT PRIMARY KEY, ip INET6, note VARCHAR(10))`)
	e.Exec(`INSERT INTO odd VALUES (1, '::1', 'one')`)
	topic := e.Prefix + "." + e.DB + ".odd"
	p := e.Start("run", "--config", e.WriteConfig("  include_unknown_types: true\n"))
	itest.WaitFor(t, 60*time.Second, "the backfilled row", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 1 })
	e.Exec(`INSERT INTO odd VALUES (2, '2001:db8::7', 'two')`)
	itest.WaitFor(t, 30*time.Second, "the streamed row", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.Out)
	}
	recs := itest.ReadTopicRaw(t, topic)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, r := range recs {
		v := r.Value.(map[string]any)
		after := v["payload"].(map[string]any)["after"].(map[string]any)
		if s, _ := after["ip"].(string); s == "" {
			t.Errorf("record %d: ip = %v, want base64 bytes", i, after["ip"])
		}
		if typ := itest.AfterFieldType(v, "ip"); typ != "bytes" {
			t.Errorf("record %d (%v): field ip of type %q in the schema, want bytes", i, v["payload"].(map[string]any)["op"], typ)
		}
	}
}
