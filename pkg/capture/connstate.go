package capture

import (
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// connRecord keeps the reconnect loop's source.ConnState.
type connRecord struct {
	mu sync.Mutex
	st source.ConnState
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

func (c *connRecord) get() source.ConnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	if st.State == "" {
		st.State = source.ConnConnecting
	}
	return st
}
