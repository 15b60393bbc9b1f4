package pipeline

import (
	"context"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// Recoder rewrites a table's Debezium JSON key or value (with its schema)
// in another encoding, e.g. Avro with a schema registry
// (pkg/debezium/avro). It may block while the encoding's schema is being
// registered; it returns an error only when ctx ends or the message cannot
// be written at all, never to skip a row.
type Recoder interface {
	RecodeKey(ctx context.Context, topic string, msg []byte) ([]byte, error)
	RecodeValue(ctx context.Context, topic string, msg []byte) ([]byte, error)
	// KeyPayload reads back a key RecodeKey wrote, as the JSON key's
	// payload (nil: not one of its keys).
	KeyPayload(key []byte) map[string]any
}

// EventRecoder is a Recoder that writes a table row's key and value
// itself, from the event and the Encoder's plans (one pass), rather than
// rewrite the JSON the Encoder wrote. Its methods append to dst as the
// Encoder's do, and return dst unchanged on error; an error the Encoder
// returns (an unencodable value) comes back as it is. AppendValue's null
// says the value is null (dst unchanged).
type EventRecoder interface {
	AppendKey(ctx context.Context, dst []byte, enc *debezium.Encoder, topic string, ev *change.Event) (out []byte, ok bool, err error)
	AppendValue(ctx context.Context, dst []byte, enc *debezium.Encoder, topic string, ev *change.Event, nowMicros int64) (out []byte, head debezium.Head, null bool, err error)
}

// appendValue appends ev's value to buf: with direct when set, else the
// Encoder's JSON.
func (p *Pipeline) appendValue(ctx context.Context, direct EventRecoder, buf []byte, topic string, ev *change.Event, nowMicros int64) ([]byte, debezium.Head, bool, error) {
	if direct != nil {
		return direct.AppendValue(ctx, buf, p.Encoder, topic, ev, nowMicros)
	}
	buf, head, err := p.Encoder.AppendValueHead(buf, ev, nowMicros)
	return buf, head, false, err
}

// primaryKey is a row.skipped event's primary_key: the key's payload,
// whatever its encoding.
func (p *Pipeline) primaryKey(key []byte) map[string]any {
	if p.Recoder != nil {
		if m := p.Recoder.KeyPayload(key); m != nil {
			return m
		}
	}
	return keyPayload(key, p.Encoder.SchemasEnabled())
}
