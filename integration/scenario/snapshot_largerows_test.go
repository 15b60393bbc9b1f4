package scenario_test

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestSnapshotLargeRowsBounded, on every source: a table of 16 rows of
// one byte and then 200 rows of 896 KB (about 180 MB) is backfilled in
// chunks bounded by bytes, not only by rows. A chunk was up to 2,500 rows,
// so the whole table was held in memory (a 1.3 GB table of such rows
// peaked at 1.4 GB: a Fargate task killed at every restart); the tiny rows
// first make the engine size the next chunk for tiny rows, which the
// sources stop at snapshot.ChunkBytes. Every row is published, and the
// process's peak resident memory stays far below the table's size.
func TestSnapshotLargeRowsBounded(t *testing.T) {
	const (
		tiny = 16  // the first chunk's rows: 1 byte each
		rows = 200 // then 896 KB each
		// maxPeakMB: byte-bounded chunks peak at about 100 MiB (98 MB
		// measured for 400 such rows); whole, the table was held (427 MB
		// for 400 rows).
		maxPeakMB = 160
	)
	itest.ForEachBackend(t, "bigrows", func(t *testing.T, b itest.Backend) {
		var stmts []string
		switch b.Kind() {
		case "postgres":
			stmts = []string{`CREATE TABLE big (id int PRIMARY KEY, body text NOT NULL)`,
				// Stored out of line uncompressed: the rows stay 896 KB.
				`ALTER TABLE big ALTER body SET STORAGE EXTERNAL`,
				fmt.Sprintf(`INSERT INTO big SELECT g, 'x' FROM generate_series(1, %d) g`, tiny),
				fmt.Sprintf(`INSERT INTO big SELECT g, repeat(md5(g::text), 28000) FROM generate_series(%d, %d) g`, tiny+1, tiny+rows)}
		default:
			stmts = []string{`CREATE TABLE big (id INT PRIMARY KEY, body MEDIUMTEXT NOT NULL) ENGINE=InnoDB`,
				fmt.Sprintf(`INSERT INTO big SELECT seq, 'x' FROM seq_1_to_%d`, tiny),
				fmt.Sprintf(`INSERT INTO big SELECT seq, REPEAT(MD5(seq), 28000) FROM seq_%d_to_%d`, tiny+1, tiny+rows)}
		}
		peak := backfillPeakMB(t, b, "big", stmts)
		seen := map[int]bool{}
		itest.EachRawRecordWithin(t, b.Topic("big"), 120*time.Second, nil, func(r *kgo.Record) {
			id, size := bigRow(t, r)
			if id > tiny && size < 896_000 {
				t.Errorf("row %d published with a body of %d bytes, want 896,000", id, size)
			}
			seen[id] = true
		})
		if len(seen) != tiny+rows {
			t.Errorf("%d of %d rows were published", len(seen), tiny+rows)
		}
		if peak > maxPeakMB {
			t.Errorf("peak resident memory %.0f MiB backfilling %d rows of 896 KB (about %d MB), want at most %d MiB: chunks are not bounded by bytes",
				peak, rows, rows*896/1000, maxPeakMB)
		}
		t.Logf("peak resident memory %.0f MiB for a table of about %d MB", peak, rows*896/1000)
	})
}

// bigRow is the key's id of a row of the large-rows table and the length
// of its record's value, read by place, not by decoding 900 KB of JSON.
func bigRow(t *testing.T, r *kgo.Record) (id, size int) {
	t.Helper()
	at := []byte(`"payload":{"id":`)
	i := bytes.Index(r.Key, at)
	if i < 0 {
		t.Fatalf("record %d/%d: no payload id in key %.200s", r.Partition, r.Offset, r.Key)
	}
	digits := r.Key[i+len(at):]
	id, err := strconv.Atoi(string(digits[:max(0, bytes.IndexByte(digits, '}'))]))
	if err != nil {
		t.Fatalf("record %d/%d: key id: %v", r.Partition, r.Offset, err)
	}
	return id, len(r.Value)
}
