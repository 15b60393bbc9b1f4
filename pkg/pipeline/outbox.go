package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// Outbox invalid-operation behaviours (transforms.outbox.table_op_invalid_behavior).
const (
	OutboxInvalidWarn  = "warn"
	OutboxInvalidError = "error"
	OutboxInvalidFatal = "fatal"
)

// emitOutbox publishes ev as Debezium's outbox event router does: an
// inserted (or snapshot) row is one event on the topic its route-by
// column names; a delete is dropped, an update dropped with a warning
// or an error logged, or it stops the pipeline (OutboxInvalidOp).
func (p *Pipeline) emitOutbox(ctx context.Context, ev *change.Event) error {
	switch ev.Op {
	case change.OpDelete:
		return nil
	case change.OpUpdate:
		msg := "an update of an outbox table is not an event and is not published; outbox rows are only inserted"
		switch p.OutboxInvalidOp {
		case OutboxInvalidFatal:
			return fmt.Errorf("%s (transforms.outbox.table_op_invalid_behavior: fatal): table %s, event %s; the pipeline stops here again at every start until table_op_invalid_behavior is warn or error, which drop the update", msg, ev.Table.ID, ev.ID)
		case OutboxInvalidError:
			p.Log.Error(msg, "table", ev.Table.ID.String(), "event_id", ev.ID)
		default:
			p.Log.Warn(msg, "table", ev.Table.ID.String(), "event_id", ev.ID)
		}
		return nil
	}
	rb := newRecordBuf()
	buf, rec, err := p.Encoder.AppendOutbox(rb.b[:0], ev)
	defer func() { rb.b = buf; rb.headers = nil; rb.release() }()
	if reason := unencodable(err); reason != "" {
		return p.skip(ctx, skippedRow{table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID}, reason)
	}
	if err != nil {
		return fmt.Errorf("encode outbox event of %s: %w", ev.Table.ID, err)
	}
	if rec.Warning != "" {
		p.Log.Warn(rec.Warning, "table", ev.Table.ID.String(), "event_id", ev.ID)
	}
	if p.Recoder != nil {
		// Avro: as Debezium's AvroConverter writes the router's records
		// (a null payload is then a record without a value, as it writes
		// a null Connect value).
		if rec.Key, err = p.Recoder.RecodeKey(ctx, rec.Topic, rec.Key); err != nil {
			return fmt.Errorf("encode key of the outbox event of %s: %w", ev.Table.ID, err)
		}
		value, err := p.Recoder.RecodeValue(ctx, rec.Topic, rec.Value)
		if err != nil && rec.Expanded && errors.Is(err, debezium.ErrNoSchemaForm) {
			// Debezium's converter fails on such a schema and stops the
			// connector; the payload goes out as the string instead, as
			// one that cannot be expanded. The reason names payload keys,
			// so the warning does not give it.
			var str debezium.OutboxRecord
			if buf, str, err = p.Encoder.AppendOutboxString(buf, ev); err != nil {
				return fmt.Errorf("encode outbox event of %s: %w", ev.Table.ID, err)
			}
			p.Log.Warn("the outbox payload is not expanded and is published as the string: the schema inferred from it has no Avro form (two different objects at one path, or keys that become the same Avro name) (transforms.outbox.table_expand_json_payload)",
				"table", ev.Table.ID.String(), "event_id", ev.ID)
			value, err = p.Recoder.RecodeValue(ctx, rec.Topic, str.Value)
		}
		if err != nil {
			return fmt.Errorf("encode value of the outbox event of %s: %w", ev.Table.ID, err)
		}
		rec.Value = value
	}
	if err := p.ensureTopic(ctx, rec.Topic); err != nil {
		return err
	}
	rb.headers = make([]kafka.Header, len(rec.Headers))
	for i, h := range rec.Headers {
		rb.headers[i] = kafka.Header{Key: h.Key, Value: h.Value}
	}
	refused, err := p.produce(rec.Topic, rec.Key, rec.Value, debezium.Head{}, ev, rb, time.Now(), tombNone, nil)
	if err != nil {
		return err
	}
	if refused != nil {
		return p.skip(ctx, skippedRow{topic: rec.Topic, key: rec.Key, table: ev.Table.ID.String(), op: ev.Op, eventID: ev.ID}, p.refusedReason(refused))
	}
	return nil
}
