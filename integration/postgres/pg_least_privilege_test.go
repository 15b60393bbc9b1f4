package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGLeastPrivilegeTestConnectionAgreesWithRun: a user with LOGIN
// REPLICATION, SELECT and CREATE on the database, who does not own the
// table. test-connection used to pass its publication line (the user may
// create publications), then run stopped with "must be owner of table":
// a publication FOR TABLE needs the table's owner. test-connection now
// fails that line, and its fix (the table owner's CREATE PUBLICATION of
// the configured name) is one after which both pass and run publishes.
func TestPGLeastPrivilegeTestConnectionAgreesWithRun(t *testing.T) {
	e := itest.NewEnv(t, "pglp")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO orders VALUES (1), (2)`)
	user := "it_" + itest.UniqueID("lp")
	e.ReplicationRole(t, user)
	e.Exec("GRANT SELECT ON orders TO " + user)
	e.Exec("GRANT CREATE ON DATABASE " + e.DB + " TO " + user) // what the old fix line said
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "postgres", URL: "postgres://" + user + ":pw@127.0.0.1:5432/" + e.DB,
		Source: "  tables: [public.orders]\n"})
	pub := "tributary_" + e.Name

	code, out := itest.TestConnection(t, e, cfg)
	if code == 0 {
		t.Fatalf("test-connection passed for a user who cannot create the publication (run fails with must be owner of table)\n%s", out)
	}
	fixLine := `CREATE PUBLICATION "` + pub + `" FOR TABLE "public"."orders" WITH (publish_via_partition_root = true)`
	if !strings.Contains(out, fixLine) || !strings.Contains(out, "owner") {
		t.Fatalf("test-connection: want the fix %q, run by the tables' owner\n%s", fixLine, out)
	}
	t.Logf("test-connection:\n%s", out)
	p := e.Start("run", "--config", cfg)
	if code := itest.ExitWithin(t, p, 60*time.Second, "run before the fix"); code != 1 {
		t.Errorf("run before the fix: exit %d, want 1\n%s", code, p.Out)
	}

	e.Exec(fixLine) // as the owner
	if code, out := itest.TestConnection(t, e, cfg); code != 0 {
		t.Fatalf("test-connection after its fix: exit %d\n%s", code, out)
	}
	p = e.Start("run", "--config", cfg)
	topic := e.Prefix + ".public.orders"
	itest.WaitOrDump(t, p, 60*time.Second, "the two rows", func() bool { return itest.TopicEnd(topic) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run after the fix: exit %d\n%s", code, p.Out)
	}
}

// TestPGLeastPrivilegeSelect: a user with LOGIN REPLICATION whose
// publication the tables' owner made (test-connection's own fix), and
// no SELECT on the table. test-connection used to pass, then run made
// its slot and stopped at the backfill's first chunk with "permission
// denied for table orders". test-connection now fails naming the table,
// and after its fix line, run by the owner, both pass and run publishes.
func TestPGLeastPrivilegeSelect(t *testing.T) {
	e := itest.NewEnv(t, "pglpsel")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO orders VALUES (1), (2)`)
	user := "it_" + itest.UniqueID("lps")
	e.ReplicationRole(t, user)
	e.Exec(`CREATE PUBLICATION "tributary_` + e.Name + `" FOR TABLE "public"."orders" WITH (publish_via_partition_root = true)`)
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "postgres", URL: "postgres://" + user + ":pw@127.0.0.1:5432/" + e.DB,
		Source: "  tables: [public.orders]\n"})

	code, out := itest.TestConnection(t, e, cfg)
	fixLine := `GRANT SELECT ON "public"."orders" TO "` + user + `"`
	if code == 0 || !strings.Contains(out, fixLine) {
		t.Fatalf("test-connection for a user who may not read the table: exit %d, want a failure with the fix %q (run fails at the backfill)\n%s", code, fixLine, out)
	}
	e.Exec(fixLine) // as the owner
	if code, out := itest.TestConnection(t, e, cfg); code != 0 {
		t.Fatalf("test-connection after its fix: exit %d\n%s", code, out)
	}
	p := e.Start("run", "--config", cfg)
	topic := e.Prefix + ".public.orders"
	itest.WaitOrDump(t, p, 60*time.Second, "the two rows", func() bool { return itest.TopicEnd(topic) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run after the fix: exit %d\n%s", code, p.Out)
	}
}
