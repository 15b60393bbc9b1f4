package kafka

import (
	"context"
	"fmt"
)

// HasOffsetsRecord says whether the offsets topic holds a committed
// record for key (pkg/pipeline/exactlyonce.go writes one per pipeline);
// a missing topic holds none.
func (p *Producer) HasOffsetsRecord(ctx context.Context, topic string, key []byte) (bool, error) {
	missing, err := p.MissingTopics(ctx, []string{topic})
	if err != nil || len(missing) > 0 {
		return false, err
	}
	_, found, err := p.ReadLastCommitted(ctx, topic, key)
	return found, err
}

// TombstoneOffsetsRecord commits a tombstone for key in the offsets topic,
// so that compaction removes the pipeline's record and a later start finds
// no position there (ReadLastCommitted). p must be the pipeline's
// transactional producer: every writer of the offsets topic is
// transactional, and initialising it fences any earlier one.
func (p *Producer) TombstoneOffsetsRecord(ctx context.Context, topic string, key []byte) error {
	if err := p.Fence(ctx); err != nil {
		return err
	}
	if err := p.BeginTransaction(); err != nil {
		return err
	}
	var ackErr error
	p.Publish(ctx, Message{Topic: topic, Key: key}, func(err error) { ackErr = err })
	if err := p.CommitTransaction(ctx); err != nil {
		p.AbortTransaction(context.WithoutCancel(ctx))
		return err
	}
	if ackErr != nil {
		return fmt.Errorf("tombstone the offsets record in %s: %w", topic, ackErr)
	}
	return nil
}
