package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// emitTxMark publishes a transaction's BEGIN or END
// (format.provide_transaction_metadata) to the transaction topic. It goes
// through the producer like a row's record, between the positions around
// its transaction: a checkpoint waits for its acknowledgement, and with
// exactly_once it is in the Kafka transaction of the rows it frames.
func (p *Pipeline) emitTxMark(ctx context.Context, m *change.TxMark) error {
	topic := p.Encoder.TransactionTopic()
	if err := p.ensureTopic(ctx, topic); err != nil {
		return err
	}
	rb := newRecordBuf()
	buf, vstart := p.Encoder.AppendTxMark(rb.b[:0], m)
	rb.b = buf
	status := ":BEGIN"
	if m.End {
		status = ":END"
	}
	key, value := buf[:vstart:vstart], buf[vstart:]
	if p.Recoder != nil {
		// Avro: Debezium's AvroConverter writes the transaction topic in
		// Avro too, under its TransactionMetadataKey/Value schemas.
		var err error
		if key, err = p.Recoder.RecodeKey(ctx, topic, key); err != nil {
			rb.release()
			return fmt.Errorf("encode key of the %s of transaction %s: %w", status[1:], m.ID, err)
		}
		if value, err = p.Recoder.RecodeValue(ctx, topic, value); err != nil {
			rb.release()
			return fmt.Errorf("encode value of the %s of transaction %s: %w", status[1:], m.ID, err)
		}
	}
	seq := p.tracker.add()
	msg := kafka.Message{Topic: topic, Key: key, Value: value, EventID: m.ID + status, Time: time.Now()}
	rb.hold()
	err := p.Producer.Publish(p.produceCtx, msg, func(err error) {
		defer rb.release()
		if err != nil {
			p.fail(fmt.Errorf("%w: %w", errPublish, err))
			return
		}
		p.tracker.ack(seq)
	})
	rb.release()
	if err != nil {
		rb.release()
		p.tracker.ack(seq)
		return fmt.Errorf("publish %s of transaction %s to %s: %w", status[1:], m.ID, topic, err)
	}
	if p.txn != nil {
		p.txn.counted()
	}
	return nil
}
