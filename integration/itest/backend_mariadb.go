package itest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// MariaBackend is MariaDB through go-mysql's client.
type MariaBackend struct {
	E  *MyEnv
	Mu sync.Mutex
}

func newMariaBackend(t *testing.T, label string) Backend {
	return &MariaBackend{E: NewMyEnv(t, label)}
}

func (b *MariaBackend) Kind() string { return "mariadb" }

func (b *MariaBackend) Env() *Env { return b.E.Env }

func (b *MariaBackend) Latin1() bool { return true }

func (b *MariaBackend) Exec(sql string) error {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	_, err := b.E.My.Execute(sql)
	return err
}

func (b *MariaBackend) State(table string) (map[int64]DBRow, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	r, err := b.E.My.Execute("SELECT k, seq, v, vl FROM " + table)
	if err != nil {
		return nil, err
	}
	out := map[int64]DBRow{}
	for i := 0; i < r.RowNumber(); i++ {
		k, _ := r.GetInt(i, 0)
		seq, _ := r.GetInt(i, 1)
		row := DBRow{Seq: seq}
		for c, dst := range []**string{&row.v, &row.vl} {
			if null, _ := r.IsNull(i, c+2); !null {
				s, _ := r.GetString(i, c+2)
				*dst = &s
			}
		}
		out[k] = row
	}
	return out, nil
}

func (b *MariaBackend) Topic(table string) string { return b.E.Prefix + "." + b.E.DB + "." + table }

func (b *MariaBackend) TableID(table string) string { return b.E.DB + "." + table }

func (b *MariaBackend) Config(tables []string, destExtra string) string {
	return writeScenarioConfig(b.E.Env, "mysql", b.E.URL(), b, tables, destExtra)
}

func (b *MariaBackend) CreateTable(table string) []string {
	return []string{`CREATE TABLE ` + table + ` (k BIGINT PRIMARY KEY, seq BIGINT NOT NULL,
		v VARCHAR(200) CHARACTER SET utf8mb4, vl VARCHAR(200) CHARACTER SET latin1, big MEDIUMTEXT)`}
}

// TextKeyTable: latin1, so that 2,000 characters fit InnoDB's 3,072-byte
// key; the binlog's full row image carries the whole row of a delete.
func (b *MariaBackend) TextKeyTable(table string) []string {
	return []string{`CREATE TABLE ` + table + ` (id VARCHAR(2000) CHARACTER SET latin1 PRIMARY KEY, body MEDIUMTEXT NOT NULL)`}
}

func (b *MariaBackend) BulkInsert(table string, k0, seq0 int64, n int) string {
	return fmt.Sprintf(`INSERT INTO %s (k, seq, v, vl) SELECT %d + seq, %d + seq, 'bulk', 'bulk' FROM seq_1_to_%d`, table, k0, seq0, n)
}

func (b *MariaBackend) ShiftColumn(table, col string) string {
	return fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s VARCHAR(10) DEFAULT 'z' AFTER k", table, col)
}

func (b *MariaBackend) ChangeType(table, col string) string {
	return fmt.Sprintf(`ALTER TABLE %s MODIFY COLUMN %s BIGINT`, table, col)
}

func (b *MariaBackend) AdminUserinfo() string { return "root:root" }

func (b *MariaBackend) ShapeTable(feature, table string) (ShapeTable, bool) {
	cols := `k BIGINT NOT NULL, seq BIGINT NOT NULL, v VARCHAR(200) CHARACTER SET utf8mb4,
		vl VARCHAR(200) CHARACTER SET latin1, big MEDIUMTEXT`
	switch feature {
	case "toast": // the full row image carries tv: the analogue of PostgreSQL's TOAST
		return ShapeTable{Create: []string{`CREATE TABLE ` + table + ` (` + cols + `, tv MEDIUMTEXT, PRIMARY KEY (k))`}}, true
	case "keyless":
		return ShapeTable{Keyless: true, Create: []string{`CREATE TABLE ` + table + ` (` + cols + `, KEY (k))`}}, true
	}
	return ShapeTable{}, false
}

func (b *MariaBackend) CharsetColumns(table, charset string, enum, set []string) []string {
	members := func(ms []string) string {
		var q []string
		for _, m := range ms {
			q = append(q, SQLText(&m))
		}
		return strings.Join(q, ", ")
	}
	return []string{fmt.Sprintf(`ALTER TABLE %s ADD COLUMN cs VARCHAR(100) CHARACTER SET %s,
		ADD COLUMN en ENUM(%s) CHARACTER SET utf8mb4, ADD COLUMN st SET(%s) CHARACTER SET utf8mb4`,
		table, charset, members(enum), members(set))}
}

func (b *MariaBackend) ColumnsText(table string, cols []string) (map[int64]map[string]*string, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	sel := "k"
	for _, c := range cols {
		sel += ", CONVERT(" + c + " USING utf8mb4)"
	}
	r, err := b.E.My.Execute("SELECT " + sel + " FROM " + table)
	if err != nil {
		return nil, err
	}
	out := map[int64]map[string]*string{}
	for i := 0; i < r.RowNumber(); i++ {
		k, _ := r.GetInt(i, 0)
		out[k] = map[string]*string{}
		for c, col := range cols {
			if null, _ := r.IsNull(i, c+1); !null {
				s, _ := r.GetString(i, c+1)
				out[k][col] = &s
			}
		}
	}
	return out, nil
}

func (b *MariaBackend) CreateLogin(t *testing.T, user, password string) {
	t.Helper()
	for _, q := range []string{"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'", "GRANT ALL PRIVILEGES ON *.* TO '" + user + "'@'%'"} {
		if err := b.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { b.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
}
