package integration

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
	pgAdminURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	kafkaAddr  = "127.0.0.1:9092"
)

var binary string // the tributary binary under test, built once

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "tributary-it-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tributary")
	out, err := exec.Command("go", "build", "-o", binary, "../cmd/tributary").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build tributary: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	stopStartedServices()
	os.RemoveAll(dir)
	os.Exit(code)
}

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the services of `make services-up`")
	}
}

// env is one test's isolated world: a database, a pipeline name (and so a
// slot and publication) and a topic prefix of its own.
type env struct {
	t      *testing.T
	name   string // pipeline name
	db     string
	prefix string
	dir    string // working dir: config, checkpoints, logs
	conn   *pgx.Conn
}

func newEnv(t *testing.T, label string) *env {
	skipShort(t)
	id := fmt.Sprintf("%s_%d_%04d", label, os.Getpid()%100000, rand.IntN(10000))
	e := &env{t: t, name: id, db: "it_" + id, prefix: "it-" + strings.ReplaceAll(id, "_", "-"), dir: t.TempDir()}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgAdminURL)
	if err != nil {
		t.Fatalf("connect to postgres (is `make services-up` done?): %v", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+e.db); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	e.conn, err = pgx.Connect(ctx, e.pgURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.conn.Close(context.Background())
		admin, err := pgx.Connect(context.Background(), pgAdminURL)
		if err != nil {
			return
		}
		defer admin.Close(context.Background())
		// A slot pins WAL and blocks DROP DATABASE: drop it first.
		for i := 0; i < 40; i++ {
			_, err = admin.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, e.db)
			if err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+e.db+" WITH (FORCE)")
	})
	return e
}

func (e *env) pgURL() string {
	return "postgres://postgres:postgres@127.0.0.1:5432/" + e.db
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.conn.Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

// pipelineConfig is what the tests' pipeline configs differ in; the rest
// (Kafka without TLS, topics created when missing, a prefix of the test's
// own) is the same for all.
type pipelineConfig struct {
	typ, url    string // the source; "": e's PostgreSQL database
	source      string // lines added to the source section
	destination string // lines added to the destination section
	checkpoint  string // the checkpoint section; "": a file store in e.dir
	file        string // the config's name in e.dir; "": pipeline.yaml
}

// writePipeline writes the pipeline config c describes and returns its path.
func (e *env) writePipeline(c pipelineConfig) string {
	e.t.Helper()
	if c.typ == "" {
		c.typ, c.url = "postgres", e.pgURL()
	}
	if c.checkpoint == "" {
		c.checkpoint = "  path: " + filepath.Join(e.dir, "checkpoints") + "\n"
	}
	if c.file == "" {
		c.file = "pipeline.yaml"
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
%s`, e.name, c.typ, c.url, c.source, kafkaAddr, e.prefix, c.destination, c.checkpoint)
	path := filepath.Join(e.dir, c.file)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// writeConfig writes the pipeline config and returns its path. extra is
// appended to the destination section.
func (e *env) writeConfig(extra string) string {
	return e.writePipeline(pipelineConfig{destination: extra})
}

// proc is a running tributary.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (e *env) start(args ...string) *proc {
	e.t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Dir = e.dir
	if err := p.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	e.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends SIGTERM and returns the exit code.
func (p *proc) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("tributary did not stop within 60 s of SIGTERM; output:\n%s", p.out)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// message is one record read back from Kafka.
type message struct {
	Partition int32
	Offset    int64
	Key       map[string]any
	Value     map[string]any // nil for a tombstone
	Headers   map[string]string
	// ProducerID tells apart the processes that wrote (one idempotent
	// producer id per process).
	ProducerID int64
}

func (m message) payload() map[string]any {
	p, _ := m.Value["payload"].(map[string]any)
	return p
}

// readTopic reads a topic from the start up to its current end.
func readTopic(t *testing.T, topic string) []message {
	t.Helper()
	var msgs []message
	eachMessageWithin(t, topic, 60*time.Second, func(m message) { msgs = append(msgs, m) })
	return msgs
}

// eachMessageWithin calls fn for each record of topic, from the start up
// to its end when called, failing the test after timeout.
func eachMessageWithin(t *testing.T, topic string, timeout time.Duration, fn func(message)) {
	t.Helper()
	eachRecordWithin(t, topic, timeout, nil, func(_ *kgo.Record, m message) { fn(m) })
}

// eachRecordWithin is eachMessageWithin with extra client options (e.g.
// read_committed); fn also gets the record. Control records (kept to see
// a transactional topic's end) are not passed on.
func eachRecordWithin(t *testing.T, topic string, timeout time.Duration, opts []kgo.Opt, fn func(*kgo.Record, message)) {
	t.Helper()
	eachRawRecordWithin(t, topic, timeout, opts, func(r *kgo.Record) {
		m := message{Partition: r.Partition, Offset: r.Offset, Headers: map[string]string{}, ProducerID: r.ProducerID}
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

// eachRawRecordWithin is eachRecordWithin leaving the decoding to fn (the
// soak's checker decodes only the fields it compares).
func eachRawRecordWithin(t *testing.T, topic string, timeout time.Duration, opts []kgo.Opt, fn func(*kgo.Record)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(kafkaAddr), kgo.FetchMaxBytes(64 << 20)}, opts...)...)
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

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// topicEnd is the total number of records in topic (0 if it does not exist).
func topicEnd(topic string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr))
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

var startedServices serviceScripts

func (s *serviceScripts) add(script string) {
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
	startedServices.mu.Lock()
	defer startedServices.mu.Unlock()
	for _, script := range startedServices.scripts {
		if out, err := exec.Command("services/"+script, "down").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "integration/services/%s down: %v\n%s", script, err, out)
		}
	}
}
