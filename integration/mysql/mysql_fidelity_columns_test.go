package mysql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestDebeziumFidelityColumnsMariaDB is TestDebeziumFidelityColumns on
// MariaDB, side by side with Debezium's MariaDB connector: an excluded
// column absent, hashed (v1, v2 cut to a VARCHAR's length) and fixed masks
// byte for byte, nulls and a text in another character set included, in
// the snapshot and in the binlog stream.
func TestDebeziumFidelityColumnsMariaDB(t *testing.T) {
	e := itest.NewMyEnv(t, "myfidcol")
	e.Exec(`CREATE TABLE customers (id INT PRIMARY KEY, name TEXT, email VARCHAR(80), code VARCHAR(12) CHARACTER SET latin1,
  ssn TEXT, phone TEXT, note VARCHAR(20) NOT NULL DEFAULT 'none')`)
	topic := e.Prefix + "." + e.DB + ".customers"
	itest.CreateSinglePartitionTopics(t, topic)
	snapshot := []itest.FidelityStep{
		{SQL: `INSERT INTO customers VALUES (1, 'Ann', 'ann@example.com', 'ABCDÉF', '111-22-3333', '555-0101', 'vip')`, Events: 1},
		{SQL: `INSERT INTO customers (id, name) VALUES (2, 'Bob')`, Events: 1},
	}
	stream := []itest.FidelityStep{
		{SQL: `INSERT INTO customers VALUES (3, 'Cy', 'cy@example.com', 'çà', '999-88-7777', '555-0303', 'new')`, Events: 1},
		{SQL: `UPDATE customers SET email = 'ann@example.org', ssn = '000-00-0000' WHERE id = 1`, Events: 1},
		{SQL: `DELETE FROM customers WHERE id = 2`, Events: 2},
	}
	db := strings.ToUpper(e.DB)
	cfg := e.WriteConfigWith(fmt.Sprintf(`  tables: [%s.customers]
  exclude_columns: ['%s\.customers\.(ssn|note)']
  mask_columns:
    - columns: ['%s\.customers\.email']
      hash: SHA-256
      salt: s4lt
    - columns: ['%s\.customers\.code']
      hash: SHA-256
      salt: s4lt
      hash_version: v2
    - columns: ['%s\.customers\.phone']
      chars: 5
`, e.DB, db, db, db, db), "  delete_mode: record_and_tombstone\n")
	itest.SideBySide{
		E: e.Env, Exec: func(sql string) { e.Exec(sql) }, Snapshot: snapshot, Stream: stream, Topics: []string{topic},
		Debezium: func(out string, want int) *itest.DebeziumProc {
			return itest.StartMariaDBDebezium(t, e, out, want,
				fmt.Sprintf("column.exclude.list=%s.customers.ssn,%s.customers.note\n", e.DB, e.DB),
				fmt.Sprintf("column.mask.hash.SHA-256.with.salt.s4lt=%s.customers.email\n", e.DB),
				fmt.Sprintf("column.mask.hash.v2.SHA-256.with.salt.s4lt=%s.customers.code\n", e.DB),
				fmt.Sprintf("column.mask.with.5.chars=%s.customers.phone\n", e.DB))
		},
		Config: cfg, SnapshotWait: 60 * time.Second, StreamWait: 40 * time.Second, Mariadb: true,
	}.Run(t)

	msgs := itest.ReadTopic(t, topic)
	if len(msgs) == 0 {
		t.Fatal("no messages")
	}
	after := msgs[0].Payload()["after"].(map[string]any)
	if email, _ := after["email"].(string); len(email) != 64 || after["phone"] != "*****" || after["ssn"] != nil ||
		strings.Contains(fmt.Sprint(msgs[0].Value), "111-22-3333") {
		t.Errorf("first row not masked as configured: %v", after)
	}
}
