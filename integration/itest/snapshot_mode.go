package itest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// ModeDB is what the snapshot_mode tests need of a source: one table t
// (id INT PRIMARY KEY, v INT) in a database of the test's own, on PostgreSQL or
// MariaDB.
type ModeDB struct {
	E     *Env
	Exec  func(sql string)
	Topic string                     // the topic of table t
	Cfg   func(source string) string // a pipeline config with these source lines
	// Lose makes the checkpoint's position unreadable: the slot dropped,
	// the binlog files purged.
	Lose func(t *testing.T)
}

func PGModeDB(t *testing.T, label string) ModeDB {
	e := NewEnv(t, label)
	return ModeDB{E: e, Exec: func(sql string) { e.Exec(sql) }, Topic: e.Prefix + ".public.t",
		Cfg: func(source string) string { return e.WritePipeline(PipelineConfig{Source: source}) },
		Lose: func(t *testing.T) {
			slot := "tributary_" + e.Name
			// Called right after a stop: the stopped task's walsender may
			// hold the slot a moment longer ("replication slot … is active
			// for PID …", as TestResnapshotRequired met in CI).
			WaitFor(t, 30*time.Second, "the slot released by the stopped task", func() bool {
				return e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND active`, slot) == 0
			})
			e.Exec(`SELECT pg_drop_replication_slot($1)`, slot)
		}}
}

// Insert commits rows ids from..to into t, in one statement.
func (d ModeDB) Insert(from, to int) {
	var vals []string
	for i := from; i <= to; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	d.Exec("INSERT INTO t (id) VALUES " + strings.Join(vals, ","))
}

// Ops lists t's topic as "<op><id>", sorted (the topic may have several
// partitions: its order across keys is not the order of publishing).
func (d ModeDB) Ops(t *testing.T) []string {
	t.Helper()
	var out []string
	d.Each(t, func(op string, _ Message) { out = append(out, op) })
	sort.Strings(out)
	return out
}

// Each calls fn with every message of t's topic and its "<op><id>".
func (d ModeDB) Each(t *testing.T, fn func(op string, m Message)) {
	t.Helper()
	if TopicEnd(d.Topic) == 0 {
		return
	}
	for _, m := range ReadTopic(t, d.Topic) {
		pl := m.Payload()
		row, _ := pl["after"].(map[string]any)
		if row == nil {
			row, _ = pl["before"].(map[string]any)
		}
		fn(fmt.Sprintf("%v%v", pl["op"], row["id"]), m)
	}
}

// AwaitStarted waits until p saved its first checkpoint: the position its
// stream starts from, saved before any row is published.
func (d ModeDB) AwaitStarted(t *testing.T, p *Proc) {
	t.Helper()
	path := filepath.Join(d.E.Dir, "checkpoints", d.E.Name+".checkpoint.json")
	p.WaitFor(t, 60*time.Second, "the first checkpoint", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// Count returns how many of ops are in want.
func Count(ops []string, want func(string) bool) int {
	n := 0
	for _, o := range ops {
		if want(o) {
			n++
		}
	}
	return n
}

func RowsRead(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("r%d", i))
	}
	sort.Strings(out)
	return out
}
