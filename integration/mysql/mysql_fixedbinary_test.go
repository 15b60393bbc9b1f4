package mysql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLFixedBinaryTypes: MariaDB's UUID, INET4 and INET6 columns are
// published, key columns included, as the text the server itself prints
// for them (SELECT), in backfilled and streamed rows alike: UUID as a
// string named io.debezium.data.Uuid, INET4 and INET6 as plain strings
// (docs/types.md). The binlog cuts a value's trailing zero bytes and
// MariaDB prints INET6 its own way (a single zero group as "::", an
// IPv4-compatible address in dotted form): the values cover both. Two rows
// that differ only in their UUID key column publish under two keys.
func TestMySQLFixedBinaryTypes(t *testing.T) {
	e := itest.NewMyEnv(t, "myfbt")
	e.Exec(`CREATE TABLE fb (id INT NOT NULL, u UUID NOT NULL, a INET4, b INET6 NOT NULL DEFAULT '::1', PRIMARY KEY (id, u))`)
	topic := e.Prefix + "." + e.DB + ".fb"
	uuids := []string{"00000000-0000-0000-0000-0000000000a1", "00000000-0000-0000-0000-0000000000b2", "123e4567-e89b-12d3-0456-426614174000",
		"00000000-0000-0000-0000-000000000000", "6ccd780c-baba-1026-9564-5b8c656024db", "ffffffff-ffff-ffff-ffff-ffffffffff00", "01890a5d-ac96-774b-bcce-b302099a8000"}
	inet4 := []string{"0.0.0.0", "1.2.3.0", "255.255.255.255", "10.0.0.1", "1.0.0.0"}
	inet6 := []string{"::", "::1", "1::", "::ffff:1.2.3.4", "::1.2.3.4", "1:0:2:3:4:5:6:7", "1:0:0:2:0:0:3:4", "2001:db8::",
		"fe80::1:0:0", "::ffff:0:0", "0:0:0:0:0:1:0:0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::ffff:1:0", "1:2:3:4:5:6:7:0"}
	insert := func(base int) {
		for i := range max(len(uuids), len(inet4), len(inet6)) {
			id := base + i
			if i == 1 {
				id = base // (id, a1) and (id, b2): one id, two keys
			}
			e.Exec(fmt.Sprintf(`INSERT INTO fb VALUES (%d, '%s', '%s', '%s')`, id, uuids[i%len(uuids)], inet4[i%len(inet4)], inet6[i%len(inet6)]))
		}
		e.Exec(fmt.Sprintf(`INSERT INTO fb (id, u) VALUES (%d, '%s')`, base+99, uuids[2]))
	}
	insert(100)
	rows := max(len(uuids), len(inet4), len(inet6)) + 1
	// A table keyed by INET6 alone, and chunks of two rows: the backfill
	// pages through both keys by their values.
	e.Exec(`CREATE TABLE fb6 (k INET6 NOT NULL PRIMARY KEY, n INT)`)
	for i, v := range inet6 {
		e.Exec(fmt.Sprintf(`INSERT INTO fb6 VALUES ('%s', %d)`, v, i))
	}
	topic6 := e.Prefix + "." + e.DB + ".fb6"
	p := e.StartWith([]string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=2"}, "run", "--config", e.WriteConfig(""))
	itest.WaitFor(t, 60*time.Second, "the backfilled rows", func() bool {
		return !p.Exited() && itest.TopicEnd(topic) >= int64(rows) && itest.TopicEnd(topic6) >= int64(len(inet6))
	})
	insert(200)
	e.Exec(`UPDATE fb SET b = '::ffff:255.255.255.0', a = NULL WHERE id = 200 AND u = '00000000-0000-0000-0000-0000000000a1'`)
	itest.WaitFor(t, 30*time.Second, "the streamed rows", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= int64(2*rows+1) })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.Out)
	}
	if strings.Contains(p.Out.String(), "column left out of messages") {
		t.Errorf("a column was left out:\n%s", p.Out)
	}
	recs := itest.ReadTopicRaw(t, topic)
	if len(recs) != 2*rows+1 {
		t.Fatalf("%d records, want %d", len(recs), 2*rows+1)
	}
	last := map[string]int{} // key → its last record, compared with the row
	for i, r := range recs {
		last[itest.RawKeyText(r)] = i
	}
	for i, r := range recs {
		v := r.Value.(map[string]any)
		after := v["payload"].(map[string]any)["after"].(map[string]any)
		key := itest.RawKeyText(r)
		if last[key] != i {
			continue
		}
		u, _ := after["u"].(string)
		res := e.Exec(fmt.Sprintf(`SELECT CAST(u AS CHAR), CAST(a AS CHAR), CAST(b AS CHAR) FROM fb WHERE id = %v AND u = '%s'`, after["id"], u))
		if res.RowNumber() != 1 {
			t.Errorf("record %d: no row (id %v, u %q) in the database; key %s", i, after["id"], u, key)
			continue
		}
		for j, col := range []string{"u", "a", "b"} {
			want, _ := res.GetString(0, j)
			null, _ := res.IsNull(0, j)
			got, isStr := after[col].(string)
			if null && after[col] != nil || !null && (!isStr || got != want) {
				t.Errorf("record %d (key %s): %s = %#v, the database says %q (null %v)", i, key, col, after[col], want, null)
			}
			if typ := itest.AfterFieldType(v, col); typ != "string" {
				t.Errorf("record %d: %s of type %q in the schema, want string", i, col, typ)
			}
		}
		if name, _ := itest.AfterColumn(v, "u")["name"].(string); name != "io.debezium.data.Uuid" {
			t.Errorf("record %d: u named %q, want io.debezium.data.Uuid", i, name)
		}
		if !strings.Contains(key, `"u":"`+u+`"`) {
			t.Errorf("record %d: key %s does not carry u %q", i, key, u)
		}
	}
	keys6 := map[string]bool{}
	for _, r := range itest.ReadTopicRaw(t, topic6) {
		k, _ := r.Key.(map[string]any)["payload"].(map[string]any)["k"].(string)
		keys6[k] = true
	}
	res := e.Exec(`SELECT CAST(k AS CHAR) FROM fb6`)
	for i := range res.RowNumber() {
		if want, _ := res.GetString(i, 0); !keys6[want] {
			t.Errorf("fb6: key %q not published (keys %v)", want, keys6)
		}
	}
	if len(keys6) != len(inet6) {
		t.Errorf("fb6: %d keys published, want %d", len(keys6), len(inet6))
	}
	if len(last) != 2*rows {
		t.Errorf("%d distinct keys over %d rows (%d records): rows share keys", len(last), 2*rows, len(recs))
	}
}

// TestMySQLUnknownTypesIncluded: source.include_unknown_types changes
// nothing for MariaDB's INET6, which Tributary maps (to its text): it is
// published as a string in backfilled and streamed messages alike.
func TestMySQLUnknownTypesIncluded(t *testing.T) {
	e := itest.NewMyEnv(t, "myunk")
	e.Exec(`CREATE TABLE odd (id INT PRIMARY KEY, ip INET6, note VARCHAR(10))`)
	e.Exec(`INSERT INTO odd VALUES (1, '::1', 'one')`)
	topic := e.Prefix + "." + e.DB + ".odd"
	p := e.Start("run", "--config", e.WriteConfig("  include_unknown_types: true\n"))
	itest.WaitFor(t, 60*time.Second, "the backfilled row", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 1 })
	e.Exec(`INSERT INTO odd VALUES (2, '2001:db8::7', 'two')`)
	itest.WaitFor(t, 30*time.Second, "the streamed row", func() bool { return !p.Exited() && itest.TopicEnd(topic) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, p.Out)
	}
	recs := itest.ReadTopicRaw(t, topic)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	// The topic's partitions are read in fetch order: each record is
	// matched by its row's id.
	want := map[string]string{"1": "::1", "2": "2001:db8::7"}
	for i, r := range recs {
		v := r.Value.(map[string]any)
		after := v["payload"].(map[string]any)["after"].(map[string]any)
		if ip, ok := want[fmt.Sprint(after["id"])]; !ok || after["ip"] != ip {
			t.Errorf("record %d: id %v, ip = %v, want %q", i, after["id"], after["ip"], ip)
		}
		if typ := itest.AfterFieldType(v, "ip"); typ != "string" {
			t.Errorf("record %d (%v): field ip of type %q in the schema, want string", i, v["payload"].(map[string]any)["op"], typ)
		}
	}
}
