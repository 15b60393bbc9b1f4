package pipeline

import "github.com/tributary-cdc/tributary/pkg/change"

// reportDropped warns about the columns the encoder leaves out of t's
// messages and sets tributary_columns_dropped, once per table version:
// at the first event of each table after start-up and after every schema
// change (sources make a new *change.Table only then). No column goes
// missing silently.
func (p *Pipeline) reportDropped(t *change.Table) {
	if p.reported == nil {
		p.reported = map[*change.Table]bool{}
	}
	if p.reported[t] {
		return
	}
	p.reported[t] = true
	dropped := p.Encoder.Dropped(t)
	for _, c := range dropped {
		p.Log.Warn("column left out of messages: Tributary cannot encode its type (set source.include_unknown_types to publish it as text)",
			"table", t.ID.String(), "column", c.Name, "type", c.Type.Name)
	}
	p.Metrics.ColumnsDropped(t.ID.String(), len(dropped))
}

// reportNoColumns warns, once per table, that t's rows are not published:
// a table without columns (PostgreSQL allows one, and rows in it), or
// whose every column is excluded, has no row to put in a message and no
// key, as Debezium, which skips its snapshot, has none either. Its changes pass without a record; a column
// added later makes a new shape, whose rows are published.
func (p *Pipeline) reportNoColumns(t *change.Table) {
	id := t.ID.String()
	if !p.noColumns.first(id) {
		return
	}
	p.Log.Warn("table has no columns to publish (it has none, or source.exclude_columns leaves out every one): its rows are not published", "table", id)
}

// oldRowAsKey is ev with the old row the default replica identity gives
// in place of its own: none for an update, the key alone for a delete
// (nil: ev has no old row to reduce, or its table no key).
func oldRowAsKey(ev *change.Event) *change.Event {
	if ev.Before == nil {
		return nil
	}
	bare := *ev
	switch {
	case ev.Op == change.OpUpdate:
		bare.Before = nil
	case ev.Op == change.OpDelete && len(ev.Table.Key) > 0:
		bare.Before = make(change.Row, len(ev.Before))
		for _, i := range ev.Table.Key {
			if i < len(ev.Before) {
				bare.Before[i] = ev.Before[i]
			}
		}
	default:
		return nil
	}
	return &bare
}

// reportBareUpdate warns, once per table, that an update or delete was
// published with the old row the default replica identity gives: its own
// (REPLICA IDENTITY FULL) holds a value the format cannot write (NaN or
// ±Infinity in a NOT NULL numeric under decimal_handling precise).
func (p *Pipeline) reportBareUpdate(t *change.Table) {
	id := t.ID.String()
	if !p.bareUpdates.first(id) {
		return
	}
	p.Log.Warn("an update or delete is published with the old row of the default replica identity (an update's before null, a delete's before its key): its old row holds NaN or Infinity in a NOT NULL numeric, which decimal_handling precise cannot write (string or double can)",
		"table", id)
}

// tableSet remembers tables, for what is reported once per table.
type tableSet map[string]bool

// first reports whether id is not in s yet, and adds it.
func (s *tableSet) first(id string) bool {
	if (*s)[id] {
		return false
	}
	if *s == nil {
		*s = tableSet{}
	}
	(*s)[id] = true
	return true
}
