package scenario_test

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/integration/procstat"
)

// TestSnapshotKeylessTableStreams, on every source: a table without a
// primary key, 120 MB of 1 KB rows, is backfilled through the pipeline's
// bounded buffers rather than read into memory whole (a 20 M-row keyless
// table used to get the task OOM-killed, again at every restart). Every
// row is published, and the process's peak resident memory (VmHWM, read
// just before it is stopped) stays far below the table's size.
func TestSnapshotKeylessTableStreams(t *testing.T) {
	const (
		rows = 120_000
		// maxPeakMB: streamed, a few chunks and the pipeline's in-flight
		// bytes are held (peak about 95 MiB measured, for 200,000 rows
		// too); read whole, the table was (264 MiB measured here, 412 MiB
		// for 200,000 rows).
		maxPeakMB = 150
	)
	itest.ForEachBackend(t, "keyless", func(t *testing.T, b itest.Backend) {
		var stmts []string
		switch b.Kind() {
		case "postgres":
			stmts = []string{`CREATE TABLE logs (n bigint NOT NULL, msg text NOT NULL)`,
				// A listed keyless table needs a replica identity (docs/postgresql.md).
				`ALTER TABLE logs REPLICA IDENTITY FULL`,
				fmt.Sprintf(`INSERT INTO logs SELECT g, repeat(md5(g::text), 32) FROM generate_series(1, %d) g`, rows)}
		default:
			stmts = []string{`CREATE TABLE logs (n BIGINT NOT NULL, msg VARCHAR(1100) NOT NULL) ENGINE=InnoDB`,
				fmt.Sprintf(`INSERT INTO logs SELECT seq, REPEAT(MD5(seq), 32) FROM seq_1_to_%d`, rows)}
		}
		began := time.Now()
		peak := backfillPeakMB(t, b, "logs", stmts)
		backfilled := time.Now()
		seen := make([]bool, rows+1)
		missing := rows
		itest.EachRawRecordWithin(t, b.Topic("logs"), 120*time.Second, nil, func(r *kgo.Record) {
			if n := readRowN(t, r); n >= 1 && n <= rows && !seen[n] {
				seen[n] = true
				missing--
			}
		})
		if missing > 0 {
			t.Errorf("%d of %d rows of the keyless table were not published", missing, rows)
		}
		if peak > maxPeakMB {
			t.Errorf("peak resident memory %.0f MiB backfilling a %d-row keyless table (about %d MB), want at most %d MiB: the table is not streamed",
				peak, rows, rows/1000, maxPeakMB)
		}
		t.Logf("peak resident memory %.0f MiB; load and backfill %s, check %s", peak,
			backfilled.Sub(began).Round(time.Millisecond), time.Since(backfilled).Round(time.Millisecond))
	})
}

// TestSnapshotKeylessTableRestarts, on every source: a process killed in
// the middle of a keyless table's backfill leaves a position without a key
// to read on after; the next one reads the table again from its first row
// (docs/snapshots.md), so every row is published by the second process,
// none skipped.
func TestSnapshotKeylessTableRestarts(t *testing.T) {
	const rows = 100_000
	itest.ForEachBackend(t, "keylessre", func(t *testing.T, b itest.Backend) {
		var stmts []string
		switch b.Kind() {
		case "postgres":
			stmts = []string{`CREATE TABLE logs (n bigint NOT NULL, msg text NOT NULL)`,
				// A listed keyless table needs a replica identity (docs/postgresql.md).
				`ALTER TABLE logs REPLICA IDENTITY FULL`,
				fmt.Sprintf(`INSERT INTO logs SELECT g, md5(g::text) FROM generate_series(1, %d) g`, rows)}
		default:
			stmts = []string{`CREATE TABLE logs (n BIGINT NOT NULL, msg VARCHAR(40) NOT NULL) ENGINE=InnoDB`,
				fmt.Sprintf(`INSERT INTO logs SELECT seq, MD5(seq) FROM seq_1_to_%d`, rows)}
		}
		for _, s := range stmts {
			if err := b.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		e := b.Env()
		cfg := b.Config([]string{"logs"}, "")
		small := []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=200"} // 100-row chunks: the kill lands inside the table
		topic := b.Topic("logs")
		first := e.StartWith(small, "run", "--config", cfg)
		if n := first.KillAtTopicEnd(t, 60*time.Second, topic, 1000, nil); n >= rows {
			t.Fatalf("the first process published %d rows before the kill: the backfill was not interrupted", n)
		}
		second := e.StartWith(small, "run", "--config", cfg)
		e.WaitBackfilled(t, second, 120*time.Second, "the backfill after the restart")
		if code := second.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, second.Out)
		}
		byProducer := map[int64]map[int]bool{}
		itest.EachRawRecordWithin(t, topic, 60*time.Second, nil, func(r *kgo.Record) {
			if byProducer[r.ProducerID] == nil {
				byProducer[r.ProducerID] = map[int]bool{}
			}
			byProducer[r.ProducerID][readRowN(t, r)] = true
		})
		full := 0
		counts := map[int64]int{}
		for id, seen := range byProducer {
			counts[id] = len(seen)
			if len(seen) == rows {
				full++
			}
		}
		if len(byProducer) != 2 || full != 1 {
			t.Errorf("distinct rows published per process %v: want the restarted one to publish all %d", counts, rows)
		}
		t.Logf("distinct rows published per process: %v", counts)
	})
}

// readRowN is after.n of r, an r row of the keyless test table. Only op
// and after.n are read, by their place in the value (the encoder writes
// fields in Debezium's order): decoding every value whole took most of
// the test's time.
func readRowN(t *testing.T, r *kgo.Record) int {
	t.Helper()
	after, op := []byte(`"after":{"n":`), []byte(`"op":"r"`)
	i := bytes.Index(r.Value, after)
	if i < 0 || !bytes.Contains(r.Value[i:], op) {
		t.Fatalf("record %d/%d is not an r row with after.n: %.300s", r.Partition, r.Offset, r.Value)
	}
	digits := r.Value[i+len(after):]
	n, err := strconv.Atoi(string(digits[:max(0, bytes.IndexByte(digits, ','))]))
	if err != nil {
		t.Fatalf("record %d/%d: after.n: %v", r.Partition, r.Offset, err)
	}
	return n
}

// backfillPeakMB creates and fills table with stmts, backfills it with a
// pipeline of its own (b's config, the table alone), stops the pipeline
// once the checkpoint says the backfill is done, and returns the peak
// resident memory (VmHWM) it reached.
func backfillPeakMB(t *testing.T, b itest.Backend, table string, stmts []string) float64 {
	t.Helper()
	for _, s := range stmts {
		if err := b.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	e := b.Env()
	p := e.Start("run", "--config", b.Config([]string{table}, ""))
	e.WaitBackfilled(t, p, 180*time.Second, "the backfill of "+table)
	peak, err := procstat.PeakRSSMB(p.Cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	return peak
}
