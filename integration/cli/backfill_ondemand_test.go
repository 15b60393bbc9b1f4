package cli_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pgx/v5"

	capturepkg "github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// requireSnapshotter skips until the PostgreSQL source can snapshot while
// it streams: no
// test-only source stands in for it.
func requireSnapshotter(t *testing.T, e *itest.Env) {
	t.Helper()
	src, err := capturepkg.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix,
		Config: config.Source{Type: "postgres", URL: e.PGURL()}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, ok := any(src).(source.Snapshotter); !ok {
		t.Skip("needs the snapshot engine (snap-engine)")
	}
}

// TestBackfillOnDemandPG, on PostgreSQL:
// `tributary backfill --table public.orders` on a running pipeline
// re-publishes orders with op r while inserts, updates and deletes go on;
// the last message per key equals the database afterwards; `status` shows
// the progress (rows of an estimated total) while it runs; metrics count
// it; the other table is not re-published; the request is cleared from
// the store once a checkpoint carries it. Then, with the pipeline stopped,
// a request waits in the store (status shows it) and the next run serves
// it before streaming.
func TestBackfillOnDemandPG(t *testing.T) {
	e := itest.NewEnv(t, "bfdemand")
	requireSnapshotter(t, e)
	const rows = 200_000
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, qty int NOT NULL, note text)`)
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY, name text)`)
	e.Exec(`INSERT INTO orders SELECT g, 0, repeat('x', 40) FROM generate_series(1, $1) g`, rows)
	e.Exec(`INSERT INTO items SELECT g, 'item' FROM generate_series(1, 50) g`)
	e.Exec(`ANALYZE orders`) // the estimate status shows comes from the statistics
	cfg := e.WriteConfig("")
	ckdir := filepath.Join(e.Dir, "checkpoints")
	orders, items := e.Prefix+".public.orders", e.Prefix+".public.items"

	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", cfg, "--http-addr", addr, "--log-format", "json")
	itest.WaitFor(t, 2*time.Minute, "the initial backfill", func() bool { return itest.TopicEnd(orders) >= rows && itest.TopicEnd(items) >= 50 })
	itemsBefore := itest.TopicEnd(items)

	// Changes go on all along the snapshot.
	writer, err := newPGWriter(e)
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := rows + 1
		for !stop.Load() {
			id := 1 + rand.IntN(rows)
			switch rand.IntN(3) {
			case 0:
				writer(`UPDATE orders SET qty = qty + 1 WHERE id = $1`, id)
			case 1:
				writer(`DELETE FROM orders WHERE id = $1`, id)
			default:
				writer(`INSERT INTO orders VALUES ($1, 1, 'new')`, next)
				next++
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", "public.orders")
	if code != 0 || !strings.Contains(out, "queued a backfill of public.orders") || !strings.Contains(out, "pipeline is running") {
		t.Fatalf("backfill: exit %d\n%s", code, out)
	}
	// status (another process) shows the snapshot with an estimate while
	// it runs, then done.
	// The status snapshot is refreshed every 2 s: a fast snapshot may be
	// seen running only once, or only done; either way it must show rows
	// of an estimated total.
	var sawRunning, sawEstimate bool
	itest.WaitFor(t, 3*time.Minute, "the snapshot of public.orders to finish", func() bool {
		r, _ := itest.StatusJSON(t, e, cfg)
		if r.Live == nil {
			return false
		}
		for _, b := range r.Live.Backfills {
			if b.Table != "public.orders" {
				continue
			}
			sawRunning = sawRunning || !b.Done && !b.Started.IsZero()
			sawEstimate = sawEstimate || b.Rows > 0 && b.Estimated > 0
			return b.Done
		}
		return false
	})
	if !sawEstimate {
		t.Error("status never showed the snapshot's rows of an estimated total")
	}
	t.Logf("status showed the snapshot running: %v", sawRunning)
	stop.Store(true)
	wg.Wait()
	body := itest.Scrape(t, addr)
	if n := itest.Samples(body, "tributary_backfill_rows_total", `table="public.orders"`)[""]; n < rows/2 {
		t.Errorf("tributary_backfill_rows_total for public.orders = %v, want about %d", n, rows)
	}
	if !strings.Contains(p.Out.String(), `"msg":"backfill: progress"`) && !strings.Contains(p.Out.String(), `"msg":"backfill: table done"`) {
		t.Errorf("no backfill progress in the logs:\n%s", itest.OutTail(p.Out.String()))
	}
	itest.WaitFor(t, 30*time.Second, "the request to be cleared from the store", func() bool {
		r, err := checkpoint.PendingFile(ckdir, e.Name)
		return err == nil && r.Empty()
	})
	assertLastMessageIsDatabase(t, e, orders)
	if n := itest.TopicEnd(items); n != itemsBefore {
		t.Errorf("items got %d more messages; only orders was asked for", n-itemsBefore)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, itest.OutTail(p.Out.String()))
	}

	// Stopped: the request waits, status says so, the next run serves it.
	if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", "public.items"); code != 0 || !strings.Contains(out, "pipeline is not running") {
		t.Fatalf("backfill while stopped: exit %d\n%s", code, out)
	}
	if s := itest.StatusText(t, e, cfg); !strings.Contains(s, "backfill requested") || !strings.Contains(s, "public.items") {
		t.Errorf("status does not show the waiting request:\n%s", s)
	}
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, time.Minute, "items re-published by the next run", func() bool { return itest.TopicEnd(items) >= itemsBefore+50 })
	p.Stop(t)
}

// newPGWriter returns a function that runs one statement on its own
// connection (the env's connection belongs to the test goroutine).
func newPGWriter(e *itest.Env) (func(sql string, args ...any), error) {
	conn, err := pgx.Connect(context.Background(), e.PGURL())
	if err != nil {
		return nil, err
	}
	e.T.Cleanup(func() { conn.Close(context.Background()) })
	var mu sync.Mutex
	return func(sql string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		conn.Exec(context.Background(), sql, args...)
	}, nil
}

// assertLastMessageIsDatabase checks that the last message of every key of
// public.orders equals the row in the database (a delete: the row is gone).
func assertLastMessageIsDatabase(t *testing.T, e *itest.Env, topic string) {
	t.Helper()
	want := map[string]int64{}
	rows, err := e.Conn.Query(context.Background(), `SELECT id, qty FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, qty int64
		rows.Scan(&id, &qty)
		want[fmt.Sprint(id)] = qty
	}
	rows.Close()
	// Wait until the stream caught up with the database's last change.
	var last map[string]map[string]any
	itest.WaitFor(t, 3*time.Minute, "the topic to match the database", func() bool {
		last = map[string]map[string]any{}
		itest.EachMessageWithin(t, topic, 3*time.Minute, func(m itest.Message) {
			key := fmt.Sprint(m.Key["payload"].(map[string]any)["id"])
			if m.Value == nil {
				return // tombstone after the delete record
			}
			last[key] = m.Payload()
		})
		live := 0
		for _, p := range last {
			if p["op"] != "d" {
				live++
			}
		}
		return live == len(want)
	})
	bad := 0
	for key, p := range last {
		qty, present := want[key]
		switch {
		case p["op"] == "d" && present:
			t.Errorf("key %s: last message is a delete, the row exists (qty %d)", key, qty)
		case p["op"] != "d" && !present:
			t.Errorf("key %s: last message is %s, the row is deleted", key, p["op"])
		case p["op"] != "d":
			after, _ := p["after"].(map[string]any)
			if fmt.Sprint(after["qty"]) != fmt.Sprint(qty) {
				t.Errorf("key %s: last message has qty %v, the database %d (op %s)", key, after["qty"], qty, p["op"])
			}
		}
		if t.Failed() {
			if bad++; bad > 10 {
				t.Fatal("more than 10 keys differ")
			}
		}
	}
}

// TestBackfillRequestWithoutSnapshotEngine: while the PostgreSQL source
// cannot snapshot while streaming, a request reaches the running pipeline
// from the CLI through the store, which says so in its log, keeps
// streaming and leaves the request pending for a build that can; the next
// run reports it before streaming. Skipped once the engine is in (the
// test above covers that).
func TestBackfillRequestWithoutSnapshotEngine(t *testing.T) {
	e := itest.NewEnv(t, "bfnoengine")
	src, err := capturepkg.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix,
		Config: config.Source{Type: "postgres", URL: e.PGURL()}})
	if err != nil {
		t.Fatal(err)
	}
	_, snapshots := any(src).(source.Snapshotter)
	src.Close()
	if snapshots {
		t.Skip("the source snapshots while streaming: TestBackfillOnDemandPG covers the request path")
	}
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO orders VALUES (1)`)
	cfg := e.WriteConfig("")
	topic := e.Prefix + ".public.orders"
	p := e.Start("run", "--config", cfg, "--log-format", "text")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("run output:\n%s", itest.OutTail(p.Out.String()))
		}
	})
	itest.WaitFor(t, time.Minute, "the initial backfill", func() bool { return itest.TopicEnd(topic) >= 1 })
	if code, out := itest.BackfillCLI(t, e, "--config", cfg, "--table", "public.orders"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, out)
	}
	const refusal = "backfill: source type postgres cannot snapshot while streaming; the request stays pending"
	itest.WaitFor(t, 20*time.Second, "the pipeline to report the request it cannot serve", func() bool {
		return strings.Contains(p.Out.String(), refusal) && strings.Contains(p.Out.String(), "tables=public.orders")
	})
	e.Exec(`INSERT INTO orders VALUES (2)`) // streaming goes on
	itest.WaitFor(t, 30*time.Second, "the insert after the request", func() bool { return itest.TopicEnd(topic) >= 2 })
	if req, err := checkpoint.PendingFile(filepath.Join(e.Dir, "checkpoints"), e.Name); err != nil || strings.Join(req.Tables, ",") != "public.orders" {
		t.Fatalf("the request did not stay pending: %+v, %v", req, err)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, itest.OutTail(p.Out.String()))
	}
	// The next run meets the request before it streams, and says so at once.
	p = e.Start("run", "--config", cfg, "--log-format", "text")
	itest.WaitFor(t, 20*time.Second, "the next run to report the pending request", func() bool { return strings.Contains(p.Out.String(), refusal) })
	p.Stop(t)
}
