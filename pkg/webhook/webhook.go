// Package webhook defines the row.skipped event, the Notifier that records
// it durably before a pipeline moves past the row, and Standard Webhooks
// signing for delivering it over HTTP.
package webhook

import (
	"context"
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
