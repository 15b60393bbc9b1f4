package pipeline

import "context"

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
