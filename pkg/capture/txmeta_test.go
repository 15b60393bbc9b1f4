package capture

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// txBlock is a source block whose changes name their transaction from a
// slot, and whose END is named from the cursor.
var txBlock = &change.SourceBlock{Connector: "test", SchemaName: "test.Source",
	TxID: func(s *change.Source) string { return fmt.Sprintf("tx%d:%d", s.Ints[0], s.Ints[1]) },
	TxEndID: func(first *change.Source, cursor change.Position) string {
		return fmt.Sprintf("tx%d:%s", first.Ints[0], cursor)
	},
}

// With transaction metadata on, the loop frames each transaction's
// changes with a BEGIN (before the first) and an END (at the commit,
// before its position), numbers them in the transaction and per table, a
// key change's delete and create as two; snapshot reads and a commit
// without changes are in no transaction; a stream that ends inside a
// transaction starts it again from its BEGIN.
func TestDispatchTransactionMetadata(t *testing.T) {
	d, got := dispatched()
	d.txmeta = true
	other := &change.Table{ID: change.TableID{Schema: "s", Name: "b"}, Columns: keyed.Columns, Key: keyed.Key}
	a := &change.Table{ID: change.TableID{Schema: "s", Name: "a"}, Columns: keyed.Columns, Key: keyed.Key}
	row := func(id int64) change.Row { return change.Row{{Kind: change.Int, Int: id}, {Kind: change.Int, Int: 0}} }
	src := func(xid, lsn int64) change.Source {
		return change.Source{Block: txBlock, CommitMicros: 5_000_123, Ints: [change.SourceSlots]int64{xid, lsn}}
	}
	ctx := context.Background()
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	step(d.Change(ctx, &change.Event{Table: a, Op: change.OpCreate, After: row(1), Source: src(7, 10)}))
	step(d.Change(ctx, &change.Event{Table: other, Op: change.OpCreate, After: row(2), Source: src(7, 11)}))
	step(d.Change(ctx, &change.Event{Table: a, Op: change.OpUpdate, Before: row(1), After: row(3), Source: src(7, 12)}))
	step(d.Change(ctx, &change.Event{Table: a, Op: change.OpRead, After: row(9), Source: src(0, 0)}))
	step(d.Commit(ctx, change.Position("13"), 0))
	step(d.Commit(ctx, change.Position("14"), 0)) // nothing captured
	step(d.Change(ctx, &change.Event{Table: a, Op: change.OpDelete, Before: row(3), Source: src(8, 20)}))
	d.tx.open = false // the stream ended here (Capture.stream)
	step(d.Change(ctx, &change.Event{Table: a, Op: change.OpDelete, Before: row(3), Source: src(8, 20)}))
	step(d.Commit(ctx, change.Position("21"), 9_000_000))

	var lines []string
	for _, ev := range *got {
		switch {
		case ev.Mark != nil:
			lines = append(lines, fmt.Sprintf("%+v", *ev.Mark))
		case ev.Op == change.OpNone:
			lines = append(lines, "position")
		default:
			lines = append(lines, fmt.Sprintf("%s %s %+v", ev.Table.ID.Name, ev.Op, ev.Tx))
		}
	}
	want := []string{
		"{End:false ID:tx7:10 CommitMicros:5000123 Count:0 Tables:[]}",
		"a c {ID:tx7:10 Total:1 Table:1}",
		"b c {ID:tx7:11 Total:2 Table:1}",
		"a d {ID:tx7:12 Total:3 Table:2}",
		"a c {ID:tx7:12 Total:4 Table:3}",
		"a r {ID: Total:0 Table:0}",
		"{End:true ID:tx7:13 CommitMicros:5000123 Count:4 Tables:[{Name:s.a Count:3} {Name:s.b Count:1}]}",
		"position",
		"position",
		"{End:false ID:tx8:20 CommitMicros:5000123 Count:0 Tables:[]}",
		"a d {ID:tx8:20 Total:1 Table:1}",
		"{End:false ID:tx8:20 CommitMicros:5000123 Count:0 Tables:[]}",
		"a d {ID:tx8:20 Total:1 Table:1}",
		"{End:true ID:tx8:21 CommitMicros:9000000 Count:1 Tables:[{Name:s.a Count:1}]}",
		"position",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("got\n%q\nwant\n%q", lines, want)
	}
}

// Off (the default), changes carry no transaction and nothing frames
// them.
func TestDispatchNoTransactionMetadata(t *testing.T) {
	d, got := dispatched()
	ev := &change.Event{Table: keyed, Op: change.OpCreate, After: change.Row{{Kind: change.Int, Int: 1}, {}},
		Source: change.Source{Block: txBlock, Ints: [change.SourceSlots]int64{7, 10}}}
	if err := d.Change(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(context.Background(), change.Position("11"), 0); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 2 || (*got)[0].Tx != (change.Tx{}) || (*got)[0].Mark != nil || (*got)[1].Mark != nil {
		t.Errorf("events %+v", *got)
	}
}
