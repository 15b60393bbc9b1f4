package mysql_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
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
	want := []string{"1: 1", "2: 5", "3: none"}
	got, err := attempt{streaming: func() {
		e.Exec("INSERT INTO d VALUES (1, 1)")
		e.Exec("ALTER TABLE d ALTER COLUMN c SET DEFAULT 5")
		e.Exec("INSERT INTO d VALUES (2, 2)")
		e.Exec("ALTER TABLE d ALTER COLUMN c DROP DEFAULT")
		e.Exec("INSERT INTO d VALUES (3, 3)")
	}, want: len(want), line: func(ev *change.Event) string { // "id: c's default"
		if len(ev.After) < 2 {
			return ""
		}
		d := "none"
		if c := ev.Table.Columns[1]; c.Default != nil {
			d = c.Default.String()
		}
		return fmt.Sprintf("%s: %s", ev.After[0], d)
	}}.run(newDriver(t, e))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("c's default in the streamed rows' schema: got %q, want %q", got, want)
	}
}
