package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The offsets record is how delivery exactly_once keeps a pipeline's
// position in Kafka: every transaction writes one to the offsets topic,
// key = the pipeline's name, value = offsetsRecord, so that the position
// commits atomically with the records it follows (pkg/pipeline's
// exactlyonce.go, docs/exactly-once.md).
type offsetsRecord struct {
	Version     int             `json:"version"`
	Pipeline    string          `json:"pipeline"`
	Position    json.RawMessage `json:"position"`
	CommittedAt time.Time       `json:"committed_at"`
}

const offsetsRecordVersion = 1

// PublishOffsets writes pipeline's position (the source's JSON) to the
// offsets topic, within the open transaction. onAck runs as for Publish.
func (p *Producer) PublishOffsets(ctx context.Context, topic, pipeline string, position []byte, onAck func(error)) error {
	v, err := json.Marshal(offsetsRecord{Version: offsetsRecordVersion, Pipeline: pipeline, Position: json.RawMessage(position), CommittedAt: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("encode position: %w", err)
	}
	p.produce(p.newOutgoing(ctx, Message{Topic: topic, Key: []byte(pipeline)}, v, false), onAck)
	return nil
}

// ReadOffsets returns pipeline's position in the offsets topic as last
// committed, and when it was committed; found is false when the topic
// holds none.
func ReadOffsets(ctx context.Context, o Options, topic, pipeline string) (position []byte, committedAt time.Time, found bool, err error) {
	raw, found, err := ReadLastCommitted(ctx, o, topic, []byte(pipeline))
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("read the committed position from %s: %w", topic, err)
	}
	if !found {
		return nil, time.Time{}, false, nil
	}
	position, committedAt, err = decodeOffsets(raw, pipeline)
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("offsets topic %s: %w", topic, err)
	}
	return position, committedAt, true, nil
}

// ReadOffsets is ReadOffsets on the producer's cluster.
func (p *Producer) ReadOffsets(ctx context.Context, topic, pipeline string) ([]byte, time.Time, bool, error) {
	return ReadOffsets(ctx, p.opts, topic, pipeline)
}

// decodeOffsets reads an offsets-topic value (bytes from the broker: any
// writer of the topic could have put them there): the position and when
// it was committed.
func decodeOffsets(b []byte, pipeline string) ([]byte, time.Time, error) {
	var r offsetsRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, time.Time{}, fmt.Errorf("offsets record is not JSON: %w", err)
	}
	switch {
	case r.Version < 1 || r.Version > offsetsRecordVersion:
		return nil, time.Time{}, fmt.Errorf("offsets record has version %d; this build reads version %d", r.Version, offsetsRecordVersion)
	case r.Pipeline != pipeline:
		return nil, time.Time{}, fmt.Errorf("offsets record under key %q names pipeline %q", pipeline, r.Pipeline)
	case len(r.Position) == 0 || bytes.Equal(r.Position, []byte("null")):
		return nil, time.Time{}, errors.New("offsets record has no position")
	}
	return r.Position, r.CommittedAt, nil
}

// HasOffsetsRecord says whether the offsets topic holds a committed
// record for pipeline; a missing topic holds none.
func (p *Producer) HasOffsetsRecord(ctx context.Context, topic, pipeline string) (bool, error) {
	missing, err := p.MissingTopics(ctx, []string{topic})
	if err != nil || len(missing) > 0 {
		return false, err
	}
	_, found, err := p.ReadLastCommitted(ctx, topic, []byte(pipeline))
	return found, err
}

// TombstoneOffsetsRecord commits a tombstone for pipeline in the offsets
// topic, so that compaction removes the pipeline's record and a later
// start finds no position there (ReadOffsets). p must be the pipeline's
// transactional producer: every writer of the offsets topic is
// transactional, and initialising it fences any earlier one.
func (p *Producer) TombstoneOffsetsRecord(ctx context.Context, topic, pipeline string) error {
	if err := p.Fence(ctx); err != nil {
		return err
	}
	if err := p.BeginTransaction(); err != nil {
		return err
	}
	var ackErr error
	if err := p.Publish(ctx, Message{Topic: topic, Key: []byte(pipeline)}, func(err error) { ackErr = err }); err != nil {
		ackErr = err
	}
	if err := p.CommitTransaction(ctx); err != nil {
		p.AbortTransaction(context.WithoutCancel(ctx))
		return err
	}
	if ackErr != nil {
		return fmt.Errorf("tombstone the offsets record in %s: %w", topic, ackErr)
	}
	return nil
}
