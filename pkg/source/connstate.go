package source

import (
	"sync"
	"time"
)

// Connection states a Reconnecting source reports (ConnState.State).
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

// connRecord keeps a Reconnecting's ConnState.
type connRecord struct {
	mu sync.Mutex
	st ConnState
}

func (c *connRecord) set(state string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st.State != state {
		c.st.State, c.st.Since = state, now.UTC()
	}
}

func (c *connRecord) failed(err error, class string, attempts int64, window time.Duration, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.LastError, c.st.LastErrorClass, c.st.LastErrorAt = err.Error(), class, now.UTC()
	c.st.Attempts, c.st.OutageWindow = attempts, window.String()
}

func (c *connRecord) get() ConnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	if st.State == "" {
		st.State = ConnConnecting
	}
	return st
}
