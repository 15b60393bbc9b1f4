package mysql_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/source"
)

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
	db := newDriver(t, e)
	_, err := attempt{afterConnect: func() {
		e.Exec("INSERT INTO items VALUES (1, 'one')")
		e.Exec("ALTER TABLE items ADD COLUMN extra INT NOT NULL DEFAULT 7")
		e.Exec("INSERT INTO items VALUES (2, 'two', 8)")
	}}.run(db)
	if err != nil {
		if errors.Is(err, source.ErrResnapshotRequired) || !db.Retriable(err) {
			t.Fatalf("the first attempt of a fresh start failed with an error the reconnect loop does not retry (the pipeline stops): %v", err)
		}
		t.Logf("first attempt (retried by the loop): %v", err)
	}
	got, err := attempt{streaming: func() { e.Exec("INSERT INTO items VALUES (3, 'three', 9)") }, want: 1}.run(db)
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
	db := newDriver(t, e)
	got, err := attempt{afterConnect: func() {
		e.Exec("CREATE TABLE later (id INT PRIMARY KEY, note VARCHAR(10), n DECIMAL(65,30))")
		e.Exec("INSERT INTO later VALUES (1, 'one', -0.5), (2, 'two', 99999999999999999999999999999999999.000000000000000000000000000001)")
	}, streaming: func() {
		e.Exec("INSERT INTO later VALUES (3, 'three', 0)")
	}, want: 3}.run(db)
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
	db := newDriver(t, e)
	got, err := attempt{afterConnect: func() {
		e.Exec("INSERT INTO d VALUES (1, 1.5, 99999999999999999999999999999999999.999999999999999999999999999999, -0.00)")
		e.Exec("INSERT INTO d VALUES (2, 0, 0.000000000000000000000000000001, -12345678.91)")
		e.Exec("ALTER TABLE d MODIFY s DECIMAL(12,4)")
	}, streaming: func() {
		e.Exec("INSERT INTO d VALUES (3, 99999.999, 1, -0.0001)")
	}, want: 3}.run(db)
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
