package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// goneColumns describes a dropped table from its Relation message: the
// key from the replica identity flags, types by OID (a user type still in
// the catalog keeps what it says); a column whose type is gone too is an
// error naming it, unless source.include_unknown_types is set.
func TestGoneColumns(t *testing.T) {
	conn, _ := testDB(t, "")
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CREATE TYPE mood AS ENUM ('sad', 'ok')`); err != nil {
		t.Fatal(err)
	}
	var mood uint32
	if err := conn.QueryRow(ctx, `SELECT 'mood'::regtype::oid`).Scan(&mood); err != nil {
		t.Fatal(err)
	}
	s := &Source{conn: conn, opts: source.Options{Config: config.Source{}}}
	m := &pglogrepl.RelationMessage{Namespace: "public", RelationName: "t", Columns: []*pglogrepl.RelationMessageColumn{
		{Flags: 1, Name: "id", DataType: oidInt8, TypeModifier: -1},
		{Name: "price", DataType: oidNumeric, TypeModifier: (10<<16 | 2) + 4},
		{Name: "m", DataType: mood, TypeModifier: -1},
	}}
	cols, key, err := s.goneColumns(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	r := &relation{schema: "public", name: "t", columns: cols, key: key}
	tbl := r.table("db", nil, nil)
	if len(tbl.Key) != 1 || tbl.Key[0] != 0 || tbl.Columns[0].Optional || !tbl.Columns[1].Optional {
		t.Errorf("key %v, optional %v %v; want key id, required, price optional", tbl.Key, tbl.Columns[0].Optional, tbl.Columns[1].Optional)
	}
	if c := tbl.Columns[1].Type; c.Kind != change.KindDecimal || c.Precision != 10 || c.Scale != 2 {
		t.Errorf("price: %+v, want decimal(10,2)", c)
	}
	if c := tbl.Columns[2].Type; c.Kind != change.KindEnum || c.Values != "sad,ok" {
		t.Errorf("m: %+v, want the enum with its labels", c)
	}

	m.Columns[2].DataType = 4_000_000_000 // a type dropped with the table
	s.typeNames = map[uint32]string{4_000_000_000: "mood2"}
	if _, _, err := s.goneColumns(ctx, m); err == nil || !strings.Contains(err.Error(), "column m") || !strings.Contains(err.Error(), "include_unknown_types") {
		t.Errorf("dropped type: err %v, want one naming column m and source.include_unknown_types", err)
	}
	s.opts.Config.IncludeUnknownTypes = true
	if cols, _, err := s.goneColumns(ctx, m); err != nil || cols[2].changeType().Kind != change.KindUnknown {
		t.Errorf("dropped type with include_unknown_types: err %v", err)
	}
}
