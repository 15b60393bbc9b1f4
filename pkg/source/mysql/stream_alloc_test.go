package mysql

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestStreamedEventAllocs: what one streamed row costs the stream from
// the event's bytes to the encoder, on the benchmark's MariaDB events
// (decode_bench_test.go): nothing. The table map in front of every rows
// event is the same bytes each time, so it is parsed and its shape
// decided once, not per statement (knownMap); the rows event's header and
// row images are read in place (rowsHeader, rows.go); events, rows and
// event IDs are cut from slabs. The messages are those the stream
// published before any of that (testdata/stream_*.golden, written by the
// code before this test).
func TestStreamedEventAllocs(t *testing.T) {
	for _, tc := range []struct{ name, event string }{{"insert", benchWriteRows}, {"update", benchUpdateRows}} {
		name, event := tc.name, tc.event
		t.Run(name, func(t *testing.T) {
			bs := newBenchStream(t)
			step := bs.statement(t, event)
			step()
			golden := filepath.Join("testdata", "stream_"+name+".golden")
			got := append(append(append([]byte{}, bs.key...), '\n'), bs.value...)
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("message changed:\n got %s\nwant %s", got, want)
			}
			if n := testing.AllocsPerRun(300, step); n > 0 {
				t.Errorf("%v allocations per statement (a table map and a rows event of one row), want none (slabs amortised)", n)
			}
		})
	}
}

// TestTableMapShapeDecidedAgain: the shape kept with a table map
// (tablemap.go) is decided again when the table map's bytes change under
// the same table id, and when the catalog's table is re-read (describe,
// after a DDL that logs nothing different: a new default), so the
// messages follow the table, not the first decision.
func TestTableMapShapeDecidedAgain(t *testing.T) {
	t.Run("other table map bytes", func(t *testing.T) {
		bs := newBenchStream(t)
		bs.statement(t, benchWriteRows)()
		if !strings.Contains(string(bs.value), `"field":"status"`) {
			t.Fatalf("no status column in %s", bs.value)
		}
		// The binlog now names the column statux (its shape changed
		// after this row was written: a past shape, from the event).
		renamed := strings.Replace(benchTableMap, hex.EncodeToString([]byte("\x06status")), hex.EncodeToString([]byte("\x06statux")), 1)
		for _, raw := range []string{renamed, benchWriteRows} {
			if err := bs.handle(benchBytes(t, raw)); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.Contains(string(bs.value), `"field":"statux"`) || strings.Contains(string(bs.value), `"field":"status"`) {
			t.Fatalf("the row of the renamed column's table map was published as %s", bs.value)
		}
		bs.statement(t, benchWriteRows)()
		if !strings.Contains(string(bs.value), `"field":"status"`) {
			t.Fatalf("the row of the first table map again was published as %s", bs.value)
		}
	})
	t.Run("catalog re-read", func(t *testing.T) {
		bs := newBenchStream(t)
		step := bs.statement(t, benchWriteRows)
		step()
		// What describe does after ALTER TABLE orders RENAME COLUMN
		// status TO state, read while the stream is still behind it: new
		// columns and a new change.Table. The rows before the DDL keep
		// their logged name.
		cat := bs.st.src.tables["bench_alloc_capture.orders"]
		cat.remember()
		cat.cols = append([]column(nil), cat.cols...)
		cat.cols[7].name = "state"
		ct := &change.Table{ID: cat.t.ID, Key: cat.key, Version: cat.t.Version + 1}
		for i, c := range cat.cols {
			ct.Columns = append(ct.Columns, change.Column{Name: c.name, Type: c.typ, Optional: c.nullable, Default: cat.dflts[i]})
		}
		cat.t = ct
		step()
		if !strings.Contains(string(bs.value), `"field":"status"`) || strings.Contains(string(bs.value), `"field":"state"`) {
			t.Fatalf("a row logged before the rename was published as %s", bs.value)
		}
	})
}

// TestEventID: a streamed row's event ID (tributary-event-id) is the one
// it always was, "my:<file>:<rows event position>:<row>", whatever the
// length of the file's name.
func TestEventID(t *testing.T) {
	st := &streamer{}
	for _, file := range []string{"mariadb-bin.000001", strings.Repeat("very-long-binlog-base-name-", 6) + ".000042"} {
		st.file = file
		for _, c := range []struct {
			pos int64
			row int
		}{{4, 0}, {515450553, 7}, {1 << 40, 123456}} {
			if got, want := st.eventID(c.pos, c.row), fmt.Sprintf("my:%s:%d:%d", file, c.pos, c.row); got != want {
				t.Errorf("eventID = %q, want %q", got, want)
			}
		}
	}
}
