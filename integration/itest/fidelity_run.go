package itest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// StartMariaDBDebezium runs Debezium's MariaDB connector on e's database
// (but Tributary's watermark table, tributary_signal, which a user would
// leave out of Debezium's capture too), stopping after max records (0: when
// stopped); extra lines are added to the properties (a later line wins).
// The server id is random so that tests running at once do not take each
// other's binlog connection.
func StartMariaDBDebezium(t *testing.T, e *MyEnv, out string, max int, extra ...string) *DebeziumProc {
	t.Helper()
	props := fmt.Sprintf(`connector.class=io.debezium.connector.mariadb.MariaDbConnector
database.hostname=127.0.0.1
database.port=3306
database.user=root
database.password=root
database.server.id=%d
database.include.list=%s
table.exclude.list=%s.tributary_signal
topic.prefix=%s
include.schema.changes=false
schema.history.internal=io.debezium.storage.file.history.FileSchemaHistory
schema.history.internal.file.filename=%s
offset.storage=org.apache.kafka.connect.storage.FileOffsetBackingStore
offset.storage.file.filename=%s
harness.max.records=%d
harness.max.runtime.ms=110000
`, 5_400_000+rand.IntN(200_000), e.DB, e.DB, e.Prefix,
		filepath.Join(e.Dir, "debezium-history.dat"), filepath.Join(e.Dir, "debezium-offsets.dat"), max)
	return runDebezium(t, e.Dir, "mariadb", props+strings.Join(extra, ""), out)
}
