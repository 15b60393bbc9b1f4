package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGPublicationOfAnotherPipeline: pipeline A's source.publication
// names the publication Tributary created for pipeline B, with other
// tables. A's start used to bring it in line with A's tables: B's table
// left the publication, and B's changes written meanwhile never reached
// B, not even after B's next start put the table back. A's start now
// refuses, naming B, and leaves the publication alone; test-connection
// says the same.
func TestPGPublicationOfAnotherPipeline(t *testing.T) {
	e := itest.NewEnv(t, "pgpubother")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE u (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO t VALUES (1)`)
	pubB := "tributary_" + e.Name
	cfgB := e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.t]\n", File: "b.yaml"})
	pB := e.Start("run", "--config", cfgB)
	topicB := e.Prefix + ".public.t"
	itest.WaitOrDump(t, pB, 60*time.Second, "B's backfill", func() bool { return itest.TopicEnd(topicB) >= 1 })

	a := &itest.Env{T: t, Name: e.Name + "_a", DB: e.DB, Prefix: e.Prefix + "-a", Dir: t.TempDir(), Conn: e.Conn}
	cfgA := a.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.u]\n  publication: " + pubB + "\n"})
	if code, out := itest.TestConnection(t, a, cfgA); code == 0 || !strings.Contains(out, "for pipeline "+e.Name) {
		t.Errorf("test-connection of A on B's publication: exit %d, want a failure naming pipeline %s\n%s", code, e.Name, out)
	}
	out, code := a.Run("run", "--config", cfgA)
	if code == 0 || !strings.Contains(out, "for pipeline "+e.Name) {
		t.Errorf("run of A on B's publication: exit %d, want a failure naming pipeline %s\n%s", code, e.Name, out)
	}
	if n := e.PGCount(t, `SELECT count(*) FROM pg_publication_tables WHERE pubname = $1 AND tablename = 't'`, pubB); n != 1 {
		t.Errorf("A's start took B's table t out of publication %s", pubB)
	}
	e.Exec(`INSERT INTO t VALUES (2)`)
	itest.WaitOrDump(t, pB, 30*time.Second, "B's row 2", func() bool { return itest.TopicEnd(topicB) >= 2 })
	if code := pB.Stop(t); code != 0 {
		t.Fatalf("B: exit %d after SIGTERM\n%s", code, pB.Out)
	}
}
