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

	"github.com/tributary-cdc/tributary/integration/itest"
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

// TestMySQLTableCreatedDuringStartMinimal: TestMySQLTableCreatedDuringStart
// on a server without column names in the binlog: the table created
// after the start position and before the listing is in the schema
// history read from the catalog, so its rows streamed from before that
// read decode with its columns, DECIMAL(65,30) text included.
func TestMySQLTableCreatedDuringStartMinimal(t *testing.T) {
	e := minimalMyEnv(t, "mycreatedmin")
	e.Exec("CREATE TABLE items (id INT PRIMARY KEY)")
	db, err := mysql.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix,
		Config: config.Source{Type: "mysql", URL: e.URL(), ServerID: config.DefaultServerID(e.Name)}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := startAttempt(t, db, func() {
		e.Exec("CREATE TABLE later (id INT PRIMARY KEY, note VARCHAR(10), n DECIMAL(65,30))")
		e.Exec("INSERT INTO later VALUES (1, 'one', -0.5), (2, 'two', 99999999999999999999999999999999999.000000000000000000000000000001)")
	}, func() {
		e.Exec("INSERT INTO later VALUES (3, 'three', 0)")
	}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`later c id=1 note="one" n="-0.500000000000000000000000000000"`,
		`later c id=2 note="two" n="99999999999999999999999999999999999.000000000000000000000000000001"`,
		`later c id=3 note="three" n="0.000000000000000000000000000000"`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("streamed\n%q\nwant\n%q", got, want)
	}
}

// TestMySQLStreamedDecimalText: MariaDB streams a DECIMAL as go-mysql's
// text of the binlog value (UseDecimal off, pkg/source/mysql/stream.go):
// zero-filled, unsigned, negative, the largest precision and scale, a
// value of zero, and rows written under a scale an ALTER has changed
// since (streamed after it) each come out as the column's fixed-point
// text at the scale the row was written with.
func TestMySQLStreamedDecimalText(t *testing.T) {
	e := itest.NewMyEnv(t, "mydectext")
	e.Exec("CREATE TABLE d (id INT PRIMARY KEY, z DECIMAL(8,3) ZEROFILL, u DECIMAL(65,30) UNSIGNED, s DECIMAL(10,2))")
	db, err := mysql.New(context.Background(), source.Options{Pipeline: e.Name, TopicPrefix: e.Prefix,
		Config: config.Source{Type: "mysql", URL: e.URL(), ServerID: config.DefaultServerID(e.Name)}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := startAttempt(t, db, func() {
		e.Exec("INSERT INTO d VALUES (1, 1.5, 99999999999999999999999999999999999.999999999999999999999999999999, -0.00)")
		e.Exec("INSERT INTO d VALUES (2, 0, 0.000000000000000000000000000001, -12345678.91)")
		e.Exec("ALTER TABLE d MODIFY s DECIMAL(12,4)")
	}, func() {
		e.Exec("INSERT INTO d VALUES (3, 99999.999, 1, -0.0001)")
	}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`d c id=1 z="1.500" u="99999999999999999999999999999999999.999999999999999999999999999999" s="0.00"`,
		`d c id=2 z="0.000" u="0.000000000000000000000000000001" s="-12345678.91"`,
		`d c id=3 z="99999.999" u="1.000000000000000000000000000000" s="-0.0001"`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("streamed\n%q\nwant\n%q", got, want)
	}
}
