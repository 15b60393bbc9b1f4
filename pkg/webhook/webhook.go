// Package webhook defines the row.skipped event, the Notifier that records
// it durably before a pipeline moves past the row, and Standard Webhooks
// signing for delivering it over HTTP.
package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// RowSkipped says a row was not published (for example, it was larger than
// max_message_bytes). It names the row, never its contents.
type RowSkipped struct {
	Type       string         `json:"type"` // always "row.skipped"
	EventID    string         `json:"event_id"`
	Pipeline   string         `json:"pipeline"`
	Topic      string         `json:"topic"`
	Table      string         `json:"table"`
	PrimaryKey map[string]any `json:"primary_key"`
	SizeBytes  int            `json:"size_bytes"`
	LimitBytes int            `json:"limit_bytes"`
	Reason     string         `json:"reason"`
	Time       time.Time      `json:"time"`
	Extra      map[string]any `json:"extra,omitempty"`
}

// EventType is RowSkipped.Type.
const EventType = "row.skipped"

// Notifier records row.skipped events. Notify returns only once the event
// is durable (delivered, queued or persisted); until then the pipeline does
// not move its position past the row.
type Notifier interface {
	Notify(ctx context.Context, ev RowSkipped) error
}

// SkippedEventID is the event_id of the row.skipped event for the source
// change sourceID of pipeline: "rs-" and 32 hex digits of a SHA-256 of
// both. A source change's ID embeds its primary key, which may be
// kilobytes long and hold any character; this ID stays within what the
// row-skipped function (256 characters) and an SQS FIFO deduplication ID
// (128 characters, no spaces) accept, is the same each time the change is
// skipped again after a restart, and differs between pipelines that
// share a queue. RowSkipped.Extra["source_event_id"] keeps the change's
// own ID, the tributary-event-id header of its Kafka records.
func SkippedEventID(pipeline, sourceID string) string {
	h := sha256.New()
	h.Write([]byte(pipeline))
	h.Write([]byte{0})
	h.Write([]byte(sourceID))
	return "rs-" + hex.EncodeToString(h.Sum(nil)[:16])
}
