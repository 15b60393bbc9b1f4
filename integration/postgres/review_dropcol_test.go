package postgres_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestReviewColumnsChangedBeforeRead: rows written, then columns dropped
// (an array, an enum) and an array retyped, all before the pipeline reads
// the rows (it was stopped): each row is published with the columns and
// types it was written with, as pgoutput's relation message at its
// position names them, none left out for the catalog no longer knowing
// its type.
func TestReviewColumnsChangedBeforeRead(t *testing.T) {
	e := itest.NewEnv(t, "rvcolsread")
	e.Exec(`DROP TYPE IF EXISTS rvmood; CREATE TYPE rvmood AS ENUM ('sad', 'ok')`)
	e.Exec(`CREATE TABLE dr (id int PRIMARY KEY, a text, b text[], m rvmood, r text[], c text)`)
	e.Exec(`CREATE TABLE warm (id int PRIMARY KEY)`)
	cfg := e.WritePipeline(itest.PipelineConfig{})
	p := e.Start("run", "--config", cfg)
	e.Exec(`INSERT INTO warm VALUES (1)`)
	itest.WaitFor(t, 90*time.Second, "streaming", func() bool { return itest.TopicEnd(e.Prefix+".public.warm") >= 1 || p.Exited() })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	e.Exec(`INSERT INTO dr VALUES (1, 'A', '{B}', 'ok', '{7}', 'C')`)
	e.Exec(`ALTER TABLE dr DROP COLUMN b, DROP COLUMN m, ALTER COLUMN r TYPE int[] USING r::int[]`)
	e.Exec(`INSERT INTO dr VALUES (2, 'A2', '{8}', 'C2')`)
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 90*time.Second, "both inserts", func() bool { return itest.TopicEnd(e.Prefix+".public.dr") >= 2 || p.Exited() })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	var got []string
	for _, m := range itest.ReadTopic(t, e.Prefix+".public.dr") {
		got = append(got, fmt.Sprint(m.Payload()["after"]))
	}
	slices.Sort(got) // the topic's partitions
	want := []string{"map[a:A b:[B] c:C id:1 m:ok r:[7]]", "map[a:A2 c:C2 id:2 r:[8]]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after images %q, want %q", got, want)
	}
}
