package itest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// debeziumVersion is the release integration/debezium/pom.xml runs.
const debeziumVersion = "3.6.1.Final"

// DebeziumProc is a running integration/debezium harness.
type DebeziumProc struct {
	cmd  *exec.Cmd
	Out  *SyncBuffer
	done chan struct{}
}

func (d *DebeziumProc) Exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

func (d *DebeziumProc) Stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// StartDebezium builds the harness if needed and runs Debezium's PostgreSQL
// connector (PostgresDebeziumProps) on e's database, stopping after max
// records (0: when stopped). extra lines are added to the connector's
// properties (a later line wins).
func StartDebezium(t *testing.T, e *Env, out string, max int, extra ...string) *DebeziumProc {
	t.Helper()
	harness := fmt.Sprintf("harness.max.records=%d\nharness.max.runtime.ms=170000\n", max)
	return runDebezium(t, e.Dir, "", PostgresDebeziumProps(e, append([]string{harness}, extra...)...), out)
}

// PostgresDebeziumProps are the properties of Debezium's PostgreSQL
// connector on e's database, with its own slot and publication, followed
// by the extra lines (a later line wins): what every harness that runs
// that connector starts from. Tributary's snapshot watermarks (logical
// decoding messages with the prefix "tributary") are left out: Debezium
// would publish them to <prefix>.message, and a Tributary pipeline beside
// it would use up the harness's max records.
func PostgresDebeziumProps(e *Env, extra ...string) string {
	return fmt.Sprintf(`connector.class=io.debezium.connector.postgresql.PostgresConnector
database.hostname=127.0.0.1
database.port=5432
database.user=postgres
database.password=postgres
database.dbname=%s
topic.prefix=%s
plugin.name=pgoutput
slot.name=dbz_%s
publication.name=dbz_%s
message.prefix.exclude.list=tributary
`, e.DB, e.Prefix, e.Name, e.Name) + strings.Join(extra, "")
}

// runDebezium builds the harness (and the jar set jars, "" for the main
// one; see integration/debezium/README.md) if needed, writes props to a
// file in dir and runs the harness on it, writing records to out. The
// harness is killed at the end of the test; its output is logged when the
// test failed.
func runDebezium(t *testing.T, dir, jars, props, out string) *DebeziumProc {
	t.Helper()
	hdir, err := filepath.Abs("debezium")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(hdir, "build.sh")}
	if jars != "" {
		args = append(args, jars)
	}
	if b, err := exec.Command("bash", args...).CombinedOutput(); err != nil {
		t.Fatalf("integration/debezium/build.sh: %v\n%s", err, b)
	}
	propsFile := filepath.Join(dir, "debezium.properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &DebeziumProc{cmd: exec.Command("bash", filepath.Join(hdir, "run.sh"), propsFile, out), Out: &SyncBuffer{}, done: make(chan struct{})}
	d.cmd.Env = append(os.Environ(), "DEBEZIUM_JARS="+jars)
	d.cmd.Stdout, d.cmd.Stderr = d.Out, d.Out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		if !d.Exited() {
			d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			var keep []string
			for _, l := range strings.Split(d.Out.String(), "\n") {
				if !strings.HasPrefix(strings.TrimSpace(l), "at ") {
					keep = append(keep, l)
				}
			}
			t.Logf("debezium harness output (stack frames left out):\n%s", strings.Join(keep, "\n"))
		}
	})
	return d
}

func CountLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte{'\n'})
}

// RawRecord is one key/value pair, decoded with json.Number so that int64
// values and Java's number formatting survive.
type RawRecord struct {
	Topic string
	Key   any // nil: no key
	Value any // nil: tombstone
}

func decodeJSON(b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// DebeziumLine is one record the Debezium harness wrote (Harness.java):
// its topic, key and value as JSON text ("null" for none), whether it is a
// Kafka tombstone, and its headers in order, as a Connect worker's default
// header converter (SimpleHeaderConverter) writes them.
type DebeziumLine struct {
	Destination string           `json:"destination"`
	Key         json.RawMessage  `json:"key"`
	Value       json.RawMessage  `json:"value"`
	Tombstone   bool             `json:"tombstone"`
	Headers     []DebeziumHeader `json:"headers"`
}

// DebeziumHeader is one header of a DebeziumLine: its bytes as UTF-8
// text, nil for a header without a value.
type DebeziumHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

// EachDebeziumLine calls fn with every record of the harness's output file.
func EachDebeziumLine(t *testing.T, path string, fn func(DebeziumLine)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("debezium output: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line DebeziumLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("debezium output line: %v", err)
		}
		fn(line)
	}
}

func ReadDebeziumOutput(t *testing.T, path string) []RawRecord {
	t.Helper()
	var recs []RawRecord
	EachDebeziumLine(t, path, func(line DebeziumLine) {
		r := RawRecord{Topic: line.Destination}
		if string(line.Key) != "null" {
			r.Key, _ = decodeJSON(line.Key)
		}
		if string(line.Value) != "null" {
			r.Value, _ = decodeJSON(line.Value)
		}
		recs = append(recs, r)
	})
	return recs
}

// mariadbPeerVersion is the Debezium release of the MariaDB side-by-side
// test: integration/debezium/mariadb/pom.xml. The MariaDB connector is not
// on Maven Central for 3.6.x (newest: 3.5.0.Final) and the 3.6.1 MySQL
// connector refuses MariaDB, so the peer is the newest MariaDB connector
// there is; its source.version ("3.5.0.Final" where we write
// debeziumVersion) is the one expected difference, checked and then masked.
const mariadbPeerVersion = "3.5.0.Final"

// StartMariaDBDebezium runs Debezium's MariaDB connector
// (MariaDBDebeziumProps) on e's database with its offsets in a file of
// e's, stopping after max records (0: when stopped); extra lines are
// added to the properties (a later line wins).
func StartMariaDBDebezium(t *testing.T, e *MyEnv, out string, max int, extra ...string) *DebeziumProc {
	t.Helper()
	harness := fmt.Sprintf(`offset.storage=org.apache.kafka.connect.storage.FileOffsetBackingStore
offset.storage.file.filename=%s
harness.max.records=%d
harness.max.runtime.ms=110000
`, filepath.Join(e.Dir, "debezium-offsets.dat"), max)
	return runDebezium(t, e.Dir, "mariadb", MariaDBDebeziumProps(e, append([]string{harness}, extra...)...), out)
}

// MariaDBDebeziumProps are the properties of Debezium's MariaDB connector
// on e's database, its schema history in a file of e's, followed by the
// extra lines (a later line wins): what every harness that runs that
// connector starts from. Tributary's watermark table, tributary_signal,
// is left out, as a user would leave it out of Debezium's capture too;
// the schema history keeps that database's tables only (another test's
// table Debezium cannot parse failed its snapshot); and DDL its parser
// cannot read is skipped (another test's INET6 table stopped its stream).
// The server id is random so that tests running at once do not take each
// other's binlog connection.
func MariaDBDebeziumProps(e *MyEnv, extra ...string) string {
	return fmt.Sprintf(`connector.class=io.debezium.connector.mariadb.MariaDbConnector
database.hostname=127.0.0.1
database.port=3306
database.user=root
database.password=root
database.server.id=%d
database.include.list=%s
schema.history.internal.store.only.captured.databases.ddl=true
schema.history.internal.skip.unparseable.ddl=true
table.exclude.list=%s.tributary_signal
topic.prefix=%s
include.schema.changes=false
schema.history.internal=io.debezium.storage.file.history.FileSchemaHistory
schema.history.internal.file.filename=%s
`, 5_400_000+rand.IntN(400_000), e.DB, e.DB, e.Prefix, filepath.Join(e.Dir, "debezium-history.dat")) + strings.Join(extra, "")
}
