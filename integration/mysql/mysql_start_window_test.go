package mysql_test

import (
	"slices"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
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
	got, err := attempt{afterDiscover: func() {
		e.Exec("CREATE TABLE later (id INT PRIMARY KEY, note VARCHAR(10))")
		e.Exec("INSERT INTO later VALUES (1, 'one'), (2, 'two')")
	}, streaming: func() {
		e.Exec("INSERT INTO later VALUES (3, 'three')")
	}, want: 3}.run(newDriver(t, e))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`later c id=1 note="one"`, `later c id=2 note="two"`, `later c id=3 note="three"`}
	if !slices.Equal(got, want) {
		t.Fatalf("streamed\n%q\nwant\n%q", got, want)
	}
}
