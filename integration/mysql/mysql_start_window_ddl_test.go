package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
)

// startAttempt drives one attempt of a fresh start through the capture
// loop's steps (Connect, Discover, Fresh, Start, Stream, as pkg/capture
// calls them), running between after Connect, in the window the start
// position is read in (Connect reads it before Discover), and after once
// the stream runs. It returns the streamed changes as "table op col=val …"
// lines once want of them have come (or after 30 s), or the attempt's
// error.
func startAttempt(t *testing.T, db *mysql.Source, between, after func(), want int) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := db.Connect(ctx); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	between()
	if _, err := db.Discover(ctx); err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	if err := db.Fresh(ctx, false); err != nil {
		return nil, fmt.Errorf("fresh: %w", err)
	}
	var mu sync.Mutex
	var got []string
	emit := func(_ context.Context, ev *change.Event) error {
		if ev.Table == nil {
			return nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s", ev.Table.ID.Name, ev.Op)
		for i, c := range ev.Table.Columns {
			if i < len(ev.After) {
				fmt.Fprintf(&b, " %s=%s", c.Name, ev.After[i])
			}
		}
		mu.Lock()
		got = append(got, b.String())
		mu.Unlock()
		return nil
	}
	if err := db.Start(ctx, emit); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Stream(ctx, emit) }()
	after()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	for deadline := time.Now().Add(30 * time.Second); count() < want && time.Now().Before(deadline); {
		select {
		case err := <-done:
			return slices.Clone(got), fmt.Errorf("stream: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("stream: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(got), nil
}

// TestMySQLFreshStartAfterWindowDDL: on a server that logs rows without
// column names (binlog_row_metadata = MINIMAL), a captured table altered
// during a fresh start, after rows were written to it and after the start
// position was read (Connect) but before the schema history was read from
// the catalog (Start), makes the rows in between undecodable. On a fresh
// start nothing has been published yet, so that is no lost position: the
// attempt fails with an error the reconnect loop retries
// (pkg/capture/reconnect.go), and the next attempt starts from a newer
// position and streams the table with its new columns. Before the fix the
// attempt failed with "resnapshot required", which the loop treats as
// fatal: the pipeline's very first start stopped, telling the user to
// backfill again.
func TestMySQLFreshStartAfterWindowDDL(t *testing.T) {
	e := minimalMyEnv(t, "myfreshddl")
	e.Exec("CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(10))")
	db, err := mysql.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix,
		Config: config.Source{Type: "mysql", URL: e.URL(), ServerID: config.DefaultServerID(e.Name)}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = startAttempt(t, db, func() {
		e.Exec("INSERT INTO items VALUES (1, 'one')")
		e.Exec("ALTER TABLE items ADD COLUMN extra INT NOT NULL DEFAULT 7")
		e.Exec("INSERT INTO items VALUES (2, 'two', 8)")
	}, func() {}, 0)
	if err != nil {
		if errors.Is(err, source.ErrResnapshotRequired) || !db.Retriable(err) {
			t.Fatalf("the first attempt of a fresh start failed with an error the reconnect loop does not retry (the pipeline stops): %v", err)
		}
		t.Logf("first attempt (retried by the loop): %v", err)
	}
	got, err := startAttempt(t, db, func() {}, func() {
		e.Exec("INSERT INTO items VALUES (3, 'three', 9)")
	}, 1)
	if err != nil {
		t.Fatalf("the second attempt: %v", err)
	}
	if want := `items c id=3 note="three" extra=9`; !slices.Contains(got, want) {
		t.Fatalf("streamed %q, want %q among them", got, want)
	}
}
