package itest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// ChangeLog runs inserts, updates and deletes on a table while it streams
// and records, for each, the values its c/u/d message must carry: the
// row's columns as the server itself returns them, converted to utf8mb4
// (SELECT CONVERT(col USING utf8mb4)), so that a test compares the
// messages with the database, not with literals of its own.
type ChangeLog struct {
	e     *MyEnv
	table string
	cols  []string
	Want  map[string]map[string]any // "<op><id>" → column → text; nil: NULL
	last  map[int]map[string]any
}

func (e *MyEnv) ChangeLog(table string, cols ...string) *ChangeLog {
	return &ChangeLog{e: e, table: table, cols: cols, Want: map[string]map[string]any{}, last: map[int]map[string]any{}}
}

// read returns row id's columns as the server converts them to utf8mb4.
func (l *ChangeLog) read(id int) map[string]any {
	l.e.T.Helper()
	sel := make([]string, len(l.cols))
	for i, c := range l.cols {
		sel[i] = "CONVERT(" + quoteMyIdent(c) + " USING utf8mb4)"
	}
	r := l.e.Exec(fmt.Sprintf("SELECT %s FROM %s WHERE id = %d", strings.Join(sel, ", "), quoteMyIdent(l.table), id))
	if len(r.Values) != 1 {
		l.e.T.Fatalf("row %d of %s: %d rows", id, l.table, len(r.Values))
	}
	row := map[string]any{}
	for i, c := range l.cols {
		if null, _ := r.IsNull(0, i); null {
			row[c] = nil
			continue
		}
		s, _ := r.GetString(0, i)
		row[c] = strings.Clone(s)
	}
	return row
}

// Insert runs stmt, which inserts row id: its c message carries the row.
func (l *ChangeLog) Insert(id int, stmt string) {
	l.e.T.Helper()
	l.e.Exec(stmt)
	l.last[id] = l.read(id)
	l.Want[fmt.Sprintf("c%d", id)] = l.last[id]
}

// Update runs stmt, which updates row id (once per test): its u message
// carries the row after it.
func (l *ChangeLog) Update(id int, stmt string) {
	l.e.T.Helper()
	l.e.Exec(stmt)
	l.last[id] = l.read(id)
	l.Want[fmt.Sprintf("u%d", id)] = l.last[id]
}

// Delete deletes row id: its d message carries the row as it was.
func (l *ChangeLog) Delete(id int) {
	l.e.T.Helper()
	l.Want[fmt.Sprintf("d%d", id)] = l.last[id]
	l.e.Exec(fmt.Sprintf("DELETE FROM %s WHERE id = %d", quoteMyIdent(l.table), id))
}

// Check compares the c/u/d messages of topic with what was recorded:
// every change has its message, with the server's values.
func (l *ChangeLog) Check(t *testing.T, topic string) {
	t.Helper()
	got := map[string]map[string]any{}
	for _, m := range ReadTopic(t, topic) {
		pl := m.Payload()
		op, _ := pl["op"].(string)
		row, _ := pl["after"].(map[string]any)
		if op == "d" {
			row, _ = pl["before"].(map[string]any)
		}
		if op == "r" || row == nil {
			continue
		}
		got[op+JSONString(row["id"])] = row
	}
	var keys []string
	for k := range l.Want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row, ok := got[k]
		if !ok {
			t.Errorf("%s: no message for %s", l.table, k)
			continue
		}
		for _, c := range l.cols {
			if w, g := l.Want[k][c], row[c]; w != g {
				t.Errorf("%s %s: %s = %s, the server has %s", l.table, k, c, JSONString(g), JSONString(w))
			}
		}
	}
}

func quoteMyIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
