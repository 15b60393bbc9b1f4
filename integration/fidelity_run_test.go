package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sideBySide is one run of the Debezium fidelity tests: real Debezium and
// Tributary read the same database, and every key and value they write
// must be identical outside the volatile fields.
type sideBySide struct {
	e    *env
	exec func(sql string) // on the test's database
	// snapshot is applied before either side starts, stream once both
	// have published the snapshot.
	snapshot, stream []fidelityStep
	topics           []string // the compared topics, created by the test
	// debezium starts Debezium writing to out, stopping after want records.
	debezium func(out string, want int) *debeziumProc
	config   string // Tributary's pipeline config
	// snapshotWait bounds the wait for both snapshots, streamWait that for
	// the stream.
	snapshotWait, streamWait time.Duration
	mariadb                  bool // the peer is Debezium's MariaDB connector
}

// run runs both sides, compares them topic by topic and fails the test on
// any difference or a message count other than the steps add up to. It
// returns Tributary's output.
func (s sideBySide) run(t *testing.T) string {
	t.Helper()
	for _, st := range s.snapshot {
		s.exec(st.sql)
	}
	want := 0
	for _, st := range append(append([]fidelityStep(nil), s.snapshot...), s.stream...) {
		want += st.events
	}

	// Debezium snapshots one table after another, and its snapshot
	// markers (first, last_in_data_collection, last) follow that order:
	// Tributary reads one table at a time too here, to be compared record
	// by record.
	oneTableAtATime(t, s.config)

	dbzOut := filepath.Join(s.e.dir, "debezium.jsonl")
	dbz := s.debezium(dbzOut, want)
	p := s.e.start("run", "--config", s.config)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tributary output:\n%s", p.out)
		}
	})

	// Changes start once both have read the snapshot (their slots exist by then).
	snapWant := len(s.snapshot)
	waitFor(t, s.snapshotWait, "both snapshots", func() bool {
		if dbz.exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.out)
		}
		if p.exited() {
			t.Fatalf("tributary exited early:\n%s", p.out)
		}
		return countLines(dbzOut) >= snapWant && topicsEnd(s.topics) >= int64(snapWant)
	})
	for _, st := range s.stream {
		s.exec(st.sql)
	}
	deadline := time.Now().Add(s.streamWait)
	for time.Now().Before(deadline) && !(countLines(dbzOut) >= want && topicsEnd(s.topics) >= int64(want)) {
		if p.exited() {
			t.Fatalf("tributary exited:\n%s", p.out)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM; output:\n%s", code, p.out)
	}
	dbz.stop()

	dbzRecs := readDebeziumOutput(t, dbzOut)
	var diffs fidelityDiffs
	peer := "Debezium " + debeziumVersion
	ignored := strings.Join(volatileFields, ", ")
	if s.mariadb {
		diffs.sanitize = sanitizeMySQL
		peer = "Debezium's MariaDB connector " + mariadbPeerVersion
		ignored = strings.Join(mysqlVolatileFields, ", ") + "; in 'r' messages also " + strings.Join(mysqlSnapshotVolatileFields, ", ")
	}
	for _, topic := range s.topics {
		var d []rawRecord
		for _, r := range dbzRecs {
			if r.topic == topic {
				d = append(d, r)
			}
		}
		trib := readTopicRaw(t, topic)
		keepFidelityOutput(t, topic, d, trib)
		if s.mariadb {
			checkSourceVersions(&diffs, topic, d, trib)
		}
		diffs.compareTopic(topic, d, trib)
	}
	if len(dbzRecs) != want {
		diffs.add("", -1, "count", fmt.Sprintf("%d records", len(dbzRecs)), fmt.Sprintf("%d expected by the test script", want))
	}
	t.Logf("compared %d records with %s: %d difference(s)", len(dbzRecs), peer, len(diffs.lines))
	if len(diffs.lines) > 0 {
		t.Errorf("Tributary differs from %s (%d difference(s); volatile fields ignored: %s):\n%s",
			peer, len(diffs.lines), ignored, diffs.String())
	}
	return p.out.String()
}

// oneTableAtATime sets snapshot_parallelism 1 in the pipeline config at
// path: Debezium snapshots one table after another, and its snapshot
// markers (first, last_in_data_collection, last) follow that order.
func oneTableAtATime(t *testing.T, path string) {
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

// startMariaDBDebezium runs Debezium's MariaDB connector on e's database
// (but Tributary's watermark table, tributary_signal, which a user would
// leave out of Debezium's capture too), stopping after max records (0: when
// stopped); extra lines are added to the properties (a later line wins).
// The server id is random so that tests running at once do not take each
// other's binlog connection.
func startMariaDBDebezium(t *testing.T, e *myEnv, out string, max int, extra ...string) *debeziumProc {
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
`, 5_400_000+rand.IntN(200_000), e.db, e.db, e.prefix,
		filepath.Join(e.dir, "debezium-history.dat"), filepath.Join(e.dir, "debezium-offsets.dat"), max)
	return runDebezium(t, e.dir, "mariadb", props+strings.Join(extra, ""), out)
}
