package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestKeyColumnsMaskedOrExcluded: destination.key_columns naming a column
// that source.mask_columns masks (every key would be the mask: one
// partition, one surviving row on a compacted topic) or that
// source.exclude_columns leaves out (run failed at the first row, after
// creating the slot) is refused by validate and test-connection (exit 2),
// naming the table and the column, before anything is created.
func TestKeyColumnsMaskedOrExcluded(t *testing.T) {
	e := itest.NewEnv(t, "keyrule")
	e.Exec(`CREATE TABLE users (id int PRIMARY KEY, email text, note text)`)
	e.Exec(`INSERT INTO users VALUES (1, 'a@x', 'n')`)
	for _, c := range []struct{ name, rules, want string }{
		{"masked", "  mask_columns: [{columns: ['public\\.users\\.email'], chars: 5}]\n", "public.users.email is masked by source.mask_columns"},
		{"excluded", "  exclude_columns: ['public\\.users\\.email']\n", "public.users.email is left out by source.exclude_columns"},
	} {
		cfg := e.WritePipeline(itest.PipelineConfig{File: c.name + ".yaml", Source: "  tables: [public.users]\n" + c.rules,
			Destination: "  key_columns:\n    public.users: [email]\n"})
		for _, cmd := range []string{"validate", "test-connection"} {
			out, code := e.Run(cmd, "--config", cfg)
			if code != 2 || !strings.Contains(out, "destination.key_columns[public.users][0]") || !strings.Contains(out, c.want) {
				t.Errorf("%s, key column %s: exit %d, want 2 naming destination.key_columns[public.users][0] (%q):\n%s", cmd, c.name, code, c.want, out)
			}
		}
		if out, code := e.Run("run", "--config", cfg); code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("run, key column %s: exit %d, want 2 naming it:\n%s", c.name, code, out)
		}
	}
	if n := e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE database = $1`, e.DB); n != 0 {
		t.Errorf("%d replication slots made by refused configurations", n)
	}
}

// TestTablesKeyMaskedCreatedWhileStopped: a table created while the
// pipeline is stopped, whose primary key a mask rule matches, must never
// publish masked keys. Selected by a regular expression, it is left out
// with a warning, as when it is created while streaming: `tables` says so
// and passes, and run captures the other tables, also after its source
// connection is cut (a reconnect discovers the tables again). Named in
// source.tables, it is a problem: `tables` fails and run refuses at
// start, naming the column.
func TestTablesKeyMaskedCreatedWhileStopped(t *testing.T) {
	e := itest.NewEnv(t, "keymask")
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, email text)`)
	e.Exec(`INSERT INTO docs VALUES (1, 'a@x')`)
	const masks = "  mask_columns: [{columns: ['.*\\.email'], chars: 5}]\n"
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: ['public\\..*']\n" + masks})
	if out, code := e.Run("tables", "--config", cfg); code != 0 {
		t.Fatalf("tables before: exit %d, want 0:\n%s", code, out)
	}
	topic := e.Prefix + ".public.docs"
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "row 1", func() bool { return itest.TopicEnd(topic) >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	e.Exec(`CREATE TABLE accounts (email text PRIMARY KEY, v int)`)
	out, code := e.Run("tables", "--config", cfg)
	if code != 0 || !strings.Contains(out, "left out, the column rules leave out or mask its key: public.accounts") || !strings.Contains(out, "public.accounts.email") {
		t.Errorf("tables with a masked key selected by a pattern: exit %d, want 0 saying public.accounts is left out for public.accounts.email:\n%s", code, out)
	}
	p = e.Start("run", "--config", cfg)
	e.Exec(`INSERT INTO docs VALUES (2, 'b@x')`)
	e.Exec(`INSERT INTO accounts VALUES ('c@x', 1)`)
	itest.WaitOrDump(t, p, 60*time.Second, "row 2", func() bool { return itest.TopicEnd(topic) >= 2 })
	// A reconnect discovers the tables again: it must not stop on accounts.
	e.Exec(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.Name)
	e.Exec(`INSERT INTO docs VALUES (3, 'd@x')`)
	itest.WaitOrDump(t, p, 60*time.Second, "row 3, after the reconnect", func() bool { return itest.TopicEnd(topic) >= 3 })
	if code := p.Stop(t); code != 0 || !strings.Contains(p.Out.String(), "public.accounts") {
		t.Fatalf("run with a masked key selected by a pattern: exit %d, want 0 with a warning naming public.accounts:\n%s", code, p.Out)
	}
	if n := itest.TopicEnd(e.Prefix + ".public.accounts"); n != 0 {
		t.Errorf("%d messages of public.accounts, whose key is masked; want none", n)
	}

	named := e.WritePipeline(itest.PipelineConfig{File: "named.yaml", Source: "  tables: [public.docs, public.accounts]\n" + masks})
	out, code = e.Run("tables", "--config", named)
	if code != 1 || !strings.Contains(out, "problem: public.accounts") || !strings.Contains(out, "public.accounts.email") {
		t.Errorf("tables with a masked key named in source.tables: exit %d, want 1 with the problem naming public.accounts.email:\n%s", code, out)
	}
	out, code = e.Run("run", "--config", named)
	if code != 1 || !strings.Contains(out, "public.accounts.email is a key column") {
		t.Errorf("run with a masked key named in source.tables: exit %d, want 1 naming public.accounts.email:\n%s", code, out)
	}
}
