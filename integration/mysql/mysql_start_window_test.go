package mysql_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
)

// TestMySQLTableCreatedDuringStart: a table created during a fresh start,
// after its table discovery and before the start position is handed on,
// is streamed by that run, from its first row. The test
// drives the driver through the capture loop's steps itself (Connect,
// Discover, Fresh, Start, Stream, as pkg/capture calls them), so the
// table is created at exactly that point. Before the fix the position
// was read after discovery: past the CREATE TABLE and the inserts, so
// the run never published them.
func TestMySQLTableCreatedDuringStart(t *testing.T) {
	e := itest.NewMyEnv(t, "mystartwindow")
	e.Exec("CREATE TABLE items (id INT PRIMARY KEY)")
	e.Exec("INSERT INTO items VALUES (1)")
	db, err := mysql.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix,
		Config: config.Source{Type: "mysql", URL: e.URL(), ServerID: config.DefaultServerID(e.Name)}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := db.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	tables, err := db.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 {
		t.Fatalf("discovered %v, want only items", tables)
	}
	e.Exec("CREATE TABLE later (id INT PRIMARY KEY, note VARCHAR(10))")
	e.Exec("INSERT INTO later VALUES (1, 'one'), (2, 'two')")
	if err := db.Fresh(ctx, false); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]int{} // table -> changes streamed
	emit := func(_ context.Context, ev *change.Event) error {
		if ev.Table != nil {
			mu.Lock()
			got[ev.Table.ID.Name]++
			mu.Unlock()
		}
		return nil
	}
	if err := db.Start(ctx, emit); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Stream(ctx, emit) }()
	e.Exec("INSERT INTO later VALUES (3, 'three')")
	itest.WaitFor(t, 60*time.Second, "the three rows of later streamed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got["later"] >= 3
	})
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("stream: %v", err)
	}
}
