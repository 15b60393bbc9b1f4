package delivery_test

// TestExactlyOnceKeylessBackfillAtLeastOnce: a table without a key
// (REPLICA IDENTITY FULL, no primary key) has no key to resume its
// backfill after, so after a crash its backfill starts again from its
// first row (docs/snapshots.md), and under exactly_once the rows committed
// before the crash reach read_committed consumers twice; docs/exactly-once.md
// says so. An exactly-once pipeline is SIGKILLed right after a Kafka
// transaction committed during such a backfill: no row may be missing,
// and rows are read twice, as docs/exactly-once.md says.

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestExactlyOnceKeylessBackfillAtLeastOnce(t *testing.T) {
	e := itest.NewEnv(t, "rvkeyless")
	const rows = 6000
	e.Exec(`CREATE TABLE logs (n int NOT NULL, msg text)`)
	e.Exec(`ALTER TABLE logs REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO logs SELECT g, 'm' FROM generate_series(1, $1::int) g`, rows)
	e.Exec(itest.SentinelTable)
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.logs, public.sentinel]\n  snapshot_parallelism: 1\n",
		Checkpoint: "  path: " + e.Dir + "/checkpoints\n" + itest.ExactlyOnceLines + "transactions:\n  max_records: 1000\n"})
	chunks := []string{"TRIBUTARY_SNAPSHOT_CHUNK_ROWS=1000"}
	p := e.StartWith(append(chunks, "TRIBUTARY_TEST_CRASH=after-txn-commit:3"), "run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(90 * time.Second):
		t.Fatalf("crash point not reached; output:\n%s", p.Out)
	}
	if !p.KilledBy(syscall.SIGKILL) {
		t.Fatalf("ended with %v, not its own SIGKILL; output:\n%s", p.Err, p.Out)
	}
	p = e.StartWith(chunks, "run", "--config", cfg)
	// The restarted backfill reads the table again from its first row; it
	// is over when the engine says the table is done.
	itest.WaitOrDump(t, p, 90*time.Second, "the keyless backfill to finish", func() bool {
		for _, line := range strings.Split(p.Out.String(), "\n") {
			if strings.Contains(line, `"msg":"snapshot: table done"`) && strings.Contains(line, `"table":"public.logs"`) {
				return true
			}
		}
		return false
	})
	e.AwaitSentinelCommitted(p, 1)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	seen := map[int]int{}
	itest.EachRawRecordWithin(t, e.Prefix+".public.logs", 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}, func(r *kgo.Record) {
		var v struct {
			Payload struct {
				After *struct{ N int } `json:"after"`
			} `json:"payload"`
		}
		if r.Value != nil && json.Unmarshal(r.Value, &v) == nil && v.Payload.After != nil {
			seen[v.Payload.After.N]++
		}
	})
	missing, extra := 0, 0
	for n := 1; n <= rows; n++ {
		switch c := seen[n]; {
		case c == 0:
			missing++
		case c > 1:
			extra += c - 1
		}
	}
	t.Logf("keyless backfill, one SIGKILL after a commit: read_committed %d missing, %d extra reads of %d rows", missing, extra, rows)
	if missing > 0 {
		t.Fatalf("%d of %d rows missing for a read_committed consumer", missing, rows)
	}
	if extra == 0 {
		t.Fatalf("no row read twice: the restarted keyless backfill was expected to publish again what the killed run committed (docs/exactly-once.md); was the SIGKILL after a commit of backfill rows?")
	}
}
