package itest

import (
	"fmt"
	"testing"
	"time"
)

// SentinelTable is created by tests that use AwaitSentinel, before the
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

// AwaitBackendSentinel is AwaitSentinel on any backend, whose sentinel
// table is b.CreateTable("sentinel").
func AwaitBackendSentinel(t *testing.T, b Backend, p *Proc, id int) {
	t.Helper()
	MustExecOn(t, b, fmt.Sprintf(`INSERT INTO sentinel (k, seq) VALUES (%d, %d)`, id, id))
	AwaitKey(t, p, b.Topic("sentinel"), "k", id)
}

// AwaitKey waits until p published a row of topic whose column is id.
func AwaitKey(t *testing.T, p *Proc, topic, column string, id int) {
	t.Helper()
	awaitRow(t, p, fmt.Sprintf("sentinel row %d", id), topic, column, id, func() []Message { return ReadTopic(t, topic) })
}

// AwaitKeyCommitted is AwaitKey for a transactional topic: it waits until
// a read_committed consumer sees the row.
func AwaitKeyCommitted(t *testing.T, p *Proc, topic, column string, id int) {
	t.Helper()
	awaitRow(t, p, fmt.Sprintf("sentinel row %d committed", id), topic, column, id, func() []Message {
		var msgs []Message
		for _, m := range ReadCommitted(t, topic) {
			msgs = append(msgs, m.Message)
		}
		return msgs
	})
}

// awaitRow waits until the messages read returns (all of topic) hold a
// row whose column is id.
func awaitRow(t *testing.T, p *Proc, what, topic, column string, id int, read func() []Message) {
	t.Helper()
	p.WaitFor(t, 120*time.Second, what, func() bool {
		if TopicEnd(topic) == 0 {
			return false
		}
		for _, m := range read() {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after[column] == float64(id) {
				return true
			}
		}
		return false
	})
}

// AwaitSentinelCommitted is AwaitSentinel for a transactional topic.
func (e *Env) AwaitSentinelCommitted(p *Proc, id int) {
	e.T.Helper()
	e.Exec(`INSERT INTO sentinel VALUES ($1)`, id)
	AwaitKeyCommitted(e.T, p, e.Prefix+".public.sentinel", "id", id)
}

// AwaitBackendSentinelCommitted is AwaitBackendSentinel for a
// transactional topic.
func AwaitBackendSentinelCommitted(t *testing.T, b Backend, p *Proc, id int) {
	t.Helper()
	MustExecOn(t, b, fmt.Sprintf(`INSERT INTO sentinel (k, seq) VALUES (%d, %d)`, id, id))
	AwaitKeyCommitted(t, p, b.Topic("sentinel"), "k", id)
}

// PGCaughtUp is AwaitSentinel: once p published sentinel row id,
// everything committed before is handed to the producer, and a SIGTERM
// delivers it. (The sentinel table must be captured.)
func (e *Env) PGCaughtUp(p *Proc, id int) {
	e.T.Helper()
	e.AwaitSentinel(p, id)
}
