package postgres

import (
	"context"
	"testing"
)

// What the listing says of each table, and of each partition that would
// stop the application's writes or the capture's deletes, looking up
// partitions by OID: nested partitions, leaves whose replica identity is
// NOTHING, none, an index lacking the root's key, FULL, a detached
// partition (a table of its own again), and namesakes in other schemas.
func TestListTablesPartitionsAndIdentities(t *testing.T) {
	conn, _ := testDB(t, "")
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `
CREATE SCHEMA s1; CREATE SCHEMA "Odd Name";
CREATE TABLE s1.root (id int, at int, sub int, PRIMARY KEY (id, at, sub)) PARTITION BY RANGE (at);
CREATE TABLE s1.mid PARTITION OF s1.root FOR VALUES FROM (0) TO (100) PARTITION BY LIST (sub);
CREATE TABLE s1.leaf_ok PARTITION OF s1.mid FOR VALUES IN (1);
CREATE TABLE s1.leaf_nothing PARTITION OF s1.mid FOR VALUES IN (2);
ALTER TABLE s1.leaf_nothing REPLICA IDENTITY NOTHING;
CREATE TABLE s1.leaf_full PARTITION OF s1.root FOR VALUES FROM (100) TO (200);
ALTER TABLE s1.leaf_full REPLICA IDENTITY FULL;
CREATE TABLE s1.leaf_idx PARTITION OF s1.root FOR VALUES FROM (200) TO (300);
CREATE UNIQUE INDEX leaf_idx_u ON s1.leaf_idx (id, at);
ALTER TABLE s1.leaf_idx ALTER COLUMN id SET NOT NULL;
ALTER TABLE s1.leaf_idx REPLICA IDENTITY USING INDEX leaf_idx_u;
CREATE TABLE s1.gone PARTITION OF s1.root FOR VALUES FROM (300) TO (400);
ALTER TABLE s1.root DETACH PARTITION s1.gone;
ALTER TABLE s1.gone REPLICA IDENTITY NOTHING;
CREATE TABLE "Odd Name"."Root" (id int PRIMARY KEY) PARTITION BY HASH (id);
CREATE TABLE "Odd Name"."P0" PARTITION OF "Odd Name"."Root" FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE "Odd Name"."P1" PARTITION OF "Odd Name"."Root" FOR VALUES WITH (MODULUS 2, REMAINDER 1);
ALTER TABLE "Odd Name"."P1" REPLICA IDENTITY NOTHING;
CREATE TABLE public.root (id int PRIMARY KEY);
`); err != nil {
		t.Fatal(err)
	}
	rels, _, err := listTables(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rels {
		got[r.fullName()] = r.noIdentity
	}
	want := map[string]string{
		"Odd Name.Root": "Odd Name.P1 (REPLICA IDENTITY NOTHING)",
		"public.root":   "",
		"s1.root": "s1.leaf_idx (a partition whose replica identity lacks key columns of s1.root, so its deletes could not be keyed; ALTER TABLE s1.leaf_idx REPLICA IDENTITY DEFAULT fixes it), " +
			"s1.leaf_nothing (REPLICA IDENTITY NOTHING)",
		// Detached, it is a table of its own.
		"s1.gone": "s1.gone (REPLICA IDENTITY NOTHING)",
	}
	if len(got) != len(want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: noIdentity %q (listed: %v), want %q", name, g, ok, w)
		}
	}
}
