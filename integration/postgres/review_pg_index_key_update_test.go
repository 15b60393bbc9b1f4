package postgres_test

// A review check that held (passes on the reviewed code); it runs only
// with TRIBUTARY_REVIEW_HELD=1 (reviewHeld).
//
// REPLICA IDENTITY USING INDEX under key changes: an UPDATE that
// changes the primary key and the identity index's column together, and
// another that changes both back, on a table keyed by the index. A
// consumer keyed on the message key must end with the table's rows, each
// under its index value.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

func TestReviewPGIndexAndKeyUpdatedTogether(t *testing.T) {
	itest.ReviewHeld(t)
	e := itest.NewEnv(t, "rvidxpk")
	e.Exec(`CREATE TABLE acct (id int PRIMARY KEY, code text NOT NULL, v text, CONSTRAINT acct_code UNIQUE (code))`)
	e.Exec(`ALTER TABLE acct REPLICA IDENTITY USING INDEX acct_code`)
	e.Exec(`INSERT INTO acct VALUES (1, 'a', 'x'), (2, 'b', 'y')`)
	e.Exec(itest.SentinelTable)
	p := e.Start("run", "--config", e.WriteTablesConfig("public.acct", "public.sentinel"))
	topic := e.Prefix + ".public.acct"
	itest.WaitOrDump(t, p, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 2 })
	e.Exec(`UPDATE acct SET id = 10, code = 'c' WHERE id = 1`)
	e.Exec(`UPDATE acct SET id = id + 100, code = code || '2'`) // both rows, both columns
	e.Exec(`UPDATE acct SET v = 'w' WHERE code = 'b2'`)
	e.PGCaughtUp(p, 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	state := map[string]string{}
	for _, m := range itest.ReadTopic(t, topic) {
		key, _ := json.Marshal(m.Key["payload"])
		if m.Value == nil || m.Payload()["op"] == "d" {
			delete(state, string(key))
			continue
		}
		after, _ := json.Marshal(m.Payload()["after"])
		state[string(key)] = string(after)
	}
	want := map[string]string{`{"code":"c2"}`: `{"code":"c2","id":110,"v":"x"}`, `{"code":"b2"}`: `{"code":"b2","id":102,"v":"w"}`}
	if len(state) != 2 || state[`{"code":"c2"}`] != want[`{"code":"c2"}`] || state[`{"code":"b2"}`] != want[`{"code":"b2"}`] {
		t.Errorf("a consumer keyed on the message key ends with %v; want %v", state, want)
	}
}
