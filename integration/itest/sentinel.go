package itest

import (
	"fmt"
	"testing"
	"time"
)

// SentinelTable is created by tests that use awaitSentinel, before the
// pipeline first starts (so that it is published).
const SentinelTable = `CREATE TABLE sentinel (id int PRIMARY KEY)`

// AwaitSentinel commits sentinel row id and waits until p published it.
// The pipeline hands records to the producer in commit order, so then
// everything committed before is handed over too, and a SIGTERM (which
// flushes) delivers it: unlike waiting for a quiet topic, this cannot
// mistake a pipeline still waiting for its lease for one caught up.
func (e *Env) AwaitSentinel(p *Proc, id int) {
	e.T.Helper()
	e.Exec(`INSERT INTO sentinel VALUES ($1)`, id)
	AwaitKey(e.T, p, e.Prefix+".public.sentinel", "id", id)
}

// AwaitBackendSentinel is awaitSentinel on any backend, whose sentinel
// table is b.createTable("sentinel").
func AwaitBackendSentinel(t *testing.T, b Backend, p *Proc, id int) {
	t.Helper()
	if err := b.Exec(fmt.Sprintf(`INSERT INTO sentinel (k, seq) VALUES (%d, %d)`, id, id)); err != nil {
		t.Fatal(err)
	}
	AwaitKey(t, p, b.Topic("sentinel"), "k", id)
}

// AwaitKey waits until p published a row of topic whose column is id.
func AwaitKey(t *testing.T, p *Proc, topic, column string, id int) {
	t.Helper()
	p.WaitFor(t, 120*time.Second, fmt.Sprintf("sentinel row %d", id), func() bool {
		if TopicEnd(topic) == 0 {
			return false
		}
		for _, m := range ReadTopic(t, topic) {
			if pl := m.Payload(); pl != nil {
				if after, ok := pl["after"].(map[string]any); ok && after[column] == float64(id) {
					return true
				}
			}
		}
		return false
	})
}

// AwaitSentinelCommitted is awaitSentinel for a transactional topic.
func (e *Env) AwaitSentinelCommitted(p *Proc, id int) {
	e.T.Helper()
	e.Exec(`INSERT INTO sentinel VALUES ($1)`, id)
	topic := e.Prefix + ".public.sentinel"
	p.WaitFor(e.T, 120*time.Second, fmt.Sprintf("sentinel row %d committed", id), func() bool {
		if TopicEnd(topic) == 0 {
			return false
		}
		for _, m := range ReadCommitted(e.T, topic) {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after["id"] == float64(id) {
				return true
			}
		}
		return false
	})
}

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

// PGCaughtUp commits row id into the sentinel table (which must be
// captured) and waits until p published it: everything committed before
// is then handed to the producer, and a SIGTERM delivers it.
func (e *Env) PGCaughtUp(p *Proc, id int) {
	e.T.Helper()
	e.Exec(`INSERT INTO sentinel VALUES ($1)`, id)
	topic := e.Prefix + ".public.sentinel"
	p.WaitFor(e.T, 120*time.Second, fmt.Sprintf("sentinel row %d", id), func() bool {
		for _, m := range ReadTopicIfAny(e.T, topic) {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after["id"] == float64(id) {
				return true
			}
		}
		return false
	})
}
