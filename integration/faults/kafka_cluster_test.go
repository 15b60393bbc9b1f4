package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

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
	itest.SkipShort(t)
	itest.StartedServices.Add("kafka-cluster.sh")
	kafkaCluster(t, "start")
}

// clusterAdmin is an admin client on the cluster's PLAINTEXT listeners.
func clusterAdmin(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(itest.ClusterBootstrap, ",")...),
		kgo.RetryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// topicTail follows one topic of the cluster from its start while a fault test
// runs, so that it sees records that the test later deletes (retention, a
// deleted topic). It keeps the broker's append time of each record
// (LogAppendTime), which measures stalls independently of its own lag.
type topicTail struct {
	mu       sync.Mutex
	msgs     []itest.Message
	appended []time.Time
	next     map[int32]int64
	skipped  int64 // offsets removed before the tail read them
	cancel   context.CancelFunc
	done     chan struct{}
}

func startTail(t *testing.T, topic string) *topicTail {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(itest.ClusterBootstrap, ",")...),
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
			fs.EachRecord(tl.Add)
		}
	}()
	t.Cleanup(tl.Stop)
	return tl
}

func (tl *topicTail) Add(r *kgo.Record) {
	m := itest.Message{Partition: r.Partition, Offset: r.Offset, Headers: map[string]string{}, ProducerID: r.ProducerID}
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

func (tl *topicTail) Stop() {
	tl.cancel()
	<-tl.done
}

func (tl *topicTail) count() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.msgs)
}

// snapshot returns what the tail read so far.
func (tl *topicTail) snapshot() ([]itest.Message, []time.Time, int64) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]itest.Message(nil), tl.msgs...), append([]time.Time(nil), tl.appended...), tl.skipped
}

// supervisor runs `tributary run` as ECS runs a task: when it exits, the
// exit is recorded and it is started again, from its checkpoint.
type supervisor struct {
	e        *itest.Env
	args     []string
	mu       sync.Mutex
	p        *itest.Proc
	exits    []string
	outs     []*itest.SyncBuffer // every process's output, restarts included
	stopping bool
	done     chan struct{}
}

func supervise(e *itest.Env, args ...string) *supervisor {
	s := &supervisor{e: e, args: args, p: e.Start(args...), done: make(chan struct{})}
	s.outs = []*itest.SyncBuffer{s.p.Out}
	go s.loop()
	e.T.Cleanup(func() { // a restarted process too
		s.mu.Lock()
		s.stopping = true
		p := s.p
		s.mu.Unlock()
		p.Cmd.Process.Kill()
	})
	return s
}

func (s *supervisor) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		<-p.Done
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			return
		}
		s.exits = append(s.exits, fmt.Sprintf("exit %d: %s", p.Cmd.ProcessState.ExitCode(), lastError(p.Out.String())))
		s.mu.Unlock()
		time.Sleep(2 * time.Second) // ECS starts a replacement task after a while
		np := &itest.Proc{Cmd: exec.Command(itest.Binary, s.args...), Out: &itest.SyncBuffer{}, Done: make(chan struct{})}
		np.Cmd.Stdout, np.Cmd.Stderr = np.Out, np.Out
		np.Cmd.Dir = s.e.Dir
		if err := np.Cmd.Start(); err != nil {
			s.mu.Lock()
			s.exits = append(s.exits, "restart failed: "+err.Error())
			s.mu.Unlock()
			return
		}
		go func() { np.Err = np.Cmd.Wait(); close(np.Done) }()
		s.mu.Lock()
		s.p = np
		s.outs = append(s.outs, np.Out)
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

// Stop ends the current process with SIGTERM and returns its exit code.
func (s *supervisor) Stop(t *testing.T) int {
	t.Helper()
	s.mu.Lock()
	s.stopping = true
	p := s.p
	s.mu.Unlock()
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		p.Cmd.Process.Kill()
		t.Fatalf("tributary did not stop within 60 s of SIGTERM; output:\n%s", p.Out)
	}
	return p.Cmd.ProcessState.ExitCode()
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
	ca := itest.Indent(itest.TLSFile(t, "ca.pem"), "    ")
	for name, dest := range map[string]string{
		"SASL_SSL": fmt.Sprintf("  bootstrap_servers: %s,%s,%s\n  authentication: SCRAM-SHA-512\n  username: creator\n  password: creator-secret\n  ca_certificate: |\n%s",
			clusterAddr(1, 94), clusterAddr(2, 94), clusterAddr(3, 94), ca),
		"mTLS": fmt.Sprintf("  bootstrap_servers: %s,%s,%s\n  ca_certificate: |\n%s  client_certificate: |\n%s  client_key: |\n%s",
			clusterAddr(1, 95), clusterAddr(2, 95), clusterAddr(3, 95), ca,
			itest.Indent(itest.TLSFile(t, "client.pem"), "    "), itest.Indent(itest.TLSFile(t, "client.key"), "    ")),
	} {
		t.Run(name, func(t *testing.T) {
			e := itest.NewEnv(t, "kcsec")
			e.Prefix = itest.SecPrefix("kc" + strings.ToLower(name[:4]))
			e.Exec(`CREATE TABLE ledger (k int PRIMARY KEY, seq bigint NOT NULL, pad text)`)
			e.Exec(`INSERT INTO ledger SELECT g, g, 'x' FROM generate_series(1, 100) g`)
			p := e.Start("run", "--config", e.ClusterConfig(dest))
			e.Exec(`INSERT INTO ledger SELECT g, g, 'y' FROM generate_series(101, 150) g`)
			topic := e.Prefix + ".public.ledger"
			tl := startTail(t, topic)
			itest.WaitFor(t, 120*time.Second, "150 rows on the cluster through "+name, func() bool {
				if p.Exited() {
					t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
				}
				return tl.count() >= 150
			})
			if code := p.Stop(t); code != 0 {
				t.Fatalf("exit %d after SIGTERM:\n%s", code, p.Out)
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
