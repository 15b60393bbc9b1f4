package capture

import (
	"encoding/json"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// Checkpoints as the release before the shared loop wrote them (each
// driver encoded the whole position itself), one of each kind.
var writtenBefore = map[string]string{
	"postgres": `{"slot":"tributary_shop","lsn":"0/1A2B3C8","backfilled":true,"tables":{"public.orders":16390},` +
		`"snapshot":{"tables":[{"table":"public.orders","key":["AAAB"],"rows":1024,"initial":true}]},"dropped":{"16401":"public.old"}}`,
	"mysql": `{"flavor":"mariadb","gtid":"0-1-42","file":"mysql-bin.000003","pos":1234,"backfilled":true,` +
		`"shapes":{"scope":"d","tables":[]},"tables":["d.t","d.u"],"snapshot":{"done":["d.t"]}}`,
	// An unfinished backfill of an earlier release still, which ran
	// before streaming: no stream position yet (Database.Legacy).
	"postgres legacy": `{"slot":"s","lsn":"0/16B3748","backfilled":false,"backfill":{"done":["public.a"],"table":"public.b","key":["AAE="],"rows":7}}`,
	"mysql legacy":    `{"flavor":"mysql","file":"binlog.000002","pos":157,"backfilled":false,"table":"d.t","after":["01"]}`,
}

// Every checkpoint written before resumes: the loop reads its fields where
// they were, and a position this release seals from the driver's own
// fields is that same document.
func TestEnvelopeReadsCheckpointsWrittenBefore(t *testing.T) {
	for name, doc := range writtenBefore {
		env, st, cur, err := openEnvelope(change.Position(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal([]byte(doc), &all); err != nil {
			t.Fatal(err)
		}
		legacy := string(all["backfilled"]) == "false"
		if env.Backfilled == legacy {
			t.Errorf("%s: backfilled %v", name, env.Backfilled)
		}
		if string(env.Tables) != string(all["tables"]) {
			t.Errorf("%s: tables %s, want %s", name, env.Tables, all["tables"])
		}
		if want := all["snapshot"] != nil; want != (len(st.Tables)+len(st.Done) > 0) {
			t.Errorf("%s: snapshot state %+v from %s", name, st, all["snapshot"])
		}
		if legacy {
			continue
		}
		// The driver's cursor: its own fields only.
		cursor := map[string]json.RawMessage{}
		for k, v := range all {
			if k != "backfilled" && k != "tables" && k != "snapshot" {
				cursor[k] = v
			}
		}
		c, _ := json.Marshal(cursor)
		if string(cur) != string(c) {
			t.Errorf("%s: cursor %s, want %s", name, cur, c)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(seal(cur, env.Tables, all["snapshot"]), &got); err != nil {
			t.Fatalf("%s: sealed position is not JSON: %v", name, err)
		}
		if g, w := canonical(got), canonical(all); g != w {
			t.Errorf("%s: sealed\n %s\nwant the document written before\n %s", name, g, w)
		}
	}
}

// canonical is a JSON object's fields in name order.
func canonical(fields map[string]json.RawMessage) string {
	b, _ := json.Marshal(fields)
	return string(b)
}

// A cursor with no field of its own, and positions without a captured
// set or a snapshot state, still seal into JSON objects.
func TestSealMinimal(t *testing.T) {
	for _, c := range []struct{ cursor, tables, state, want string }{
		{`{}`, "", "", `{"backfilled":true}`},
		{`{"lsn":"0/1"}`, `{}`, "", `{"lsn":"0/1","backfilled":true,"tables":{}}`},
		{`{"lsn":"0/1"}`, "", `{"done":["a"]}`, `{"lsn":"0/1","backfilled":true,"snapshot":{"done":["a"]}}`},
	} {
		var tables, state json.RawMessage
		if c.tables != "" {
			tables = json.RawMessage(c.tables)
		}
		if c.state != "" {
			state = json.RawMessage(c.state)
		}
		if got := string(seal(change.Position(c.cursor), tables, state)); got != c.want {
			t.Errorf("seal(%s) = %s, want %s", c.cursor, got, c.want)
		}
	}
}

// A checkpoint's bytes come from a store outside the process: reading
// them never panics, and what the loop seals from a cursor is JSON.
func FuzzEnvelope(f *testing.F) {
	for _, doc := range writtenBefore {
		f.Add([]byte(doc))
	}
	f.Add([]byte(`{"snapshot":{"tables":[{"table":""}]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, _, c, err := openEnvelope(b)
		if err != nil {
			return
		}
		if out := seal(c, env.Tables, env.Snapshot); !json.Valid(out) {
			t.Fatalf("sealed %q from %q", out, b)
		}
	})
}

// The bytes the loop writes, exactly, for each driver's cursor (the
// drivers' golden tests hold those cursors): a checkpoint this release
// writes reads back in every earlier one, which compared them as JSON.
func TestSealGolden(t *testing.T) {
	for _, c := range []struct{ cursor, tables, state, want string }{
		{`{"slot":"tributary_shop","lsn":"0/1A2B3C8","commit":"0/1A2B300","dropped":{"16401":"public.old"},"full_keys":{"16390":["id"]}}`,
			`{"public.orders":16390}`, `{"tables":[{"table":"public.orders","key":["AAAB"],"rows":1024,"initial":true}]}`,
			`{"slot":"tributary_shop","lsn":"0/1A2B3C8","commit":"0/1A2B300","dropped":{"16401":"public.old"},"full_keys":{"16390":["id"]},` +
				`"backfilled":true,"tables":{"public.orders":16390},"snapshot":{"tables":[{"table":"public.orders","key":["AAAB"],"rows":1024,"initial":true}]}}`},
		{`{"flavor":"mariadb","gtid":"0-1-42","file":"mysql-bin.000003","pos":1234,"shapes":{"scope":"d","tables":[]}}`,
			`["d.t","d.u"]`, `{"done":["d.t"]}`,
			`{"flavor":"mariadb","gtid":"0-1-42","file":"mysql-bin.000003","pos":1234,"shapes":{"scope":"d","tables":[]},` +
				`"backfilled":true,"tables":["d.t","d.u"],"snapshot":{"done":["d.t"]}}`},
	} {
		got := string(seal(change.Position(c.cursor), json.RawMessage(c.tables), json.RawMessage(c.state)))
		if got != c.want {
			t.Errorf("sealed\n %s\nwant\n %s", got, c.want)
		}
	}
}
