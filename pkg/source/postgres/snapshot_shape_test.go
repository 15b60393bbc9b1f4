package postgres

import (
	"context"
	"strings"
	"testing"
)

// TestSnapshotChunkAfterAlter: the stream learns a table's shape from
// Relation messages, which PostgreSQL sends only with a change to the
// table. A snapshot chunk read after an ALTER TABLE that nobody has
// written since must read the table as it is: before, the chunk query
// named the dropped column and the pipeline failed ("column ... does not
// exist"), found by the 60-minute soak.
func TestSnapshotChunkAfterAlter(t *testing.T) {
	conn, url := testDB(t, "")
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`CREATE TABLE t (k int PRIMARY KEY, gone text, v int, w int)`)
	exec(`INSERT INTO t SELECT g, 'x', g, g FROM generate_series(1, 5) g`)

	sess := snapshotSession(t, conn, url)

	exec(`ALTER TABLE t DROP COLUMN gone`)
	exec(`ALTER TABLE t ALTER COLUMN w TYPE text USING 'w' || w`)
	exec(`ALTER TABLE t ADD COLUMN added int NOT NULL DEFAULT 7`)
	for round := 1; round <= 2; round++ { // the second read reuses the shape learnt
		rows, err := sess.ReadChunk(ctx, "public.t", nil, nil, 100)
		if err != nil {
			t.Fatalf("round %d: chunk after ALTER TABLE: %v", round, err)
		}
		if len(rows) != 5 {
			t.Fatalf("round %d: %d rows, want 5", round, len(rows))
		}
		ev := rows[2].Event
		var names []string
		for _, c := range ev.Table.Columns {
			names = append(names, c.Name)
		}
		if got := strings.Join(names, ","); got != "k,v,w,added" {
			t.Fatalf("round %d: columns %s, want k,v,w,added (the table as it is now)", round, got)
		}
		if w := ev.After[2]; w.String() != `"w3"` {
			t.Errorf("round %d: w = %v, want the text 'w3' of the retyped column", round, w)
		}
		if a := ev.After[3]; a.String() != "7" {
			t.Errorf("round %d: added = %v, want 7", round, a)
		}
	}
}
