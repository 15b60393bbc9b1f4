package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// skippedRow is what a row.skipped event says of a row that is not
// published; taken from the event before emit returns (the source may
// reuse the event), since a broker refusal is learnt later, in the
// producer's callback.
type skippedRow struct {
	topic     string
	key       []byte
	table     string
	op        change.Op
	eventID   string
	size      int
	limit     int           // the limit it is over; 0: max_message_bytes
	tombstone tombstoneFate // a delete's tombstone after it
}

// tombstoneFate is what becomes of the tombstone due after a delete whose
// record is skipped.
type tombstoneFate uint8

const (
	tombNone      tombstoneFate = iota // none is due
	tombPublished                      // it is still published
	tombRefused                        // it is over the limit too: not published
)

// skip records a row.skipped event for a row that is not published and
// returns only once the notifier has made it durable. An error stops the
// pipeline before the position can pass the row.
func (p *Pipeline) skip(ctx context.Context, row skippedRow, reason string) error {
	if p.Notifier == nil {
		return fmt.Errorf("row of %s (event %s) is not published (%s), and no row.skipped notifier is set", row.table, row.eventID, reason)
	}
	extra := map[string]any{"op": row.op.String(), "source_event_id": row.eventID}
	switch row.tombstone {
	case tombPublished:
		extra["tombstone_published"] = true
	case tombRefused:
		extra["tombstone_published"] = false
	}
	rs := webhook.RowSkipped{
		Type:       webhook.EventType,
		EventID:    webhook.SkippedEventID(p.Name, row.eventID),
		Pipeline:   p.Name,
		Topic:      row.topic,
		Table:      row.table,
		PrimaryKey: p.primaryKey(row.key),
		SizeBytes:  row.size,
		LimitBytes: cmp.Or(row.limit, p.Producer.MaxMessageBytes()),
		Reason:     reason,
		Time:       time.Now().UTC(),
		Extra:      extra,
	}
	if err := p.Notifier.Notify(ctx, rs); err != nil {
		return fmt.Errorf("row of %s (event %s) is not published (%s) and its row.skipped event was not recorded: %w", row.table, row.eventID, reason, err)
	}
	p.Skipped.Add(1)
	return nil
}
