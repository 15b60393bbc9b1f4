package postgres

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// queryCounter counts the queries a connection sends.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A schema of thousands of tables starts in a few queries, not two per
// table: the start of a pipeline capturing 10,000 tables spent tens of
// seconds in round trips describing them one by one.
func TestSelectedTablesDescribesInFewQueries(t *testing.T) {
	conn, url := testDB(t, "")
	ctx := context.Background()
	const n = 600
	if _, err := conn.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP
  EXECUTE format('CREATE TABLE t%%s (id bigint PRIMARY KEY, v int NOT NULL DEFAULT 7, note text)', i);
END LOOP; END $$`, n)); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	counter := &queryCounter{}
	cfg.Tracer = counter
	counted, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close(ctx)
	rels, _, err := selectedTables(ctx, counted, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != n {
		t.Fatalf("%d tables selected, want %d", len(rels), n)
	}
	if q := counter.n.Load(); q > 5 {
		t.Errorf("describing %d tables took %d queries, want a few whatever the number of tables", n, q)
	}
	for _, r := range rels {
		if len(r.columns) != 3 || !reflect.DeepEqual(r.key, []string{"id"}) || r.columns[1].defaultExpr != "7" {
			t.Fatalf("%s: columns %+v, key %v", r.fullName(), r.columns, r.key)
		}
	}
}

// fullKeyChanged, after one table's Relation message, leaves the
// positions' full keys as fullKeysChanged over every table would.
func TestFullKeyChangedMatchesFullKeysChanged(t *testing.T) {
	s := &Source{captured: map[uint32]string{}, rels: map[uint32]*relation{}}
	for oid := uint32(1); oid <= 6; oid++ {
		s.rels[oid] = &relation{oid: oid, replident: "d", key: []string{"id"}}
		if oid != 6 {
			s.captured[oid] = fmt.Sprint("public.t", oid)
		}
	}
	s.fullKeysChanged()
	for _, step := range []struct {
		oid       uint32
		replident string
	}{{2, "f"}, {3, "f"}, {6, "f"}, {2, "d"}, {3, "n"}, {4, "f"}} {
		s.rels[step.oid] = &relation{oid: step.oid, replident: step.replident, key: []string{"id", fmt.Sprint("k", step.oid)}}
		s.fullKeyChanged(step.oid)
		got := s.fullKeys
		s.fullKeysChanged()
		if !reflect.DeepEqual(got, s.fullKeys) {
			t.Fatalf("after table %d became %s: %v, want %v", step.oid, step.replident, got, s.fullKeys)
		}
	}
}

// Listing the tables of a large schema reads the catalog in proportion to
// the tables: each table's partition check scanned every row of pg_class,
// and 10,000 tables took most of a minute to list at every start. What it
// reads is counted, not timed: the transaction's own statistics of
// pg_class (pg_stat_xact_sys_tables) say how many rows its scans returned.
func TestListTablesLinearInTables(t *testing.T) {
	conn, _ := testDB(t, "")
	ctx := context.Background()
	const n = 2000
	if _, err := conn.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP
  EXECUTE format('CREATE TABLE t%%s (id bigint PRIMARY KEY)', i);
  IF i %% 500 = 0 THEN COMMIT; END IF;
END LOOP; END $$`, n)); err != nil {
		t.Fatal(err)
	}
	var classRows int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_class`).Scan(&classRows); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `ROLLBACK`)
	rels, _, err := listTables(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != n {
		t.Fatalf("%d tables listed, want %d", len(rels), n)
	}
	var read int64
	if err := conn.QueryRow(ctx, `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
    FROM pg_stat_xact_sys_tables WHERE relid = 'pg_class'::regclass`).Scan(&read); err != nil {
		t.Fatal(err)
	}
	// Linear: a few passes over pg_class; quadratic: one per table.
	t.Logf("listing %d tables read %d rows of pg_class (%d rows)", n, read, classRows)
	if read > 20*classRows {
		t.Errorf("listing %d tables read %d rows of pg_class, %.0f times its %d rows", n, read, float64(read)/float64(classRows), classRows)
	}
}
