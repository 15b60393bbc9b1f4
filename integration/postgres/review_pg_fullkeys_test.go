package postgres_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestReviewPGFullKeysFollowRelationMessages: the checkpoint records the key of
// each captured table under REPLICA IDENTITY FULL (position.full_keys),
// which the stream updates table by table as Relation messages arrive. A
// Relation message of one FULL table leaves the other's key as it was; a
// table leaving FULL while streaming leaves the record, and coming back
// to FULL returns to it, across restarts.
func TestReviewPGFullKeysFollowRelationMessages(t *testing.T) {
	itest.ReviewHeld(t)
	e := itest.NewEnv(t, "rvfullkeys")
	e.Exec(`CREATE TABLE a (k int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE "Bb" (x int, id int, v text, PRIMARY KEY (id, x))`)
	e.Exec(`ALTER TABLE a REPLICA IDENTITY FULL`)
	e.Exec(`ALTER TABLE "Bb" REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO a VALUES (1, 'one')`)
	e.Exec(`INSERT INTO "Bb" VALUES (1, 1, 'one')`)
	e.Exec(itest.SentinelTable)
	cfg := e.WriteTablesConfig("public.a", `"public.Bb"`, "public.sentinel")
	oidA := fmt.Sprint(e.PGCount(t, `SELECT 'a'::regclass::oid::int`))
	oidB := fmt.Sprint(e.PGCount(t, `SELECT '"Bb"'::regclass::oid::int`))
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	fullKeys := func() map[string][]string {
		t.Helper()
		b, err := os.ReadFile(ckpt)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Position struct {
				FullKeys map[string][]string `json:"full_keys"`
			} `json:"position"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		return f.Position.FullKeys
	}
	both := map[string][]string{oidA: {"k"}, oidB: {"id", "x"}}
	round := func(sentinel int, what string, want map[string][]string, stmts ...string) {
		t.Helper()
		p := e.Start("run", "--config", cfg)
		itest.WaitOrDump(t, p, 60*time.Second, "the backfill", func() bool {
			return itest.TopicEnd(e.Prefix+".public.a") >= 1 && itest.TopicEnd(e.Prefix+".public.Bb") >= 1
		})
		for _, s := range stmts {
			e.Exec(s)
		}
		e.PGCaughtUp(p, sentinel)
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d; output:\n%s", code, p.Out)
		}
		got := fullKeys()
		t.Logf("%s: full_keys %v", what, got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: checkpoint full_keys %v, want %v", what, got, want)
		}
	}
	round(1, "after the backfill", both)
	round(2, "after a Relation message of a", both, `INSERT INTO a VALUES (2, 'two')`)
	round(3, `after "Bb" left FULL`, map[string][]string{oidA: {"k"}},
		`ALTER TABLE "Bb" REPLICA IDENTITY DEFAULT`, `INSERT INTO "Bb" VALUES (2, 2, 'two')`)
	round(4, "after a restart and a Relation message of a", map[string][]string{oidA: {"k"}}, `UPDATE a SET v = 'uno' WHERE k = 1`)
	round(5, `after "Bb" came back to FULL`, both,
		`ALTER TABLE "Bb" REPLICA IDENTITY FULL`, `UPDATE "Bb" SET v = 'uno' WHERE id = 1`)
}
