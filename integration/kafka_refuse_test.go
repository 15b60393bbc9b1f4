package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// refuseWrites makes topic refuse every write (on) or take them again: the
// broker refuses a record whose timestamp is older than its own clock by
// more than the topic's message.timestamp.before.max.ms, here 0, and the
// producer stamps a record when it sends it (linger included), so each one
// is refused with INVALID_TIMESTAMP until the setting is removed. It is
// the one refusal of one topic that this suite's single real broker
// produces on demand: a min.insync.replicas above the replication factor
// does not refuse writes (Kafka 4 caps it at the replica count, see
// exactlyonce_failed_test.go), and MESSAGE_TOO_LARGE skips records.
func refuseWrites(t *testing.T, adm *kadm.Client, topic string, on bool) {
	t.Helper()
	zero := "0"
	c := kadm.AlterConfig{Op: kadm.SetConfig, Name: "message.timestamp.before.max.ms", Value: &zero}
	if !on {
		c = kadm.AlterConfig{Op: kadm.DeleteConfig, Name: c.Name}
	}
	rs, err := adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{c}, topic)
	if err == nil {
		_, err = rs.On(topic, nil)
	}
	if err != nil {
		t.Errorf("%s: set message.timestamp.before.max.ms (refuse %v): %v", topic, on, err)
	}
}

// TestTopicRefusingWritesStalls: one topic refuses every write for 15 s
// (refuseWrites) while the pipeline streams into it and into another. The
// task must ride it as a stall (cmd/tributary/stall.go: retry from the
// checkpoint), not exit as for a poison record, and once the topic takes
// writes again publish every row, none skipped. It used to exit: franz-go
// does not retry INVALID_TIMESTAMP, and kafka.IsStall did not count it.
func TestTopicRefusingWritesStalls(t *testing.T) {
	e := newEnv(t, "refuse")
	cfg, topic := e.oneRowAndSentinel()
	p := e.start("run", "--config", cfg)
	e.awaitSentinel(p, 1)
	defer p.stop(t)

	adm := newAdmin(t)
	refuseWrites(t, adm, topic, true)
	time.Sleep(time.Second) // the broker applies a topic's new config within a moment
	const rows = 200
	e.exec(`INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, $1::int) g`, rows)
	time.Sleep(15 * time.Second)
	if p.exited() {
		t.Fatalf("the task exited while one topic refused writes (a stall, not a poison record); output:\n%s", tail(p.out.String(), 3000))
	}
	refuseWrites(t, adm, topic, false)
	waitOrDump(t, p, 120*time.Second, "every row once the topic takes writes again", func() bool { return len(finalState(t, topic)) == rows+1 })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, tail(p.out.String(), 3000))
	}
	if n := len(readSkipped(t, e)); n > 0 {
		t.Errorf("%d row.skipped records for rows a topic refused for a while", n)
	}
}
