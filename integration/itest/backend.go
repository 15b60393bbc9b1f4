package itest

import (
	"strings"
	"testing"
)

// Backend is what a scenario needs from a source database, written once
// and implemented for PostgreSQL and MariaDB (the shape of Estuary's
// sqlcapture test suite): run SQL, read a table's current state, name its
// topic and its source.tables entry, write the pipeline config, and the
// few statements whose dialects differ. Scenarios run on every backend
// through ForEachBackend.
type Backend interface {
	Kind() string // "postgres" or "mariadb": the subtest name
	Env() *Env
	// Exec runs one statement on the scenario's connection.
	Exec(sql string) error
	// State reads table's rows: key → (seq, v, vl).
	State(table string) (map[int64]DBRow, error)
	Topic(table string) string
	TableID(table string) string // the source.tables entry
	// Config writes the pipeline config capturing tables (all tables when
	// nil) with destExtra in the destination section; returns its path.
	Config(tables []string, destExtra string) string
	// Latin1 tells whether the table has a latin1 column vl besides v.
	Latin1() bool
	CreateTable(table string) []string
	// BulkInsert inserts n rows k = k0+i, seq = seq0+i, v = 'bulk' (i = 1…n).
	BulkInsert(table string, k0, seq0 int64, n int) string
	// ShiftColumn adds a column that moves the columns after the key where
	// the dialect can (MariaDB AFTER k); Postgres appends it.
	ShiftColumn(table, col string) string
	ChangeType(table, col string) string
	// CreateLogin creates a login user with password and every privilege,
	// dropped when the test ends; adminUserinfo is the "user:password"
	// of config's source URL, which a test may replace by it.
	CreateLogin(t *testing.T, user, password string)
	// TextKeyTable creates table (id text PRIMARY KEY, body text NOT NULL)
	// whose deletes carry the whole row, for keys up to 2,000 characters.
	TextKeyTable(table string) []string
	AdminUserinfo() string
	// ShapeTable is the table of a shape feature (scenario_shapes_test.go)
	// with t1…t4's columns; false when the dialect has no such shape.
	ShapeTable(feature, table string) (ShapeTable, bool)
	// CharsetColumns add cs (in charset), en (an ENUM of enum) and st (a
	// SET of set) to table; none where a database has one character set.
	CharsetColumns(table, charset string, enum, set []string) []string
	// ColumnsText reads cols of table's rows as UTF-8 text: key → col → value.
	ColumnsText(table string, cols []string) (map[int64]map[string]*string, error)
}

// DBRow is a row of a scenario table as the database holds it.
type DBRow struct {
	Seq   int64
	v, vl *string
}

// ForEachBackend runs scenario as subtests "postgres" and "mariadb", each
// on a database of its own.
func ForEachBackend(t *testing.T, label string, scenario func(t *testing.T, b Backend)) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) { scenario(t, bk.make(t, label)) })
	}
}

// backends are the constructors by subtest name, in run order.
var backends = []struct {
	name string
	make func(*testing.T, string) Backend
}{
	{"postgres", NewPGBackend},
	{"mariadb", newMariaBackend},
}

// BackendNamed makes a fresh backend of the kind named (a database of
// its own), for a scenario that starts over.
func BackendNamed(t *testing.T, kind, label string) Backend {
	t.Helper()
	for _, bk := range backends {
		if bk.name == kind {
			return bk.make(t, label)
		}
	}
	t.Fatalf("no backend %q", kind)
	return nil
}

// writeScenarioConfig writes a pipeline config for either source; tables
// nil captures every table.
func writeScenarioConfig(e *Env, typ, url string, b Backend, tables []string, destExtra string) string {
	var src strings.Builder
	if tables != nil {
		src.WriteString("  tables:\n")
		for _, t := range tables {
			src.WriteString("    - " + b.TableID(t) + "\n")
		}
	}
	return e.WritePipeline(PipelineConfig{Typ: typ, URL: url, Source: src.String(), Destination: destExtra})
}

// CreateTables creates the scenario tables on b, or fails the test.
func CreateTables(t *testing.T, b Backend, tables ...string) {
	t.Helper()
	for _, table := range tables {
		for _, q := range b.CreateTable(table) {
			if err := b.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// MustExecOn runs sql on b, or fails the test.
func MustExecOn(t *testing.T, b Backend, sql string) {
	t.Helper()
	if err := b.Exec(sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// ShapeTable is a table a shape feature adds to the workload, as the
// backend creates it (Backend.ShapeTable). It has the columns of t1…t4
// (k, seq, v, vl on MariaDB, big) and a row is still named by k.
type ShapeTable struct {
	Feature     string
	Create      []string
	Keyless     bool // no primary key: the message key is null, k is read from the row
	KeyOnly     bool // a delete's old image carries the key only (no seq)
	NoKeyUpdate bool // the workload never changes k (set by addShapes)
}

// SQLText is s as an SQL string literal, NULL for nil.
func SQLText(s *string) string {
	if s == nil {
		return "NULL"
	}
	return "'" + strings.ReplaceAll(*s, "'", "''") + "'"
}

// CheckKeyHistories checks, per key, that the seq of its messages never
// goes back and that its last message is the database's row.
func CheckKeyHistories(t *testing.T, msgs []Message, want map[int64]DBRow) {
	t.Helper()
	type step struct {
		op  string
		seq int64
	}
	hist := map[int64][]step{}
	reads := 0
	for _, m := range msgs {
		if m.Value == nil {
			continue // tombstone
		}
		pl := m.Payload()
		op, _ := pl["op"].(string)
		row, _ := pl["after"].(map[string]any)
		if op == "d" {
			row, _ = pl["before"].(map[string]any)
		}
		if op == "r" {
			reads++
		}
		k := int64(m.Key["payload"].(map[string]any)["k"].(float64))
		s, _ := row["seq"].(float64)
		hist[k] = append(hist[k], step{op, int64(s)})
	}
	if reads == 0 {
		t.Fatal("no r rows published")
	}
	bad := 0
	for k, h := range hist {
		for i := 1; i < len(h); i++ {
			if h[i].seq < h[i-1].seq && bad < 10 {
				bad++
				t.Errorf("key %d: %s seq %d published after %s seq %d (an older version after a newer one): %v", k, h[i].op, h[i].seq, h[i-1].op, h[i-1].seq, h)
			}
		}
		last := h[len(h)-1]
		row, ok := want[k]
		switch {
		case last.op == "d" && ok:
			t.Errorf("key %d: last message is a delete, the database has seq %d: %v", k, row.Seq, h)
		case last.op != "d" && !ok:
			t.Errorf("key %d: last message %s seq %d, the key is not in the database: %v", k, last.op, last.seq, h)
		case ok && last.seq != row.Seq:
			t.Errorf("key %d: last message %s seq %d, the database has seq %d: %v", k, last.op, last.seq, row.Seq, h)
		}
	}
	for k := range want {
		if _, ok := hist[k]; !ok {
			t.Errorf("key %d is in the database and was never published", k)
		}
	}
}
