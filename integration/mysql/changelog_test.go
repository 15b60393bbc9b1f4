package mysql_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// changeLog runs inserts, updates and deletes on a table while it streams
// and records, for each, the values its c/u/d message must carry: the
// row's columns as the server itself returns them, converted to utf8mb4
// (SELECT CONVERT(col USING utf8mb4)), so that a test compares the
// messages with the database, not with literals of its own.
type changeLog struct {
	e     *itest.MyEnv
	table string
	cols  []string
	want  map[string]map[string]any // "<op><id>" → column → text; nil: NULL
	last  map[int]map[string]any
}

// newChangeLog is a changeLog of e's table, recording cols.
func newChangeLog(e *itest.MyEnv, table string, cols ...string) *changeLog {
	return &changeLog{e: e, table: table, cols: cols, want: map[string]map[string]any{}, last: map[int]map[string]any{}}
}

// read returns row id's columns as the server converts them to utf8mb4.
func (l *changeLog) read(id int) map[string]any {
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
func (l *changeLog) Insert(id int, stmt string) {
	l.e.T.Helper()
	l.e.Exec(stmt)
	l.last[id] = l.read(id)
	l.want[fmt.Sprintf("c%d", id)] = l.last[id]
}

// Update runs stmt, which updates row id (once per test): its u message
// carries the row after it.
func (l *changeLog) Update(id int, stmt string) {
	l.e.T.Helper()
	l.e.Exec(stmt)
	l.last[id] = l.read(id)
	l.want[fmt.Sprintf("u%d", id)] = l.last[id]
}

// Delete deletes row id: its d message carries the row as it was.
func (l *changeLog) Delete(id int) {
	l.e.T.Helper()
	l.want[fmt.Sprintf("d%d", id)] = l.last[id]
	l.e.Exec(fmt.Sprintf("DELETE FROM %s WHERE id = %d", quoteMyIdent(l.table), id))
}

// Check compares the c/u/d messages of topic with what was recorded:
// every change has its message, with the server's values.
func (l *changeLog) Check(t *testing.T, topic string) {
	t.Helper()
	got := map[string]map[string]any{}
	for _, m := range itest.ReadTopic(t, topic) {
		pl := m.Payload()
		op, _ := pl["op"].(string)
		row, _ := pl["after"].(map[string]any)
		if op == "d" {
			row, _ = pl["before"].(map[string]any)
		}
		if op == "r" || row == nil {
			continue
		}
		got[op+jsonString(row["id"])] = row
	}
	var keys []string
	for k := range l.want {
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
			if w, g := l.want[k][c], row[c]; w != g {
				t.Errorf("%s %s: %s = %s, the server has %s", l.table, k, c, jsonString(g), jsonString(w))
			}
		}
	}
}

func quoteMyIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// jsonString is v as JSON, for comparing decoded values as text.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// StopAndCheck waits until topic holds as many messages as changes were
// recorded, stops p, and checks the messages (Check).
func (l *changeLog) StopAndCheck(t *testing.T, p *itest.Proc, topic string) {
	t.Helper()
	p.WaitFor(t, 60*time.Second, "the changes", func() bool { return itest.TopicEnd(topic) >= int64(len(l.want)) })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	l.Check(t, topic)
}
