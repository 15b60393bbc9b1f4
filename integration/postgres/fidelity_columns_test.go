package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelityColumns: source.exclude_columns and
// source.mask_columns produce what Debezium's column.exclude.list,
// column.mask.hash.SHA-256.with.salt.<salt> (v1 and v2) and
// column.mask.with.5.chars produce on the same rows, byte for byte: an
// excluded column is absent from the schema and the value, a masked one
// keeps its string type with the parameter masked=true, the hash is cut
// to a varchar's length, and a fixed mask replaces nulls too. Snapshot
// and stream, a key-only delete included, and masked values an update
// left TOASTed: Debezium masks its placeholder (the hash of
// __debezium_unavailable_value), in the update and in the create of a key
// change.
func TestDebeziumFidelityColumns(t *testing.T) {
	e := itest.NewEnv(t, "fidcol")
	e.Exec(`CREATE TABLE customers (id int PRIMARY KEY, name text, email text, code varchar(12), ssn text, phone text, note text NOT NULL DEFAULT 'none')`)
	e.Exec(`ALTER TABLE customers ALTER COLUMN email SET STORAGE EXTERNAL, ALTER COLUMN phone SET STORAGE EXTERNAL`)
	topic := e.Prefix + ".public.customers"
	itest.CreateSinglePartitionTopics(t, topic)
	snapshot := []itest.FidelityStep{
		{SQL: `INSERT INTO customers VALUES (1, 'Ann', 'ann@example.com', 'ABCDEF', '111-22-3333', '555-0101', 'vip')`, Events: 1},
		{SQL: `INSERT INTO customers (id, name) VALUES (2, 'Bob')`, Events: 1}, // nulls in every masked column
	}
	stream := []itest.FidelityStep{
		{SQL: `INSERT INTO customers VALUES (3, 'Cy', 'cy@example.com', 'ünïcødé😀', '999-88-7777', '555-0303', 'new')`, Events: 1},
		{SQL: `UPDATE customers SET email = 'ann@example.org', ssn = '000-00-0000' WHERE id = 1`, Events: 1},
		{SQL: `DELETE FROM customers WHERE id = 2`, Events: 2}, // key-only before image
		{SQL: `INSERT INTO customers VALUES (4, 'Di', ` + itest.ToastText + `, 'C4', 'x', ` + itest.ToastText + `, 'n')`, Events: 1},
		{SQL: `UPDATE customers SET name = 'Di2' WHERE id = 4`, Events: 1}, // email and phone unchanged, TOASTed
		{SQL: `UPDATE customers SET id = 5 WHERE id = 4`, Events: 3},       // delete, tombstone, create
	}
	cfg := e.WriteSourceConfig(`  tables: [public.customers]
  exclude_columns: ['public\.customers\.(ssn|note)']
  mask_columns:
    - columns: ['public\.customers\.email']
      hash: SHA-256
      salt: s4lt
    - columns: ['public\.customers\.code']
      hash: SHA-256
      salt: s4lt
      hash_version: v2
    - columns: ['PUBLIC\.CUSTOMERS\.phone']
      chars: 5
`, "  delete_mode: record_and_tombstone\n")
	itest.SideBySide{
		E: e, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: []string{topic},
		Debezium: func(out string, want int) *itest.DebeziumProc {
			return itest.StartDebezium(t, e, out, want,
				"table.include.list=public.customers\n",
				"column.exclude.list=public.customers.ssn,public.customers.note\n",
				"column.mask.hash.SHA-256.with.salt.s4lt=public.customers.email\n",
				"column.mask.hash.v2.SHA-256.with.salt.s4lt=public.customers.code\n",
				"column.mask.with.5.chars=public.customers.phone\n")
		},
		Config: cfg, SnapshotWait: 90 * time.Second, StreamWait: 90 * time.Second,
	}.Run(t)

	// What both sides agreed on is masked: Tributary's first message.
	msgs := itest.ReadTopic(t, topic)
	if len(msgs) == 0 {
		t.Fatal("no messages")
	}
	after := msgs[0].Payload()["after"].(map[string]any)
	email, _ := after["email"].(string)
	code, _ := after["code"].(string)
	switch {
	case after["name"] != "Ann" || len(email) != 64 || email == "ann@example.com" || len(code) != 12 || after["phone"] != "*****":
		t.Errorf("first row not masked as configured: %v", after)
	case after["ssn"] != nil || after["note"] != nil || strings.Contains(fmt.Sprint(msgs[0].Value), "111-22-3333"):
		t.Errorf("an excluded column reached the message: %v", msgs[0].Value)
	}
}
