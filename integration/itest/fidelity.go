package itest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TopicsEnd is the sum of the topics' end offsets.
func TopicsEnd(topics []string) int64 {
	var n int64
	for _, t := range topics {
		n += TopicEnd(t)
	}
	return n
}

// debeziumVersion is the release integration/debezium/pom.xml runs.
const debeziumVersion = "3.6.1.Final"

// volatileFields are the value fields that legitimately differ between two
// connectors reading the same changes: processing and commit times (each
// connector's own clock, and Debezium's snapshot time versus ours), and the
// log coordinates, which depend on where each connector's slot started and
// on Debezium's snapshot transaction (txId, lsn and sequence of 'r' rows).
// Everything else — schemas, keys, row images, op, source.version,
// connector, name, db, schema, table, snapshot markers, xmin, origin — must
// be identical.
var volatileFields = []string{
	"payload.ts_ms", "payload.ts_us", "payload.ts_ns",
	"payload.source.ts_ms", "payload.source.ts_us", "payload.source.ts_ns",
	"payload.source.lsn", "payload.source.txId", "payload.source.sequence",
}

// Sanitize replaces every volatile field of a decoded value with a marker.
func Sanitize(v any) any { return sanitizeFields(v, volatileFields) }

// sanitizeFields replaces each of fields ("payload.source.ts_ms", …) of a
// decoded value with a marker.
func sanitizeFields(v any, fields []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for _, path := range fields {
		parts := strings.Split(path, ".")
		cur := m
		for i, p := range parts {
			if i == len(parts)-1 {
				if _, ok := cur[p]; ok {
					cur[p] = "<volatile>"
				}
				break
			}
			next, ok := cur[p].(map[string]any)
			if !ok {
				break
			}
			cur = next
		}
	}
	return m
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

// CreateSinglePartitionTopics makes the topics before Tributary does, with one
// partition each, so that the topic's order is the connector's order and
// can be compared with Debezium's message by message.
func CreateSinglePartitionTopics(t *testing.T, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, topics...)
	if err != nil {
		t.Fatalf("create topics: %v", err)
	}
	for _, r := range resp.Sorted() {
		if r.Err != nil {
			t.Fatalf("create topic %s: %v", r.Topic, r.Err)
		}
	}
}

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
// connector on e's database with its own slot and publication, stopping
// after max records (0: when stopped). extra lines are added to the
// connector's properties (a later line wins).
func StartDebezium(t *testing.T, e *Env, out string, max int, extra ...string) *DebeziumProc {
	t.Helper()
	props := fmt.Sprintf(`connector.class=io.debezium.connector.postgresql.PostgresConnector
database.hostname=127.0.0.1
database.port=5432
database.user=postgres
database.password=postgres
database.dbname=%s
topic.prefix=%s
plugin.name=pgoutput
slot.name=dbz_%s
publication.name=dbz_%s
harness.max.records=%d
harness.max.runtime.ms=170000
`, e.DB, e.Prefix, e.Name, e.Name, max)
	return runDebezium(t, e.Dir, "", props+strings.Join(extra, ""), out)
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
// its topic, key and value as JSON text ("null" for none), and whether it
// is a Kafka tombstone.
type DebeziumLine struct {
	Destination string          `json:"destination"`
	Key         json.RawMessage `json:"key"`
	Value       json.RawMessage `json:"value"`
	Tombstone   bool            `json:"tombstone"`
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

// FidelityDiffs collects differences; a schema difference repeated on
// every message of a table version is reported once with a count.
type FidelityDiffs struct {
	// Sanitize masks the volatile fields of a value; nil: sanitize (PostgreSQL's).
	Sanitize func(v any) any
	Lines    []string
	seen     map[string]int // line → index in lines
	count    []int
}

func (d *FidelityDiffs) Add(topic string, i int, path, dbz, trib string) {
	line := fmt.Sprintf("%s %s\n      debezium:  %s\n      tributary: %s", topic, path, dbz, trib)
	if strings.Contains(path, ".schema") {
		if j, ok := d.seen[line]; ok {
			d.count[j]++
			return
		}
	}
	if d.seen == nil {
		d.seen = map[string]int{}
	}
	d.seen[line] = len(d.Lines)
	d.Lines = append(d.Lines, fmt.Sprintf("#%d ", i)+line)
	d.count = append(d.count, 1)
}

func (d *FidelityDiffs) String() string {
	var b strings.Builder
	for i, l := range d.Lines {
		if i == 60 {
			fmt.Fprintf(&b, "... and %d more\n", len(d.Lines)-i)
			break
		}
		b.WriteString("  ")
		b.WriteString(l)
		if d.count[i] > 1 {
			fmt.Fprintf(&b, "\n      (same in %d messages)", d.count[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (d *FidelityDiffs) compareTopic(topic string, dbz, trib []RawRecord) {
	if len(dbz) != len(trib) {
		d.Add(topic, -1, "count", fmt.Sprintf("%d messages %s", len(dbz), summary(dbz)), fmt.Sprintf("%d messages %s", len(trib), summary(trib)))
	}
	for i := 0; i < len(dbz) && i < len(trib); i++ {
		d.compare(topic, i, "key", dbz[i].Key, trib[i].Key)
		clean := d.Sanitize
		if clean == nil {
			clean = Sanitize
		}
		d.compare(topic, i, "value", clean(dbz[i].Value), clean(trib[i].Value))
	}
}

// summary lists the ops of records ("r r c u d ∅") to explain a count mismatch.
func summary(recs []RawRecord) string {
	var ops []string
	for _, r := range recs {
		op := "∅"
		if m, ok := r.Value.(map[string]any); ok {
			if p, ok := m["payload"].(map[string]any); ok {
				op, _ = p["op"].(string)
			}
		}
		ops = append(ops, op)
	}
	return "[" + strings.Join(ops, " ") + "]"
}

// compare walks two decoded JSON values and records each difference by path.
func (d *FidelityDiffs) compare(topic string, i int, path string, a, b any) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			d.Add(topic, i, path, brief(a), brief(b))
			return
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				d.Add(topic, i, path+"."+k, "(absent)", brief(y))
			case !inB:
				d.Add(topic, i, path+"."+k, brief(x), "(absent)")
			default:
				d.compare(topic, i, path+"."+k, x, y)
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok {
			d.Add(topic, i, path, brief(a), brief(b))
			return
		}
		// Schema field lists: name elements by their "field" for a readable path.
		for j := 0; j < len(av) || j < len(bv); j++ {
			label := fmt.Sprintf("[%d]", j)
			if j < len(av) {
				if m, ok := av[j].(map[string]any); ok && m["field"] != nil {
					label = fmt.Sprintf("[%v]", m["field"])
				}
			}
			switch {
			case j >= len(av):
				d.Add(topic, i, path+label, "(absent)", brief(bv[j]))
			case j >= len(bv):
				d.Add(topic, i, path+label, brief(av[j]), "(absent)")
			default:
				d.compare(topic, i, path+label, av[j], bv[j])
			}
		}
	default:
		if !reflect.DeepEqual(a, b) {
			d.Add(topic, i, path, brief(a), brief(b))
		}
	}
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
