package mysql_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/go-mysql-org/go-mysql/client"
)

// textKeyTables have a text primary key in a character set other than
// utf8, with prefixes whose order in the column's collation differs from
// their UTF-8 byte order (cp1251: а < П < Я, in UTF-8 П < Я < а).
var textKeyTables = []struct {
	charset, collation string
	prefixes           []string
}{
	{"cp1251", "cp1251_general_ci", []string{"zz", "абв", "Привет", "Яблоко"}},
	{"sjis", "sjis_japanese_ci", []string{"abc", "カタカナ", "こんにちは", "世界"}},
	{"utf16", "utf16_general_ci", []string{"héllo", "Привет", "世界", "😀x"}},
}

// TestMySQLTextKeySnapshot: a backfill in small chunks while a writer
// updates, deletes and inserts rows of tables keyed by cp1251, sjis and
// utf16 text publishes every row exactly once and never an older state
// after a newer one: the snapshot engine matches a chunk's rows with the
// stream's changes by decoded key (pkg/snapshot/key.go), which meet only
// when the binlog's text is converted as the backfill's is; the chunks
// are bounded and ordered by the server in the column's collation
// (ReadChunk's keyset query), not by bytes. The last message of every
// key is the database's row.
func TestMySQLTextKeySnapshot(t *testing.T) {
	e := itest.NewMyEnv(t, "mytkey")
	const rows = 300
	for _, tk := range textKeyTables {
		e.Exec(fmt.Sprintf("CREATE TABLE t_%s (k VARCHAR(40) CHARACTER SET %s COLLATE %s PRIMARY KEY, seq BIGINT NOT NULL)", tk.charset, tk.charset, tk.collation))
		var vals []string
		for i := 0; i < rows; i++ {
			vals = append(vals, fmt.Sprintf("(%s, 0)", quoteSQL(textKey(tk.prefixes, i))))
		}
		e.Exec(fmt.Sprintf("INSERT INTO t_%s VALUES %s", tk.charset, strings.Join(vals, ", ")))
	}
	e.Exec("CREATE TABLE marker (id INT PRIMARY KEY)")
	w, err := client.Connect(itest.MariadbAddr, "root", "root", e.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=10"}, "run", "--config", e.WriteConfig(""))

	var stop atomic.Bool
	var wg sync.WaitGroup
	var seq atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := rows
		for !stop.Load() {
			tk := textKeyTables[rand.IntN(len(textKeyTables))]
			k := quoteSQL(textKey(tk.prefixes, rand.IntN(next)))
			n := seq.Add(1)
			var q string
			switch rand.IntN(10) {
			case 0:
				q = fmt.Sprintf("DELETE FROM t_%s WHERE k = %s", tk.charset, k)
			case 1:
				next++
				q = fmt.Sprintf("INSERT IGNORE INTO t_%s VALUES (%s, %d)", tk.charset, quoteSQL(textKey(tk.prefixes, next)), n)
			default:
				q = fmt.Sprintf("UPDATE t_%s SET seq = %d WHERE k = %s", tk.charset, n, k)
			}
			if _, err := w.Execute(q); err != nil {
				t.Errorf("%s: %v", q, err)
				return
			}
		}
	}()
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	began := time.Now()
	itest.WaitOrDump(t, p, 120*time.Second, "the snapshot to finish", func() bool {
		st, ok := itest.ReadSnapshotState(ckpt)
		return ok && len(st.Tables) == 0 && time.Since(began) > 2*time.Second
	})
	stop.Store(true)
	wg.Wait()
	// A last write, to know every earlier one is streamed (a plain table:
	// this wait must not depend on the decoding under test); the stop
	// then flushes them.
	e.Exec("INSERT INTO marker VALUES (1)")
	itest.WaitOrDump(t, p, 60*time.Second, "the marker row", func() bool { return itest.TopicEnd(e.Prefix+"."+e.DB+".marker") >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	t.Logf("%d writes during the snapshot", seq.Load())

	for _, tk := range textKeyTables {
		table := "t_" + tk.charset
		want := map[string]float64{}
		r := e.Exec("SELECT CONVERT(k USING utf8mb4), seq FROM " + table)
		for i := range r.Values {
			k, _ := r.GetString(i, 0)
			s, _ := r.GetInt(i, 1)
			want[strings.Clone(k)] = float64(s)
		}
		type step struct {
			op  string
			seq float64
		}
		hist := map[string][]step{}
		for _, m := range itest.ReadTopic(t, e.Prefix+"."+e.DB+"."+table) {
			pl := m.Payload()
			op, _ := pl["op"].(string)
			row, _ := pl["after"].(map[string]any)
			if op == "d" {
				row, _ = pl["before"].(map[string]any)
			}
			k, _ := m.Key["payload"].(map[string]any)["k"].(string)
			if row["k"] != k {
				t.Errorf("%s: key %q, row %v", table, k, row)
			}
			s, _ := row["seq"].(float64)
			hist[k] = append(hist[k], step{op, s})
		}
		bad := 0
		for k, h := range hist {
			reads, last := 0, -1.0
			for _, s := range h {
				if s.op == "r" {
					reads++
				}
				if s.seq < last && bad < 10 {
					t.Errorf("%s %q: seq went back: %v", table, k, h)
					bad++
				}
				last = max(last, s.seq)
			}
			if reads > 1 && bad < 10 {
				t.Errorf("%s %q: read %d times: %v", table, k, reads, h)
				bad++
			}
			end := h[len(h)-1]
			w, exists := want[k]
			if exists && (end.op == "d" || end.seq != w) || !exists && end.op != "d" {
				if bad < 10 {
					t.Errorf("%s %q: last message %v, the table has %v (exists %v)", table, k, end, w, exists)
				}
				bad++
			}
		}
		for k := range want {
			if hist[k] == nil {
				t.Errorf("%s %q: in the table, never published", table, k)
			}
		}
	}
}

// textKey is the i-th key of a text-keyed table.
func textKey(prefixes []string, i int) string {
	return fmt.Sprintf("%s-%04d", prefixes[i%len(prefixes)], i)
}
