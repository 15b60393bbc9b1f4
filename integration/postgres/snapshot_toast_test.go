package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pgx/v5"
)

// unavailable is Debezium's placeholder for an unchanged TOASTed value.
const unavailable = "__debezium_unavailable_value"

// TestSnapshotKeepsToastedValues: rows whose body is stored out of line
// (TOAST), REPLICA IDENTITY DEFAULT, and a writer that updates only their
// title, over the whole table, again and again while the initial snapshot
// reads it in small chunks. pgoutput sends each update's body as
// "unchanged" (__debezium_unavailable_value), so a chunk's r row is the
// only message that carries the body of a row the stream touched inside
// the chunk's window. Folding the topic as a consumer does (an
// unavailable value keeps the previous one) must give, for every row, the
// body and the title the database holds: no body lost, no title rolled
// back by a stale r.
func TestSnapshotKeepsToastedValues(t *testing.T) {
	e := itest.NewEnv(t, "snaptoast")
	const rows = 2000
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, title text NOT NULL, body text NOT NULL)`)
	// EXTERNAL: out of line without compression, so a 3.2 KB body is TOASTed.
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.Exec(fmt.Sprintf(`INSERT INTO docs SELECT g, 't0', repeat(md5(g::text), 100) FROM generate_series(1, %d) g`, rows))
	var toasted int64
	if err := e.Conn.QueryRow(context.Background(), `SELECT count(*) FROM docs WHERE pg_column_size(body) < 1000`).Scan(&toasted); err != nil || toasted != 0 {
		t.Fatalf("bodies are not stored out of line as the test needs (%d inline, err %v)", toasted, err)
	}

	cfg := e.WriteConfig("")
	p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=200"}, "run", "--config", cfg)

	// The writer sets a new title on every row, one transaction a round,
	// until the snapshot is done or for at most 10 rounds: each round's
	// changes fall into the windows open at its commit (on the code
	// before the fix, 6 rounds lost 300 to 400 bodies). The pause keeps
	// the stream from falling ever further behind (a high watermark waits
	// for it).
	w, err := pgx.Connect(context.Background(), e.PGURL())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	var stop atomic.Bool
	var rounds atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; n <= 10 && !stop.Load(); n++ {
			if _, err := w.Exec(context.Background(), fmt.Sprintf(`UPDATE docs SET title = 't%d'`, n)); err != nil {
				t.Errorf("writer: %v", err)
				return
			}
			rounds.Add(1)
			time.Sleep(200 * time.Millisecond)
		}
	}()
	e.WaitBackfilled(t, p, 120*time.Second, "the snapshot to finish")
	stop.Store(true)
	wg.Wait()
	if rounds.Load() < 2 {
		t.Fatalf("only %d update rounds ran during the snapshot: no overlap to test", rounds.Load())
	}
	// A last row, to know that every earlier change is published.
	e.Exec(`INSERT INTO docs VALUES (0, 'last', 'last')`)
	topic := e.Prefix + ".public.docs"
	itest.WaitOrDump(t, p, 60*time.Second, "the last row", func() bool {
		for _, m := range itest.ReadTopic(t, topic) {
			if id, _ := m.Key["payload"].(map[string]any)["id"].(float64); id == 0 && m.Value != nil {
				return true
			}
		}
		return false
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	// Fold the topic per key (each key lives on one partition, read in
	// order): an unavailable value means "unchanged".
	type doc struct{ title, body string }
	folded := map[int]*doc{}
	reads, placeholders := 0, 0
	for _, m := range itest.ReadTopic(t, topic) {
		if m.Value == nil {
			continue
		}
		pl := m.Payload()
		id := int(m.Key["payload"].(map[string]any)["id"].(float64))
		if pl["op"] == "d" {
			delete(folded, id)
			continue
		}
		if pl["op"] == "r" {
			reads++
		}
		after := pl["after"].(map[string]any)
		d := folded[id]
		if d == nil {
			d = &doc{title: unavailable, body: unavailable}
			folded[id] = d
		}
		for col, dst := range map[string]*string{"title": &d.title, "body": &d.body} {
			v, _ := after[col].(string)
			if v == unavailable {
				placeholders++
				continue
			}
			*dst = v
		}
	}
	if placeholders == 0 {
		t.Fatal("no update carried the unavailable placeholder: the test did not reach the case")
	}
	dbRows, err := e.Conn.Query(context.Background(), `SELECT id, title, body FROM docs`)
	if err != nil {
		t.Fatal(err)
	}
	defer dbRows.Close()
	lost, stale, n := 0, 0, 0
	for dbRows.Next() {
		var id int
		var want doc
		if err := dbRows.Scan(&id, &want.title, &want.body); err != nil {
			t.Fatal(err)
		}
		n++
		got := folded[id]
		switch {
		case got == nil:
			lost++
			if lost <= 5 {
				t.Errorf("row %d: no message in the topic", id)
			}
		case got.body != want.body:
			lost++
			if lost <= 5 {
				t.Errorf("row %d: no message carries its body (folded body %.40q)", id, got.body)
			}
		case got.title != want.title:
			stale++
			if stale <= 5 {
				t.Errorf("row %d: folded title %q, the database has %q (an older r after a newer update)", id, got.title, want.title)
			}
		}
	}
	if err := dbRows.Err(); err != nil {
		t.Fatal(err)
	}
	if lost+stale > 0 {
		t.Errorf("%d of %d rows lost their body, %d have a stale title", lost, n, stale)
	}
	t.Logf("%d update rounds during the snapshot; %d r rows; %d placeholders", rounds.Load(), reads, placeholders)
}
