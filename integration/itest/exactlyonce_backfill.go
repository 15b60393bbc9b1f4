package itest

import (
	"fmt"
	"testing"
	"time"
)

// AwaitBackendSentinelCommitted is awaitBackendSentinel for a
// transactional topic: it waits until a read_committed consumer sees the
// row.
func AwaitBackendSentinelCommitted(t *testing.T, b Backend, p *Proc, id int) {
	t.Helper()
	MustExecOn(t, b, fmt.Sprintf(`INSERT INTO sentinel (k, seq) VALUES (%d, %d)`, id, id))
	topic := b.Topic("sentinel")
	p.WaitFor(t, 120*time.Second, fmt.Sprintf("sentinel row %d committed", id), func() bool {
		if TopicEnd(topic) == 0 {
			return false
		}
		for _, m := range ReadCommitted(t, topic) {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after["k"] == float64(id) {
				return true
			}
		}
		return false
	})
}
