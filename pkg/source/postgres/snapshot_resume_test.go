package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

// TestSnapshotResumeNonUTF8Key: in a SQL_ASCII database a text primary key
// can hold any bytes. A snapshot interrupted right after a key that is not
// UTF-8 must resume after exactly that key: the checkpoint goes through
// JSON, and a key rewritten there (invalid bytes become U+FFFD, which
// sorts after them) would make the resumed scan skip every row between.
func TestSnapshotResumeNonUTF8Key(t *testing.T) {
	conn, url := testDB(t, "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	const chunk = 1000
	exec(`CREATE TABLE t (k text PRIMARY KEY, v int)`)
	// chunk-1 plain keys, then the chunk-th row (where the first chunk
	// ends) with key 'k\xe9', then keys that sort between 'k\xe9' and
	// 'k\xef\xbf\xbd' (its U+FFFD rewrite), then some after.
	exec(fmt.Sprintf(`INSERT INTO t SELECT 'k' || lpad(g::text, 5, '0'), g FROM generate_series(1, %d) g`, chunk-1))
	exec(`INSERT INTO t VALUES (convert_from('\x6be9'::bytea, 'SQL_ASCII'), 0)`)
	for _, b := range []string{"e9", "ea", "eb", "ec", "ed", "ee"} {
		for _, c := range []string{"61", "62", "63"} {
			exec(fmt.Sprintf(`INSERT INTO t VALUES (convert_from('\x6b%s%s'::bytea, 'SQL_ASCII'), 1)`, b, c))
		}
	}
	exec(`INSERT INTO t VALUES (convert_from('\x6bf0'::bytea, 'SQL_ASCII'), 2), (convert_from('\x6bf1'::bytea, 'SQL_ASCII'), 2)`)

	sess := snapshotSession(t, conn, url)

	// A first chunk; its last key goes through the position's JSON, as
	// the checkpoint store keeps it.
	first, err := sess.ReadChunk(ctx, "public.t", nil, nil, chunk)
	if err != nil || len(first) != chunk {
		t.Fatalf("first chunk: %d rows, %v", len(first), err)
	}
	raw, _ := json.Marshal(snapshot.State{Tables: []snapshot.TableState{{Table: "public.t", Key: first[chunk-1].Key, Rows: chunk}}})
	marker, _ := json.Marshal(map[string]json.RawMessage{"slot": json.RawMessage(`"s"`), "lsn": json.RawMessage(`"0/1000"`), "snapshot": raw})
	var env struct {
		Snapshot json.RawMessage `json:"snapshot"`
	}
	if err := json.Unmarshal(marker, &env); err != nil {
		t.Fatal(err)
	}
	st, err := snapshot.DecodeState(env.Snapshot)
	if err != nil {
		t.Fatal(err)
	}

	// Resume from it: every row after the chunk-th is read.
	rest, err := sess.ReadChunk(ctx, "public.t", st.Tables[0].Key, nil, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if want := 18 + 2; len(rest) != want {
		t.Fatalf("resumed snapshot read %d rows, want %d (the rows after key 'k\\xe9'); checkpoint %s", len(rest), want, marker)
	}

	// Split the 21 rows after the (chunk-1)-th in two: all of them are
	// sampled, and the split key is the 10th, 'k\xeb\x63'. The keys go
	// through the position's JSON, and the ranges read up to and after
	// the split key hold each of the 21 rows once.
	from := first[chunk-2].Key
	keys, err := sess.Split(ctx, "public.t", from, 21, 2)
	if err != nil || len(keys) != 1 || string(keys[0][0]) != "k\xeb\x63" {
		t.Fatalf("split points %q, %v: want 'k\\xeb\\x63'", keys, err)
	}
	raw, _ = json.Marshal(snapshot.State{Tables: []snapshot.TableState{{Table: "public.t", Parts: []snapshot.RangeState{
		{Key: from, Until: keys[0]}, {Key: keys[0]}}}}})
	if st, err = snapshot.DecodeState(raw); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range st.Tables[0].Parts {
		rows, err := sess.ReadChunk(ctx, "public.t", r.Key, r.Until, 100000)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			seen[string(row.Key[0])]++
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("key %q read %d times in the two ranges", k, n)
		}
	}
	if len(seen) != 21 {
		t.Errorf("the two ranges read %d keys, want 21", len(seen))
	}
}
