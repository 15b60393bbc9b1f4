package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The three-broker cluster of integration/services/kafka-cluster.sh: node N
// serves clients on 127.0.0.1:19N92 (PLAINTEXT), 19N94 (SASL_SSL) and 19N95
// (mutual TLS); replication factor 3, min.insync.replicas=2.
const clusterBootstrap = "127.0.0.1:19192,127.0.0.1:19292,127.0.0.1:19392"

func clusterAddr(node, suffix int) string {
	return fmt.Sprintf("127.0.0.1:%d", 19000+node*100+suffix)
}

// kafkaCluster runs integration/services/kafka-cluster.sh with args.
func kafkaCluster(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("services/kafka-cluster.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-cluster.sh %v: %v\n%s", args, err, out)
	}
}

// startKafkaCluster starts whatever node of the cluster does not run. The
// cluster is left running for the next test of this test binary; TestMain
// stops it at the end (stopStartedServices), so `make test` leaves no
// three-broker cluster behind.
func startKafkaCluster(t *testing.T) {
	t.Helper()
	skipShort(t)
	startedServices.add("kafka-cluster.sh")
	kafkaCluster(t, "start")
}

// clusterAdmin is an admin client on the cluster's PLAINTEXT listeners.
func clusterAdmin(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(clusterBootstrap, ",")...),
		kgo.RetryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// clusterConfig writes a pipeline config streaming e's database to the
// cluster; destination holds the destination's lines but
// topic_prefix and create_missing_topics ("" means PLAINTEXT).
func (e *env) clusterConfig(destination string) string {
	e.t.Helper()
	if destination == "" {
		destination = fmt.Sprintf("  bootstrap_servers: %s\n  disable_tls: true\n", clusterBootstrap)
	}
	cfg := fmt.Sprintf(`name: %s
source:
  type: postgres
  url: %s
destination:
%s  topic_prefix: %s
  create_missing_topics: true
checkpoint:
  path: %s
`, e.name, e.pgURL(), destination, e.prefix, filepath.Join(e.dir, "checkpoints"))
	path := filepath.Join(e.dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// topicTail follows one topic of the cluster from its start while a fault test
// runs, so that it sees records that the test later deletes (retention, a
// deleted topic). It keeps the broker's append time of each record
// (LogAppendTime), which measures stalls independently of its own lag.
type topicTail struct {
	mu       sync.Mutex
	msgs     []message
	appended []time.Time
	next     map[int32]int64
	skipped  int64 // offsets removed before the tail read them
	cancel   context.CancelFunc
	done     chan struct{}
}

func startTail(t *testing.T, topic string) *topicTail {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(clusterBootstrap, ",")...),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.MetadataMaxAge(2*time.Second),
		kgo.MetadataMinAge(250*time.Millisecond), kgo.FetchMaxBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tl := &topicTail{next: map[int32]int64{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(tl.done)
		defer cl.Close()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(tl.add)
		}
	}()
	t.Cleanup(tl.stop)
	return tl
}

func (tl *topicTail) add(r *kgo.Record) {
	m := message{Partition: r.Partition, Offset: r.Offset, Headers: map[string]string{}, ProducerID: r.ProducerID}
	json.Unmarshal(r.Key, &m.Key)
	if r.Value != nil {
		json.Unmarshal(r.Value, &m.Value)
	}
	for _, h := range r.Headers {
		m.Headers[h.Key] = string(h.Value)
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if n, ok := tl.next[r.Partition]; ok && r.Offset > n {
		tl.skipped += r.Offset - n
	}
	tl.next[r.Partition] = r.Offset + 1
	tl.msgs = append(tl.msgs, m)
	tl.appended = append(tl.appended, r.Timestamp)
}

func (tl *topicTail) stop() {
	tl.cancel()
	<-tl.done
}

func (tl *topicTail) count() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.msgs)
}

// snapshot returns what the tail read so far.
func (tl *topicTail) snapshot() ([]message, []time.Time, int64) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]message(nil), tl.msgs...), append([]time.Time(nil), tl.appended...), tl.skipped
}

// supervisor runs `tributary run` as ECS runs a task: when it exits, the
// exit is recorded and it is started again, from its checkpoint.
type supervisor struct {
	e        *env
	args     []string
	mu       sync.Mutex
	p        *proc
	exits    []string
	outs     []*syncBuffer // every process's output, restarts included
	stopping bool
	done     chan struct{}
}

func supervise(e *env, args ...string) *supervisor {
	s := &supervisor{e: e, args: args, p: e.start(args...), done: make(chan struct{})}
	s.outs = []*syncBuffer{s.p.out}
	go s.loop()
	e.t.Cleanup(func() { // a restarted process too
		s.mu.Lock()
		s.stopping = true
		p := s.p
		s.mu.Unlock()
		p.cmd.Process.Kill()
	})
	return s
}

func (s *supervisor) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		<-p.done
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			return
		}
		s.exits = append(s.exits, fmt.Sprintf("exit %d: %s", p.cmd.ProcessState.ExitCode(), lastError(p.out.String())))
		s.mu.Unlock()
		time.Sleep(2 * time.Second) // ECS starts a replacement task after a while
		np := &proc{cmd: exec.Command(binary, s.args...), out: &syncBuffer{}, done: make(chan struct{})}
		np.cmd.Stdout, np.cmd.Stderr = np.out, np.out
		np.cmd.Dir = s.e.dir
		if err := np.cmd.Start(); err != nil {
			s.mu.Lock()
			s.exits = append(s.exits, "restart failed: "+err.Error())
			s.mu.Unlock()
			return
		}
		go func() { np.err = np.cmd.Wait(); close(np.done) }()
		s.mu.Lock()
		s.p = np
		s.outs = append(s.outs, np.out)
		s.mu.Unlock()
	}
}

// lastError is the last line of out that reports an error.
func lastError(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "ERROR") || strings.Contains(lines[i], "error") {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}

// stop ends the current process with SIGTERM and returns its exit code.
func (s *supervisor) stop(t *testing.T) int {
	t.Helper()
	s.mu.Lock()
	s.stopping = true
	p := s.p
	s.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("tributary did not stop within 60 s of SIGTERM; output:\n%s", p.out)
	}
	return p.cmd.ProcessState.ExitCode()
}

// output is what every process run so far wrote.
func (s *supervisor) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, o := range s.outs {
		b.WriteString(o.String())
	}
	return b.String()
}

// count is how many lines of the output contain line.
func (s *supervisor) count(line string) int { return strings.Count(s.output(), line) }

// first is the first line of the output that contains line.
func (s *supervisor) first(line string) string { return firstLineWith(s.output(), line) }

func (s *supervisor) exitLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.exits...)
}

// TestKafkaClusterSecuredListeners: a pipeline publishes to the
// three-broker cluster through its SASL_SSL listeners (SCRAM-SHA-512) and
// through its mutual-TLS listeners, with the users, ACLs and certificates
// of the one-node broker, and every row reaches the topic.
func TestKafkaClusterSecuredListeners(t *testing.T) {
	startKafkaCluster(t)
	ca := indent(tlsFile(t, "ca.pem"), "    ")
	for name, dest := range map[string]string{
		"SASL_SSL": fmt.Sprintf("  bootstrap_servers: %s,%s,%s\n  authentication: SCRAM-SHA-512\n  username: creator\n  password: creator-secret\n  ca_certificate: |\n%s",
			clusterAddr(1, 94), clusterAddr(2, 94), clusterAddr(3, 94), ca),
		"mTLS": fmt.Sprintf("  bootstrap_servers: %s,%s,%s\n  ca_certificate: |\n%s  client_certificate: |\n%s  client_key: |\n%s",
			clusterAddr(1, 95), clusterAddr(2, 95), clusterAddr(3, 95), ca,
			indent(tlsFile(t, "client.pem"), "    "), indent(tlsFile(t, "client.key"), "    ")),
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, "kcsec")
			e.prefix = secPrefix("kc" + strings.ToLower(name[:4]))
			e.exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
			e.exec(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, 100) g`)
			p := e.start("run", "--config", e.clusterConfig(dest))
			e.exec(`INSERT INTO ledger SELECT g, g, 'y' FROM generate_series(101, 150) g`)
			topic := e.prefix + ".public.ledger"
			tl := startTail(t, topic)
			waitFor(t, 120*time.Second, "150 rows on the cluster through "+name, func() bool {
				if p.exited() {
					t.Fatalf("tributary exited: %v\n%s", p.err, p.out)
				}
				return tl.count() >= 150
			})
			if code := p.stop(t); code != 0 {
				t.Fatalf("exit %d after SIGTERM:\n%s", code, p.out)
			}
			md, err := clusterAdmin(t).Metadata(context.Background(), topic)
			if err != nil {
				t.Fatal(err)
			}
			for _, pd := range md.Topics[topic].Partitions {
				if len(pd.Replicas) != 3 {
					t.Errorf("partition %d has replicas %v, want 3 (the cluster's default)", pd.Partition, pd.Replicas)
				}
			}
		})
	}
}
