package capture

import (
	"context"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
)

// dispatched is a dispatcher over an idle engine whose out keeps the
// events it is handed.
func dispatched() (*dispatcher, *[]change.Event) {
	var got []change.Event
	d := &dispatcher{engine: snapshot.New(noSessions{}, snapshot.Config{})}
	d.out = func(_ context.Context, ev *change.Event) error {
		got = append(got, *ev)
		return nil
	}
	return d, &got
}

var keyed = &change.Table{Columns: []change.Column{{Name: "id"}, {Name: "v"}}, Key: []int{0}}

// An update that changed the key is a delete of the old key and a create
// of the new one, as Debezium publishes it, whatever the driver; one that
// did not (or carries no before image) stays an update.
func TestDispatchSplitsKeyChanges(t *testing.T) {
	d, got := dispatched()
	row := func(id, v int64) change.Row {
		return change.Row{{Kind: change.Int, Int: id}, {Kind: change.Int, Int: v}}
	}
	for _, ev := range []*change.Event{
		{Table: keyed, Op: change.OpUpdate, ID: "a", Before: row(1, 1), After: row(2, 1)},
		{Table: keyed, Op: change.OpUpdate, ID: "b", Before: row(2, 1), After: row(2, 5)},
		{Table: keyed, Op: change.OpUpdate, ID: "c", After: row(2, 6)},
	} {
		if err := d.Change(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	var ops []string
	for _, ev := range *got {
		ops = append(ops, ev.ID+" "+ev.Op.String())
	}
	want := []string{"a:old d", "a c", "b u", "c u"}
	if len(ops) != len(want) {
		t.Fatalf("got %v, want %v", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Fatalf("got %v, want %v", ops, want)
		}
	}
	if del := (*got)[0]; del.After != nil || del.Before[0].Int != 1 {
		t.Errorf("delete of the old key: before %v after %v", del.Before, del.After)
	}
	if cr := (*got)[1]; cr.Before != nil || cr.After[0].Int != 2 {
		t.Errorf("create of the new key: before %v after %v", cr.Before, cr.After)
	}
}

// A row change costs the loop no allocation; a commit the one event and
// the sealed position it always did.
func TestDispatchAllocs(t *testing.T) {
	d, _ := dispatched()
	d.out = func(context.Context, *change.Event) error { return nil }
	ev := &change.Event{Table: keyed, Op: change.OpUpdate, After: change.Row{{Kind: change.Int, Int: 1}, {}}}
	if n := testing.AllocsPerRun(1000, func() { _ = d.Change(context.Background(), ev) }); n != 0 {
		t.Errorf("Change: %v allocations, want 0", n)
	}
	d.Captured([]byte(`["d.t"]`), []string{"d.t"})
	cursor := change.Position(`{"lsn":"0/1"}`)
	if n := testing.AllocsPerRun(1000, func() { _ = d.Commit(context.Background(), cursor, 1) }); n > 2 {
		t.Errorf("Commit: %v allocations, want 2", n)
	}
}

func BenchmarkDispatchChange(b *testing.B) {
	d, _ := dispatched()
	d.out = func(context.Context, *change.Event) error { return nil }
	ev := &change.Event{Table: keyed, Op: change.OpUpdate, Before: change.Row{{Kind: change.Int, Int: 1}, {}},
		After: change.Row{{Kind: change.Int, Int: 1}, {}}}
	b.ReportAllocs()
	for b.Loop() {
		ev.Op = change.OpUpdate
		_ = d.Change(context.Background(), ev)
	}
}
