package itest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// SideBySide is one run of the Debezium fidelity tests: real Debezium and
// Tributary read the same database, and every key and value they write
// must be identical outside the volatile fields.
type SideBySide struct {
	E    *Env
	Exec func(sql string) // on the test's database
	// Snapshot is applied before either side starts, stream once both
	// have published the snapshot.
	Snapshot, Stream []FidelityStep
	Topics           []string // the compared topics, created by the test
	// Debezium starts Debezium writing to out, stopping after want records.
	Debezium func(out string, want int) *DebeziumProc
	Config   string // Tributary's pipeline config
	// SnapshotWait bounds the wait for both snapshots, streamWait that for
	// the stream.
	SnapshotWait, StreamWait time.Duration
	Mariadb                  bool // the peer is Debezium's MariaDB connector
}

// Run runs both sides, compares them topic by topic and fails the test on
// any difference or a message count other than the steps add up to. It
// returns Tributary's output.
func (s SideBySide) Run(t *testing.T) string {
	t.Helper()
	for _, st := range s.Snapshot {
		s.Exec(st.SQL)
	}
	want := 0
	for _, st := range append(append([]FidelityStep(nil), s.Snapshot...), s.Stream...) {
		want += st.Events
	}

	// Debezium snapshots one table after another, and its snapshot
	// markers (first, last_in_data_collection, last) follow that order:
	// Tributary reads one table at a time too here, to be compared record
	// by record.
	OneTableAtATime(t, s.Config)

	dbzOut := filepath.Join(s.E.Dir, "debezium.jsonl")
	dbz := s.Debezium(dbzOut, want)
	p := s.E.Start("run", "--config", s.Config)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tributary output:\n%s", p.Out)
		}
	})

	// Changes start once both have read the snapshot (their slots exist by then).
	snapWant := len(s.Snapshot)
	WaitFor(t, s.SnapshotWait, "both snapshots", func() bool {
		if dbz.Exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.Out)
		}
		if p.Exited() {
			t.Fatalf("tributary exited early:\n%s", p.Out)
		}
		return CountLines(dbzOut) >= snapWant && TopicsEnd(s.Topics) >= int64(snapWant)
	})
	for _, st := range s.Stream {
		s.Exec(st.SQL)
	}
	deadline := time.Now().Add(s.StreamWait)
	for time.Now().Before(deadline) && !(CountLines(dbzOut) >= want && TopicsEnd(s.Topics) >= int64(want)) {
		if p.Exited() {
			t.Fatalf("tributary exited:\n%s", p.Out)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if code := p.Stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM; output:\n%s", code, p.Out)
	}
	dbz.Stop()

	dbzRecs := ReadDebeziumOutput(t, dbzOut)
	var diffs FidelityDiffs
	peer := "Debezium " + debeziumVersion
	ignored := strings.Join(volatileFields, ", ")
	if s.Mariadb {
		diffs.Sanitize = SanitizeMySQL
		peer = "Debezium's MariaDB connector " + mariadbPeerVersion
		ignored = strings.Join(mysqlVolatileFields, ", ") + "; in 'r' messages also " + strings.Join(mysqlSnapshotVolatileFields, ", ")
	}
	for _, topic := range s.Topics {
		var d []RawRecord
		for _, r := range dbzRecs {
			if r.Topic == topic {
				d = append(d, r)
			}
		}
		trib := ReadTopicRaw(t, topic)
		KeepFidelityOutput(t, topic, d, trib)
		if s.Mariadb {
			CheckSourceVersions(&diffs, topic, d, trib)
		}
		diffs.compareTopic(topic, d, trib)
	}
	if len(dbzRecs) != want {
		diffs.Add("", -1, "count", fmt.Sprintf("%d records", len(dbzRecs)), fmt.Sprintf("%d expected by the test script", want))
	}
	t.Logf("compared %d records with %s: %d difference(s)", len(dbzRecs), peer, len(diffs.Lines))
	if len(diffs.Lines) > 0 {
		t.Errorf("Tributary differs from %s (%d difference(s); volatile fields ignored: %s):\n%s",
			peer, len(diffs.Lines), ignored, diffs.String())
	}
	return p.Out.String()
}

// OneTableAtATime sets snapshot_parallelism 1 in the pipeline config at
// path: Debezium snapshots one table after another, and its snapshot
// markers (first, last_in_data_collection, last) follow that order.
func OneTableAtATime(t *testing.T, path string) {
	t.Helper()
	cfg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	one := strings.Replace(string(cfg), "\nsource:\n", "\nsource:\n  snapshot_parallelism: 1\n", 1)
	if one == string(cfg) {
		t.Fatalf("no source section in %s:\n%s", path, cfg)
	}
	if err := os.WriteFile(path, []byte(one), 0o600); err != nil {
		t.Fatal(err)
	}
}

type FidelityStep struct {
	SQL    string
	Events int
}

// ToastText is a value large and random enough to be stored out of line
// (TOASTed), so an update that leaves it alone does not send it.
const ToastText = `(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 400) g)`

// A row is column → SQL expression.
type FidelityRow map[string]string

func FidelityInsert(table string, r FidelityRow) string {
	cols := make([]string, 0, len(r))
	for c := range r {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = r[c]
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), strings.Join(vals, ", "))
}

// TryExec runs sql and reports whether it worked (for optional extensions).
func (e *Env) TryExec(sql string) bool {
	_, err := e.Conn.Exec(context.Background(), sql)
	if err != nil {
		e.T.Logf("%s: %v (skipping what needs it)", sql, err)
	}
	return err == nil
}

// ReadTopicRaw reads a one-partition topic from the start to its end.
func ReadTopicRaw(t *testing.T, topic string) []RawRecord {
	t.Helper()
	n := TopicEnd(topic)
	if n == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []RawRecord
	for int64(len(recs)) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: got %d of %d records", topic, len(recs), n)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) {
			k, err := decodeJSON(r.Key)
			if err != nil {
				t.Fatalf("%s offset %d: key is not JSON: %v", topic, r.Offset, err)
			}
			v, err := decodeJSON(r.Value)
			if err != nil {
				t.Fatalf("%s offset %d: value is not JSON: %v", topic, r.Offset, err)
			}
			recs = append(recs, RawRecord{Topic: topic, Key: k, Value: v})
		})
	}
	return recs
}
