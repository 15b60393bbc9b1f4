package mysql_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLCompositeKeyChunks: a table keyed by three columns (text in a
// case-insensitive collation, a signed integer, text), with many rows
// sharing a key prefix, is backfilled in 7-row chunks: every row is
// published exactly once. Each chunk reads after the last key through
// a >= x AND (a > x OR (a = x AND ...)), which MariaDB reads as a range of
// the key, where the row comparison (a, b, c) > (x, y, z) made it scan the
// key from its start for every chunk. The keys are random (seed printed).
func TestMySQLCompositeKeyChunks(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	e := itest.NewMyEnv(t, "mycomp")
	e.Exec("CREATE TABLE ck (a VARCHAR(8) COLLATE utf8mb4_general_ci NOT NULL, b INT NOT NULL, c VARCHAR(8) NOT NULL, v INT, PRIMARY KEY (a, b, c))")
	words := []string{"a", "B", "ab", "Ab ", "é", "z", "zz", "m"}
	want := map[string]bool{}
	var vals []string
	for len(vals) < 2000 {
		a, b, c := words[rng.IntN(len(words))], rng.IntN(7)-3, fmt.Sprint(rng.IntN(50))
		// The collation folds case and trailing spaces: one row per
		// folded prefix and (b, c).
		k := fmt.Sprintf("%s|%d|%s", strings.ToLower(strings.TrimRight(a, " ")), b, c)
		if want[k] {
			continue
		}
		want[k] = true
		vals = append(vals, fmt.Sprintf("(%s, %d, '%s', %d)", quoteSQL(a), b, c, len(vals)))
	}
	e.Exec("INSERT INTO ck VALUES " + strings.Join(vals, ", "))
	backfillOnce(t, e, "ck", want, func(k map[string]any) string {
		return fmt.Sprintf("%s|%v|%s", strings.ToLower(strings.TrimRight(k["a"].(string), " ")), k["b"], k["c"])
	})
}

// TestMySQLEnumKeyChunks: tables keyed by an ENUM and by a SET whose
// members are not declared in text order are backfilled in 7-row chunks,
// every row once. The key orders them by member index and bitmap; a chunk
// reading after the last key compared it as text, which skipped rows.
func TestMySQLEnumKeyChunks(t *testing.T) {
	e := itest.NewMyEnv(t, "myenumk")
	e.Exec("CREATE TABLE ek (e ENUM('z','b','m','a','é') NOT NULL, n INT NOT NULL, PRIMARY KEY (e, n))")
	e.Exec("CREATE TABLE sk (s SET('x','a','m') NOT NULL PRIMARY KEY)")
	want := map[string]bool{}
	var vals []string
	for _, m := range []string{"z", "b", "m", "a", "é"} {
		for n := range 9 {
			want[fmt.Sprintf("%s|%d", m, n)] = true
			vals = append(vals, fmt.Sprintf("(%s, %d)", quoteSQL(m), n))
		}
	}
	e.Exec("INSERT INTO ek VALUES " + strings.Join(vals, ", "))
	sets := map[string]bool{}
	for _, v := range []string{"x", "a", "m", "x,a", "x,m", "a,m", "x,a,m"} {
		sets[v] = true
		e.Exec(fmt.Sprintf("INSERT INTO sk VALUES ('%s')", v))
	}
	backfillOnce(t, e, "ek", want, func(k map[string]any) string { return fmt.Sprintf("%s|%v", k["e"], k["n"]) })
	backfillOnce(t, e.Sub(t, "myenumk2"), "sk", sets, func(k map[string]any) string { return fmt.Sprint(k["s"]) })
}

// TestMySQLFloatKeyChunks: a table keyed by a FLOAT, whose values the
// server writes with 6 digits (1.2345678, 1.2345679 and 1.234569 are all
// 1.23457 in a query's result), is backfilled in 7-row chunks with every
// row once: a chunk that ended at the first read on after 1.23457 and
// lost the others. Rows are told apart by n (their key payloads are the
// 6-digit values, as Debezium's snapshot reads them).
func TestMySQLFloatKeyChunks(t *testing.T) {
	e := itest.NewMyEnv(t, "myfloatk")
	e.Exec("CREATE TABLE fk (k FLOAT NOT NULL PRIMARY KEY, n INT NOT NULL)")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	want := map[string]bool{}
	var vals []string
	for n := range 120 {
		// Runs of floats 1 to 8 ulps apart, printed alike.
		k := float32(rng.IntN(5)) + float32(rng.IntN(1000))/1000 + float32(n%8)*1e-7
		if slices.ContainsFunc(vals, func(v string) bool { return strings.HasPrefix(v, fmt.Sprintf("(%g,", k)) }) {
			continue
		}
		want[fmt.Sprint(n)] = true
		vals = append(vals, fmt.Sprintf("(%g, %d)", k, n))
	}
	e.Exec("INSERT IGNORE INTO fk VALUES " + strings.Join(vals, ", "))
	if stored, _ := e.Exec("SELECT COUNT(*) FROM fk").GetInt(0, 0); int(stored) != len(want) {
		t.Fatalf("%d rows stored, want %d", stored, len(want))
	}
	backfillOnce(t, e, "fk", want, nil)
}

// backfillOnce backfills table alone in 7-row chunks and fails unless
// each of want's keys (keyOf of a message's key payload; nil: the value's
// n) was published once.
func backfillOnce(t *testing.T, e *itest.MyEnv, table string, want map[string]bool, keyOf func(map[string]any) string) {
	t.Helper()
	p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=14"}, "run", "--config", e.WriteConfig("  tables: ["+e.DB+"."+table+"]\n"))
	e.WaitBackfilled(t, p, 120*time.Second, "the backfill of "+table)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	seen := map[string]int{}
	for _, m := range itest.ReadTopic(t, e.Prefix+"."+e.DB+"."+table) {
		if keyOf == nil {
			seen[fmt.Sprint(m.Payload()["after"].(map[string]any)["n"])]++
			continue
		}
		seen[keyOf(m.Key["payload"].(map[string]any))]++
	}
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("%s: row %q published %d times, want once", table, k, seen[k])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%s: %d distinct keys published, want %d", table, len(seen), len(want))
	}
}
