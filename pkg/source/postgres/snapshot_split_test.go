package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

// TestSplitRangesEven: a table of narrow rows written in key order (a
// serial id: page order is key order), analyzed or never analyzed, and a
// partitioned table (whose parent autovacuum never analyzes) are cut into
// 2 and 4 key ranges of about the same rows, each range read up to its
// last key holding every row once. A sample of too few pages cut such a
// table nowhere, or into very uneven ranges.
func TestSplitRangesEven(t *testing.T) {
	conn, url := testDB(t, "")
	ctx := context.Background()
	const rows = 60000
	for _, sql := range []string{
		`CREATE TABLE plain (id bigint PRIMARY KEY, v int)`,
		fmt.Sprintf(`INSERT INTO plain SELECT g, g FROM generate_series(1, %d) g`, rows),
		`CREATE TABLE fresh (id bigint PRIMARY KEY, v int)`,
		fmt.Sprintf(`INSERT INTO fresh SELECT g, g FROM generate_series(1, %d) g`, rows),
		`CREATE TABLE parted (id bigint PRIMARY KEY, v int) PARTITION BY RANGE (id)`,
		`CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (MINVALUE) TO (30001)`,
		`CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (30001) TO (MAXVALUE)`,
		fmt.Sprintf(`INSERT INTO parted SELECT g, g FROM generate_series(1, %d) g`, rows),
		`ANALYZE plain`, `ANALYZE parted_1`, `ANALYZE parted_2`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	sess := snapshotSession(t, conn, url)
	for _, table := range []string{"public.plain", "public.fresh", "public.parted"} {
		est, err := sess.Estimate(ctx, table)
		if err != nil || est < rows/3 || est > 3*rows {
			t.Errorf("%s: estimate %d, %v: want about %d", table, est, err, rows)
			continue
		}
		for _, parts := range []int{2, 4} {
			keys, err := sess.Split(ctx, table, nil, est, parts)
			if err != nil || len(keys) != parts-1 {
				t.Errorf("%s in %d: split keys %q, %v", table, parts, keys, err)
				continue
			}
			var after snapshot.Key
			total := 0
			for i := range parts {
				var until snapshot.Key
				if i < len(keys) {
					until = keys[i]
				}
				got, err := sess.ReadChunk(ctx, table, after, until, rows)
				if err != nil {
					t.Fatal(err)
				}
				if want := rows / parts; len(got) < want*3/4 || len(got) > want*5/4 {
					t.Errorf("%s in %d: range %d holds %d rows, want %d ± 25 %%", table, parts, i+1, len(got), want)
				}
				total += len(got)
				after = until
			}
			if total != rows {
				t.Errorf("%s in %d: the ranges hold %d rows, want %d", table, parts, total, rows)
			}
		}
	}
}

// TestEstimateSmallTableCounted: a small table never analyzed has the
// rows it holds as its estimate (the backfill's estimated_rows), not the
// planner's guess from its one page (hundreds of rows for three).
func TestEstimateSmallTableCounted(t *testing.T) {
	conn, url := testDB(t, "")
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE tiny (id int PRIMARY KEY, v text)`,
		`INSERT INTO tiny VALUES (1, 'a'), (2, 'b'), (3, 'c')`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	sess := snapshotSession(t, conn, url)
	if est, err := sess.Estimate(ctx, "public.tiny"); err != nil || est != 3 {
		t.Errorf("estimate of a 3-row table never analyzed: %d, %v; want 3", est, err)
	}
}
