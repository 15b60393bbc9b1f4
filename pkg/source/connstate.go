package source

import "time"

// Connection states the capture loop reports (ConnState.State,
// pkg/capture/reconnect.go).
const (
	ConnConnecting   = "connecting"   // started, nothing read yet
	ConnStreaming    = "streaming"    // connected: reading rows or the log
	ConnReconnecting = "reconnecting" // lost, retrying within the outage window
)

// ConnState is the source connection as the running process sees it; the
// pipeline's live status record (pkg/status) carries it, so `status` and
// the status page show a pipeline that is riding out an outage as such.
type ConnState struct {
	State string    `json:"state"`
	Since time.Time `json:"since"` // when it entered State
	// Attempts counts the failed connection attempts of the current
	// outage (while streaming: of the last one).
	Attempts int64 `json:"attempts,omitempty"`
	// OutageWindow is how long the outage may last before the process
	// exits 1 (source.outage_window).
	OutageWindow string `json:"outage_window,omitempty"`
	// LastError is the last connection error, with its class (retriable
	// or fatal) and time.
	LastError      string    `json:"last_error,omitempty"`
	LastErrorClass string    `json:"last_error_class,omitempty"`
	LastErrorAt    time.Time `json:"last_error_at,omitzero"`
}
