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
}
