package mysql_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
)

// TestMySQLHistoryAlterColumnDefault: without column names in the
// binlog (binlog_row_metadata = MINIMAL) the schema history applies
// `ALTER TABLE … ALTER COLUMN c SET DEFAULT 5` and `… DROP DEFAULT`, so
// the rows streamed after each carry c's default in their schema (the
// "default" a consumer of the value schema reads, as Debezium's DDL
// parser keeps it, and as the catalog gives it on a FULL server). Before
// the fix the history dropped the default on SET DEFAULT: the TiDB
// parser gives that clause's value as an option of no type, which the
// history's ALTER COLUMN took for no default.
func TestMySQLHistoryAlterColumnDefault(t *testing.T) {
	e := minimalMyEnv(t, "myhistdflt")
	e.Exec("CREATE TABLE d (id INT PRIMARY KEY, c INT DEFAULT 1)")
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
	if _, err := db.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Fresh(ctx, false); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string // "id: c's default"
	emit := func(_ context.Context, ev *change.Event) error {
		if ev.Table == nil || len(ev.After) < 2 {
			return nil
		}
		d := "none"
		if c := ev.Table.Columns[1]; c.Default != nil {
			d = c.Default.String()
		}
		mu.Lock()
		got = append(got, fmt.Sprintf("%s: %s", ev.After[0], d))
		mu.Unlock()
		return nil
	}
	if err := db.Start(ctx, emit); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Stream(ctx, emit) }()
	e.Exec("INSERT INTO d VALUES (1, 1)")
	e.Exec("ALTER TABLE d ALTER COLUMN c SET DEFAULT 5")
	e.Exec("INSERT INTO d VALUES (2, 2)")
	e.Exec("ALTER TABLE d ALTER COLUMN c DROP DEFAULT")
	e.Exec("INSERT INTO d VALUES (3, 3)")
	want := []string{"1: 1", "2: 5", "3: none"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("stream: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("c's default in the streamed rows' schema: got %q, want %q", got, want)
	}
}
