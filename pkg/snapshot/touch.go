package snapshot

import "github.com/tributary-cdc/tributary/pkg/change"

// A stream row can lack values: PostgreSQL's pgoutput sends an unchanged
// TOASTed value of an update as "unchanged" (change.Unavailable, published
// as Debezium's __debezium_unavailable_value) unless the table's replica
// identity is FULL. At a high watermark the chunk's row of a key the
// stream changed in the window is not emitted, as the stream's message is
// newer; but when the key's newest image lacks a value that no change of
// the window carried, the chunk's row is the only copy of that value. The
// value did not change in the whole window (a change that sets it sends
// it), so it is the chunk's value whenever in the window the chunk was
// read: the engine emits, in place of the chunk's row, an r row of the
// stream's newest image with the missing values taken from the chunk's row.
// That is the row's state at the high watermark, after every change the
// stream published for it, so it rolls nothing back (docs/snapshots.md).

// touch is what the stream did to one key while a window was open.
type touch struct {
	// image is the key's newest row in the window while it lacks values
	// (a value it lacks taken from an earlier image of the window that
	// had it); nil when complete.
	image change.Row
	table *change.Table
	// complete: a change of the window carried every value of the row
	// (always, outside PostgreSQL's TOAST): nothing is kept, and the
	// chunk's copy, maybe older, fills nothing.
	complete bool
	// gone: the window's last change of the key deleted it.
	gone bool
	// from are the keys the row had before primary key changes in the
	// window, while image lacks values: their chunk rows are the same row.
	from []string
}

// lacks reports whether row has a value the source did not send.
func lacks(row change.Row) bool {
	for _, v := range row {
		if v.Kind == change.Unavailable {
			return true
		}
	}
	return false
}

// deleted notes that the stream deleted key (a delete, or the old key of
// a primary key change).
func (w *window) deleted(key string) {
	tc := w.changed[key]
	tc.gone = true
	w.changed[key] = tc
	w.gone = key
}

// wrote notes ev's new image of key.
func (w *window) wrote(key string, ev *change.Event) {
	if !lacks(ev.After) {
		w.changed[key] = touch{complete: true}
		return
	}
	prev, ok := w.changed[key]
	var from []string
	if !ok || prev.gone {
		// No image of this row in the window yet, unless this is the new
		// key of a primary key change: PostgreSQL sends it as a delete of
		// the old key, observed just before, and an insert lacking the
		// unchanged TOASTed values (an insert of a new row always carries
		// them all).
		prev, ok = touch{}, false
		if ev.Op == change.OpCreate && w.gone != "" {
			prev, ok = w.changed[w.gone], true
			from = []string{w.gone}
		}
	}
	if ok && prev.complete {
		// The window's messages carried every value the row lacks now
		// (for a key change, under the old key: as in streaming).
		w.changed[key] = touch{complete: true}
		return
	}
	tc := touch{image: ev.After, table: ev.Table}
	if ok {
		tc.from = append(from, prev.from...)
		if prev.image != nil {
			tc.image = merged(ev.After, ev.Table, prev.image, prev.table)
		}
	}
	w.changed[key] = tc
}

// merged is dst (of table dt) with the values it lacks taken from src (of
// table st) where src has them; columns are matched by name when the
// tables differ (an ALTER TABLE between the two images).
func merged(dst change.Row, dt *change.Table, src change.Row, st *change.Table) change.Row {
	out := append(change.Row(nil), dst...)
	for i, v := range out {
		if v.Kind != change.Unavailable {
			continue
		}
		j := i
		if dt != st {
			j = -1
			for k, c := range st.Columns {
				if i < len(dt.Columns) && c.Name == dt.Columns[i].Name {
					j = k
					break
				}
			}
		}
		if j >= 0 && j < len(src) && src[j].Kind != change.Unavailable {
			out[i] = src[j]
		}
	}
	return out
}

// lacking maps each chunk key that can fill a touched row's missing values
// to that row's key: its own key, and the keys it had before a primary
// key change in the window. nil when no touched row lacks a value (every
// table but PostgreSQL's with TOASTed columns).
func (w *window) lacking() map[string]string {
	var out map[string]string
	for k, tc := range w.changed {
		if tc.gone || !lacks(tc.image) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for _, f := range tc.from {
			out[f] = k
		}
		out[k] = k // its own key first, when the chunk holds both
	}
	return out
}

// filled is the r row that replaces chunk row r for the touched key k: the
// stream's newest image of k with the values it lacks from r; ok is false
// when k was filled already (the chunk held the row under two keys).
func (w *window) filled(k string, r Row) (*change.Event, bool) {
	tc := w.changed[k]
	if !lacks(tc.image) {
		return nil, false
	}
	ev := *r.Event
	ev.Table, ev.After = tc.table, merged(tc.image, tc.table, r.Event.After, r.Event.Table)
	tc.image = ev.After
	w.changed[k] = tc
	return &ev, true
}
