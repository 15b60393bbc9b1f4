package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// listTables names each table on which PostgreSQL would refuse UPDATE and
// DELETE once it is published, and why; for a partitioned table, the
// partition at fault (writes go to partitions). A replica identity index
// makes the key the index's columns.
func TestListTablesReplicaIdentity(t *testing.T) {
	conn, _ := testDB(t, "")
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE keyed (id int PRIMARY KEY)`,
		`CREATE TABLE keyless (v text)`,
		`CREATE TABLE full_row (v text)`, `ALTER TABLE full_row REPLICA IDENTITY FULL`,
		`CREATE TABLE nothing (id int PRIMARY KEY)`, `ALTER TABLE nothing REPLICA IDENTITY NOTHING`,
		`CREATE TABLE by_index (id int PRIMARY KEY, code text NOT NULL, other int NOT NULL, CONSTRAINT by_index_code UNIQUE (other, code))`,
		`ALTER TABLE by_index REPLICA IDENTITY USING INDEX by_index_code`,
		`CREATE TABLE parts (id int PRIMARY KEY) PARTITION BY RANGE (id)`,
		`CREATE TABLE parts_1 PARTITION OF parts FOR VALUES FROM (0) TO (10)`,
		`CREATE TABLE parts_2 PARTITION OF parts FOR VALUES FROM (10) TO (20)`,
		`ALTER TABLE parts_2 REPLICA IDENTITY NOTHING`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rels, _, err := listTables(ctx, conn, selection(t, config.Source{Tables: []string{"public.keyed", "public.keyless", "public.full_row", "public.nothing", "public.by_index", "public.parts"}}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rels {
		got[r.fullName()] = r.noIdentity
	}
	want := map[string]string{
		"public.keyed": "", "public.full_row": "", "public.by_index": "",
		"public.keyless": "public.keyless (no primary key, REPLICA IDENTITY DEFAULT)",
		"public.nothing": "public.nothing (REPLICA IDENTITY NOTHING)",
		"public.parts":   "public.parts_2 (REPLICA IDENTITY NOTHING)",
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: noIdentity %q, want %q", name, g, w)
		}
	}
	for _, r := range rels {
		if r.name == "by_index" {
			if err := describe(ctx, conn, r); err != nil || strings.Join(r.key, ",") != "other,code" {
				t.Errorf("by_index key %v (err %v), want the replica identity index's columns other,code", r.key, err)
			}
		}
	}
}
