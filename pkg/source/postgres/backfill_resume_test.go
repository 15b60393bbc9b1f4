package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// TestBackfillResumeNonUTF8Key: in a SQL_ASCII database a text primary key
// can hold any bytes. A backfill interrupted right after a key that is not
// UTF-8 must resume after exactly that key: the checkpoint goes through
// JSON, and a key rewritten there (invalid bytes become U+FFFD, which
// sorts after them) would make the resumed scan skip every row between.
func TestBackfillResumeNonUTF8Key(t *testing.T) {
	conn, url := testDB(t, "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`CREATE TABLE t (k text PRIMARY KEY, v int)`)
	// markEvery-1 plain keys, then the markEvery-th row (where the first
	// progress marker falls) with key 'k\xe9', then keys that sort between
	// 'k\xe9' and 'k\xef\xbf\xbd' (its U+FFFD rewrite), then some after.
	exec(fmt.Sprintf(`INSERT INTO t SELECT 'k' || lpad(g::text, 5, '0'), g FROM generate_series(1, %d) g`, markEvery-1))
	exec(`INSERT INTO t VALUES (convert_from('\x6be9'::bytea, 'SQL_ASCII'), 0)`)
	for _, b := range []string{"e9", "ea", "eb", "ec", "ed", "ee"} {
		for _, c := range []string{"61", "62", "63"} {
			exec(fmt.Sprintf(`INSERT INTO t VALUES (convert_from('\x6b%s%s'::bytea, 'SQL_ASCII'), 1)`, b, c))
		}
	}
	exec(`INSERT INTO t VALUES (convert_from('\x6bf0'::bytea, 'SQL_ASCII'), 2), (convert_from('\x6bf1'::bytea, 'SQL_ASCII'), 2)`)

	src, err := New(ctx, source.Options{Pipeline: "p", TopicPrefix: "p", Config: config.Source{Type: "postgres", URL: url, Slot: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Source)
	defer s.Close()
	rels, _, err := selectedTables(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}

	// A first run: keep the first progress marker, as the checkpoint store
	// would (through its JSON encoding).
	var marker change.Position
	var rows int
	err = s.backfill(ctx, "", 0x1000, rels, nil, func(_ context.Context, ev *change.Event) error {
		if ev.Table != nil {
			rows++
		} else if marker == nil {
			marker = ev.Position
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if marker == nil {
		t.Fatalf("no progress marker in %d rows", rows)
	}
	pos, _, err := decodePosition(marker)
	if err != nil {
		t.Fatal(err)
	}
	if pos.Backfill == nil || pos.Backfill.Rows != markEvery {
		t.Fatalf("first marker %s: want progress at row %d", marker, markEvery)
	}

	// Resume from it: every row after the markEvery-th is read again.
	resumed := 0
	err = s.backfill(ctx, "", 0x1000, rels, pos.Backfill, func(_ context.Context, ev *change.Event) error {
		if ev.Table != nil {
			resumed++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := rows - markEvery; resumed != want {
		t.Fatalf("resumed backfill read %d rows, want %d (the %d rows after key 'k\\xe9'); checkpoint %s",
			resumed, want, want, marker)
	}
}
