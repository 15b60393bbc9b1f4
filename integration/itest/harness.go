package itest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	PGAdminURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	KafkaAddr  = "127.0.0.1:9092"
)

var Binary string // the tributary binary under test, built once

// Main is the TestMain of every integration test package: it builds the
// binary under test once, runs the tests from integration/ (the scripts of
// integration/services and the state in .services are named relative to
// it, whichever package directory go test started in), and stops the
// services the tests started.
func Main(m *testing.M) {
	flag.Parse()
	if err := chdirIntegration(); err != nil {
		fmt.Fprintf(os.Stderr, "integration tests: %v\n", err)
		os.Exit(1)
	}
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "tributary-it-")
	if err != nil {
		panic(err)
	}
	Binary = filepath.Join(dir, "tributary")
	out, err := exec.Command("go", "build", "-o", Binary, "../cmd/tributary").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build tributary: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	stopStartedServices()
	os.RemoveAll(dir)
	os.Exit(code)
}

// chdirIntegration makes integration/ of the module the working directory.
func chdirIntegration() error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return os.Chdir(filepath.Join(d, "integration"))
		}
		if filepath.Dir(d) == d {
			return fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

// SkipShort skips t under go test -short (no services).
func SkipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the services of `make services-up`")
	}
}

// Env is one test's isolated world: a database, a pipeline name (and so a
// slot and publication) and a topic prefix of its own.
type Env struct {
	T      *testing.T
	Name   string // pipeline name
	DB     string
	Prefix string
	Dir    string // working dir: config, checkpoints, logs
	Conn   *pgx.Conn
}

func NewEnv(t *testing.T, label string) *Env {
	SkipShort(t)
	id := fmt.Sprintf("%s_%d_%04d", label, os.Getpid()%100000, rand.IntN(10000))
	e := &Env{T: t, Name: id, DB: "it_" + id, Prefix: "it-" + strings.ReplaceAll(id, "_", "-"), Dir: t.TempDir()}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, PGAdminURL)
	if err != nil {
		t.Fatalf("connect to postgres (is `make services-up` done?): %v", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+e.DB); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	e.Conn, err = pgx.Connect(ctx, e.PGURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Conn.Close(context.Background())
		admin, err := pgx.Connect(context.Background(), PGAdminURL)
		if err != nil {
			return
		}
		defer admin.Close(context.Background())
		// A slot pins WAL and blocks DROP DATABASE: drop it first.
		for i := 0; i < 40; i++ {
			_, err = admin.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, e.DB)
			if err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+e.DB+" WITH (FORCE)")
	})
	return e
}

func (e *Env) PGURL() string {
	return "postgres://postgres:postgres@127.0.0.1:5432/" + e.DB
}

func (e *Env) Exec(sql string, args ...any) {
	e.T.Helper()
	if _, err := e.Conn.Exec(context.Background(), sql, args...); err != nil {
		e.T.Fatalf("%s: %v", sql, err)
	}
}

// PipelineConfig is what the tests' pipeline configs differ in; the rest
// (Kafka without TLS, topics created when missing, a prefix of the test's
// own) is the same for all.
type PipelineConfig struct {
	Typ, URL    string // the source; "": e's PostgreSQL database
	Source      string // lines added to the source section
	Destination string // lines added to the destination section
	Checkpoint  string // the checkpoint section; "": a file store in e.dir
	File        string // the config's name in e.dir; "": pipeline.yaml
}

// WritePipeline writes the pipeline config c describes and returns its path.
func (e *Env) WritePipeline(c PipelineConfig) string {
	e.T.Helper()
	if c.Typ == "" {
		c.Typ, c.URL = "postgres", e.PGURL()
	}
	if c.Checkpoint == "" {
		c.Checkpoint = "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n"
	}
	if c.File == "" {
		c.File = "pipeline.yaml"
	}
	cfg := fmt.Sprintf(`name: %s
source:
  type: %s
  url: %s
%sdestination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  create_missing_topics: true
%scheckpoint:
%s`, e.Name, c.Typ, c.URL, c.Source, KafkaAddr, e.Prefix, c.Destination, c.Checkpoint)
	path := filepath.Join(e.Dir, c.File)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.T.Fatal(err)
	}
	return path
}

// WriteConfig writes the pipeline config and returns its path. extra is
// appended to the destination section.
func (e *Env) WriteConfig(extra string) string {
	return e.WritePipeline(PipelineConfig{Destination: extra})
}

// Proc is a running tributary.
type Proc struct {
	Cmd  *exec.Cmd
	Out  *SyncBuffer
	Done chan struct{}
	Err  error
}

type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start starts the binary with args in the test's directory; it is
// killed when the test ends.
func (e *Env) Start(args ...string) *Proc {
	e.T.Helper()
	return e.StartWith(nil, args...)
}

// Stop sends SIGTERM and returns the exit code.
func (p *Proc) Stop(t *testing.T) int {
	t.Helper()
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		p.Cmd.Process.Kill()
		t.Fatalf("tributary did not stop within 60 s of SIGTERM; output:\n%s", p.Out)
	}
	return p.Cmd.ProcessState.ExitCode()
}

func (p *Proc) Kill() {
	p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done
}

func (p *Proc) Exited() bool {
	select {
	case <-p.Done:
		return true
	default:
		return false
	}
}

// Message is one record read back from Kafka.
type Message struct {
	Partition int32
	Offset    int64
	Key       map[string]any
	Value     map[string]any // nil for a tombstone
	Headers   map[string]string
	// ProducerID tells apart the processes that wrote (one idempotent
	// producer id per process).
	ProducerID int64
}

func (m Message) Payload() map[string]any {
	p, _ := m.Value["payload"].(map[string]any)
	return p
}

// ReadTopic reads a topic from the start up to its current end.
func ReadTopic(t *testing.T, topic string) []Message {
	t.Helper()
	var msgs []Message
	EachMessageWithin(t, topic, 60*time.Second, func(m Message) { msgs = append(msgs, m) })
	return msgs
}

// EachMessageWithin calls fn for each record of topic, from the start up
// to its end when called, failing the test after timeout.
func EachMessageWithin(t *testing.T, topic string, timeout time.Duration, fn func(Message)) {
	t.Helper()
	EachRecordWithin(t, topic, timeout, nil, func(_ *kgo.Record, m Message) { fn(m) })
}

// EachRecordWithin is eachMessageWithin with extra client options (e.g.
// read_committed); fn also gets the record. Control records (kept to see
// a transactional topic's end) are not passed on.
func EachRecordWithin(t *testing.T, topic string, timeout time.Duration, opts []kgo.Opt, fn func(*kgo.Record, Message)) {
	t.Helper()
	EachRawRecordWithin(t, topic, timeout, opts, func(r *kgo.Record) {
		m := Message{Partition: r.Partition, Offset: r.Offset, Headers: map[string]string{}, ProducerID: r.ProducerID}
		if err := json.Unmarshal(r.Key, &m.Key); err != nil {
			t.Fatalf("key at %d/%d is not JSON: %v: %s", r.Partition, r.Offset, err, r.Key)
		}
		if r.Value != nil {
			if err := json.Unmarshal(r.Value, &m.Value); err != nil {
				t.Fatalf("value at %d/%d is not JSON: %v", r.Partition, r.Offset, err)
			}
		}
		for _, h := range r.Headers {
			m.Headers[h.Key] = string(h.Value)
		}
		fn(r, m)
	})
}

// EachRawRecordWithin is eachRecordWithin leaving the decoding to fn (the
// soak's checker decodes only the fields it compares).
func EachRawRecordWithin(t *testing.T, topic string, timeout time.Duration, opts []kgo.Opt, fn func(*kgo.Record)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(KafkaAddr), kgo.FetchMaxBytes(64 << 20)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	offsets := map[string]map[int32]kgo.Offset{topic: {}}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
			offsets[topic][o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if len(want) == 0 {
		return
	}
	cl.AddConsumePartitions(offsets)
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: %v (still waiting for %v)", topic, err, want)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if r.Offset+1 >= end {
				delete(want, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			fn(r)
		})
	}
}

// WaitFor polls cond until it holds or the timeout passes.
func WaitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TopicEnd is the total number of records in topic (0 if it does not exist).
func TopicEnd(topic string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(KafkaAddr))
	if err != nil {
		return 0
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			n += o.Offset
		}
	})
	return n
}

// serviceScripts are the on-demand service scripts (integration/services/)
// this test binary started; TestMain stops each with `<script> down` once
// every test ran, so the suite leaves nothing running that it started.
type serviceScripts struct {
	mu      sync.Mutex
	scripts []string
}

var StartedServices serviceScripts

func (s *serviceScripts) Add(script string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.scripts {
		if have == script {
			return
		}
	}
	s.scripts = append(s.scripts, script)
}

func stopStartedServices() {
	StartedServices.mu.Lock()
	defer StartedServices.mu.Unlock()
	for _, script := range StartedServices.scripts {
		if out, err := exec.Command("services/"+script, "down").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "integration/services/%s down: %v\n%s", script, err, out)
		}
	}
}
