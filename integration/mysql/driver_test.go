package mysql_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
)

// newDriver is the MySQL driver of e's database, not connected yet: the
// tests below drive it through the capture loop's steps themselves.
func newDriver(t *testing.T, e *itest.MyEnv) *mysql.Source {
	t.Helper()
	db, err := mysql.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix,
		Config: config.Source{Type: "mysql", URL: e.URL(), Settings: mysql.Settings{ServerID: mysql.DefaultServerID(e.Name)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// attempt is one attempt of a fresh start driven through the capture
// loop's steps (Connect, Discover, Fresh, Start, Stream, as pkg/capture
// calls them): afterConnect runs in the window the start position is read
// in (Connect reads it before Discover), afterDiscover between the table
// list and Fresh, streaming once the stream runs; want changes are waited
// for (30 s at most), each written as line makes it (nil: "table op
// col=val …").
type attempt struct {
	afterConnect, afterDiscover, streaming func()
	want                                   int
	line                                   func(*change.Event) string
}

// run returns the streamed changes' lines, or the attempt's error.
func (a attempt) run(db *mysql.Source) ([]string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	step := func(f func()) {
		if f != nil {
			f()
		}
	}
	if err := db.Connect(ctx); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	step(a.afterConnect)
	if _, err := db.Discover(ctx); err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	step(a.afterDiscover)
	if err := db.Fresh(ctx, false); err != nil {
		return nil, fmt.Errorf("fresh: %w", err)
	}
	line := a.line
	if line == nil {
		line = changeLine
	}
	var mu sync.Mutex
	var got []string
	emit := func(_ context.Context, ev *change.Event) error {
		if ev.Table == nil {
			return nil
		}
		if l := line(ev); l != "" {
			mu.Lock()
			got = append(got, l)
			mu.Unlock()
		}
		return nil
	}
	if err := db.Start(ctx, changes(emit)); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Stream(ctx, changes(emit)) }()
	step(a.streaming)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	for deadline := time.Now().Add(30 * time.Second); count() < a.want && time.Now().Before(deadline); {
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

// changes is the loop's side of the stream as these tests see it: the
// changes only (no snapshot runs, no key changes).
type changes func(context.Context, *change.Event) error

func (f changes) Change(ctx context.Context, ev *change.Event) error { return f(ctx, ev) }
func (changes) Commit(context.Context, change.Position, int64) error { return nil }
func (changes) Heartbeat(context.Context, change.Position) error     { return nil }
func (changes) Watermark(context.Context, string) error              { return nil }
func (changes) Captured(json.RawMessage, []string)                   {}
func (changes) Added([]string)                                       {}
func (changes) Gone(string)                                          {}
func (changes) Again(string)                                         {}

// changeLine writes a change as "table op col=val …".
func changeLine(ev *change.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", ev.Table.ID.Name, ev.Op)
	for i, c := range ev.Table.Columns {
		if i < len(ev.After) {
			fmt.Fprintf(&b, " %s=%s", c.Name, ev.After[i])
		}
	}
	return b.String()
}
