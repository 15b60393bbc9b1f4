package kafka_test

import (
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestTopicRefusingWritesStalls: one topic refuses every write for 15 s
// (refuseWrites) while the pipeline streams into it and into another. The
// task must ride it as a stall (cmd/tributary/stall.go: retry from the
// checkpoint), not exit as for a poison record, and once the topic takes
// writes again publish every row, none skipped. It used to exit: franz-go
// does not retry INVALID_TIMESTAMP, and kafka.IsStall did not count it.
func TestTopicRefusingWritesStalls(t *testing.T) {
	e := itest.NewEnv(t, "refuse")
	cfg, topic := e.OneRowAndSentinel()
	p := e.Start("run", "--config", cfg)
	e.AwaitSentinel(p, 1)
	defer p.Stop(t)

	adm := itest.NewAdmin(t)
	itest.RefuseWrites(t, adm, topic, true)
	time.Sleep(time.Second) // the broker applies a topic's new config within a moment
	const rows = 200
	e.Exec(`INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, $1::int) g`, rows)
	time.Sleep(15 * time.Second)
	if p.Exited() {
		t.Fatalf("the task exited while one topic refused writes (a stall, not a poison record); output:\n%s", itest.Tail(p.Out.String(), 3000))
	}
	itest.RefuseWrites(t, adm, topic, false)
	itest.WaitOrDump(t, p, 120*time.Second, "every row once the topic takes writes again", func() bool { return len(itest.FinalState(t, topic)) == rows+1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, itest.Tail(p.Out.String(), 3000))
	}
	if n := len(itest.ReadSkipped(t, e)); n > 0 {
		t.Errorf("%d row.skipped records for rows a topic refused for a while", n)
	}
}
