package capture

import (
	"context"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// txState is the open transaction of a stream with transaction metadata
// on (format.provide_transaction_metadata), as Debezium's transaction
// monitor keeps it: its first change's source (its id and BEGIN's), how
// many changes it had, and per table.
type txState struct {
	open   bool
	first  change.Source
	id     string
	total  int64
	tables []change.TxTable // in the order first changed
}

// txChange places a streamed change in its transaction, handing on the
// transaction's BEGIN before its first change. A change whose source
// gives no transaction id (none declared, or "") is left out of any.
func (d *dispatcher) txChange(ctx context.Context, ev *change.Event) error {
	b := ev.Source.Block
	if ev.Op == change.OpRead || b == nil || b.TxID == nil {
		return nil
	}
	if !d.tx.open {
		id := b.TxID(&ev.Source)
		if id == "" {
			return nil // the source cannot name this transaction
		}
		d.tx = txState{open: true, first: ev.Source, id: id, tables: d.tx.tables[:0]}
		mark := &change.Event{Mark: &change.TxMark{ID: d.tx.id, CommitMicros: ev.Source.CommitMicros}}
		if err := d.out(ctx, mark); err != nil {
			return err
		}
		ev.Tx.ID = d.tx.id
	} else {
		ev.Tx.ID = b.TxID(&ev.Source)
	}
	d.tx.next(ev)
	return nil
}

// next counts ev as the transaction's next change (total_order and
// data_collection_order).
func (t *txState) next(ev *change.Event) {
	t.total++
	name := ev.Table.ID.String()
	i := 0
	for i < len(t.tables) && t.tables[i].Name != name {
		i++
	}
	if i == len(t.tables) {
		t.tables = append(t.tables, change.TxTable{Name: name})
	}
	t.tables[i].Count++
	ev.Tx.Total, ev.Tx.Table = t.total, t.tables[i].Count
}

// txEnd hands on the open transaction's END, at its commit.
func (d *dispatcher) txEnd(ctx context.Context, cursor change.Position, commitMicros int64) error {
	t := &d.tx
	t.open = false
	id := t.id
	if f := t.first.Block.TxEndID; f != nil {
		id = f(&t.first, cursor)
	}
	if commitMicros == 0 {
		commitMicros = t.first.CommitMicros
	}
	mark := &change.TxMark{End: true, ID: id, CommitMicros: commitMicros, Count: t.total,
		Tables: append([]change.TxTable(nil), t.tables...)}
	return d.out(ctx, &change.Event{Mark: mark})
}
