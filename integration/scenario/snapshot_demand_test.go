package scenario_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	capturepkg "github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// capture is a source run in the test's process, its events collected
// in emit order (the order the pipeline publishes per key).
type capture struct {
	src  source.Source
	mu   sync.Mutex
	evs  []*change.Event
	done chan error
	stop context.CancelFunc
}

func (c *capture) events() []*change.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*change.Event(nil), c.evs...)
}

// startCapture runs b's source in process (no Kafka): the tests of the
// source's own contract (Snapshotter, Progresser) that need no pipeline.
func startCapture(t *testing.T, b itest.Backend) *capture {
	t.Helper()
	e := b.Env()
	var cfg config.Source
	switch bk := b.(type) {
	case *itest.PGBackend:
		cfg = config.Source{Type: "postgres", URL: e.PGURL(), Settings: postgres.Settings{Slot: "tributary_" + e.Name, Publication: "tributary_" + e.Name}}
	case *itest.MariaBackend:
		cfg = config.Source{Type: "mysql", URL: bk.E.URL(), Settings: mysql.Settings{ServerID: mysql.DefaultServerID(e.Name)}}
	}
	src, err := capturepkg.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &capture{src: src, done: make(chan error, 1), stop: cancel}
	go func() {
		c.done <- src.Run(ctx, nil, func(_ context.Context, ev *change.Event) error {
			if ev.Table != nil {
				c.mu.Lock()
				c.evs = append(c.evs, ev)
				c.mu.Unlock()
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-c.done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("source run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the source did not stop within 30 s")
		}
		src.Close()
	})
	return c
}

// progressOf is the source's progress for table, and whether it is there.
func progressOf(src source.Source, table string) (snapshot.TableProgress, bool) {
	for _, p := range src.(source.Progresser).SnapshotProgress() {
		if p.Table == table {
			return p, true
		}
	}
	return snapshot.TableProgress{}, false
}

// TestSnapshotOnDemand, on every source: Snapshot of one table, asked
// while the source streams, re-publishes that table's rows (op r,
// snapshot "incremental") and no other table's, while the changes of the
// other table keep streaming in between its chunks; progress counts its
// rows; an unknown table is refused by name.
func TestSnapshotOnDemand(t *testing.T) {
	itest.ForEachBackend(t, "snapdemand", func(t *testing.T, b itest.Backend) {
		t.Setenv("TRIBUTARY_SNAPSHOT_CHUNK_ROWS", "100")
		const rows = 2000
		itest.CreateTables(t, b, "a", "other")
		itest.MustExecOn(t, b, b.BulkInsert("a", 0, 0, rows))
		itest.MustExecOn(t, b, b.BulkInsert("other", 0, 0, 10))
		c := startCapture(t, b)
		a := b.TableID("a")
		itest.WaitFor(t, 120*time.Second, "the initial snapshot", func() bool {
			p, ok := progressOf(c.src, a)
			q, ok2 := progressOf(c.src, b.TableID("other"))
			return ok && ok2 && p.Done && q.Done
		})
		if p, _ := progressOf(c.src, a); p.Rows != rows || p.Started.IsZero() {
			t.Errorf("initial snapshot progress %+v, want %d rows and a start time", p, rows)
		}
		mark := len(c.events())

		snap := c.src.(source.Snapshotter)
		if err := snap.Snapshot(context.Background(), []string{a, "nope.nope"}); err == nil || !strings.Contains(err.Error(), "nope.nope") {
			t.Errorf("Snapshot of an unknown table: %v, want an error naming it", err)
		}
		// The other table changes all along.
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; !stop.Load(); i++ {
				if err := b.Exec(fmt.Sprintf(`UPDATE other SET seq = %d WHERE k = %d`, 1000+i, 1+i%10)); err != nil {
					t.Errorf("update: %v", err)
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
		time.Sleep(300 * time.Millisecond)
		if err := snap.Snapshot(context.Background(), []string{a}); err != nil {
			t.Fatal(err)
		}
		itest.WaitFor(t, 120*time.Second, "the snapshot of "+a, func() bool {
			p, _ := progressOf(c.src, a)
			return p.Done && p.Rows == rows
		})
		stop.Store(true)
		wg.Wait()

		evs := c.events()[mark:]
		reads, first, last := 0, -1, -1
		for i, ev := range evs {
			if ev.Op != change.OpRead {
				continue
			}
			if ev.Table.ID.Name != "a" {
				t.Fatalf("Snapshot(%s) published an r row of %s", a, ev.Table.ID.Name)
			}
			if ev.Source.Snapshot != "incremental" {
				t.Errorf("r row with source.snapshot %q, want incremental", ev.Source.Snapshot)
				break
			}
			reads++
			if first < 0 {
				first = i
			}
			last = i
		}
		if reads != rows {
			t.Errorf("Snapshot(%s) published %d r rows, want %d", a, reads, rows)
		}
		between := 0
		for _, ev := range evs[max(first, 0):max(last, 0)] {
			if ev.Table.ID.Name == "other" && ev.Op == change.OpUpdate {
				between++
			}
		}
		if between == 0 {
			t.Errorf("no change of the other table was published while %s was snapshotted (the stream stopped?)", a)
		}
		t.Logf("%d r rows of %s, %d changes of the other table streamed in between", reads, a, between)
	})
}
