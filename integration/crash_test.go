package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// The crash tests run the binary with the DynamoDB checkpoint store on the
// AWS emulator (moto, 127.0.0.1:5000) and make it SIGKILL itself at one
// exact point of the delivery path through the test-only hook
// TRIBUTARY_TEST_CRASH (pkg/pipeline/crash.go). Leases are shortened with
// TRIBUTARY_LEASE_DURATION so that a restart after a crash takes over
// within about a second.

// testLease is the lease of the binaries these tests start: a takeover
// after a crash waits a little longer than that.
const testLease = "3s"

// useMoto points this process (and so every binary it starts) at the AWS
// emulator, with short leases.
func useMoto(t *testing.T) {
	t.Helper()
	awstest.Env(t)
	t.Setenv("TRIBUTARY_LEASE_DURATION", testLease)
}

// writeDynamoConfig writes a pipeline config that checkpoints in the
// DynamoDB table (created when missing). extra goes into the source section.
func (e *env) writeDynamoConfig(table, extra string) string {
	return e.writePipeline(pipelineConfig{source: extra, checkpoint: dynamoCheckpoint(table)})
}

// dynamoCheckpoint is the checkpoint section of a DynamoDB store in table,
// created when missing.
func dynamoCheckpoint(table string) string {
	return "  store: dynamodb\n  table: " + table + "\n  create_table: true\n"
}

// startWith starts the binary with extra environment variables.
func (e *env) startWith(extraEnv []string, args ...string) *proc {
	e.t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Dir = e.dir
	p.cmd.Env = append(os.Environ(), extraEnv...)
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

// waitFor is waitFor that fails at once, with the output, when the
// process exits meanwhile.
func (p *proc) waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	waitFor(t, timeout, what, func() bool {
		if p.exited() {
			t.Fatalf("tributary exited (%v) while waiting for %s; output:\n%s", p.err, what, p.out)
		}
		return cond()
	})
}

// sentinelTable is created by tests that use awaitSentinel, before the
// pipeline first starts (so that it is published).
const sentinelTable = `CREATE TABLE sentinel (id int PRIMARY KEY)`

// awaitSentinel commits sentinel row id and waits until p published it.
// The pipeline hands records to the producer in commit order, so then
// everything committed before is handed over too, and a SIGTERM (which
// flushes) delivers it: unlike waiting for a quiet topic, this cannot
// mistake a pipeline still waiting for its lease for one caught up.
func (e *env) awaitSentinel(p *proc, id int) {
	e.t.Helper()
	e.exec(`INSERT INTO sentinel VALUES ($1)`, id)
	awaitKey(e.t, p, e.prefix+".public.sentinel", "id", id)
}

// awaitBackendSentinel is awaitSentinel on any backend, whose sentinel
// table is b.createTable("sentinel").
func awaitBackendSentinel(t *testing.T, b backend, p *proc, id int) {
	t.Helper()
	if err := b.exec(fmt.Sprintf(`INSERT INTO sentinel (k, seq) VALUES (%d, %d)`, id, id)); err != nil {
		t.Fatal(err)
	}
	awaitKey(t, p, b.topic("sentinel"), "k", id)
}

// awaitKey waits until p published a row of topic whose column is id.
func awaitKey(t *testing.T, p *proc, topic, column string, id int) {
	t.Helper()
	p.waitFor(t, 120*time.Second, fmt.Sprintf("sentinel row %d", id), func() bool {
		if topicEnd(topic) == 0 {
			return false
		}
		for _, m := range readTopic(t, topic) {
			if pl := m.payload(); pl != nil {
				if after, ok := pl["after"].(map[string]any); ok && after[column] == float64(id) {
					return true
				}
			}
		}
		return false
	})
}

// killedBy reports whether the process ended by SIGKILL.
func (p *proc) killedBy(sig syscall.Signal) bool {
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func testTableName(label string) string {
	return fmt.Sprintf("tributary-it-%s-%d-%04d", label, os.Getpid()%100000, rand.IntN(10000))
}

// dynamoItem reads a pipeline's item from the emulator (nil: none).
func dynamoItem(t *testing.T, table, pipeline string) map[string]types.AttributeValue {
	t.Helper()
	it, err := getDynamoItem(table, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// dynamoItemQuiet is dynamoItem for background goroutines: nil on errors.
func dynamoItemQuiet(table, pipeline string) map[string]types.AttributeValue {
	it, _ := getDynamoItem(table, pipeline)
	return it
}

func getDynamoItem(table, pipeline string) (map[string]types.AttributeValue, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	out, err := dynamodb.NewFromConfig(cfg).GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pipeline": &types.AttributeValueMemberS{Value: pipeline}},
	})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

func attrS(it map[string]types.AttributeValue, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func attrN(it map[string]types.AttributeValue, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberN); ok {
		return s.Value
	}
	return ""
}

// TestCrashPoints SIGKILLs the pipeline at each point of the delivery
// path, three times per point, while a writer commits changes, then checks
// the topic with the no-gap oracle; on every source.
func TestCrashPoints(t *testing.T) {
	for _, point := range []string{"after-produce", "after-ack", "after-checkpoint"} {
		t.Run(point, func(t *testing.T) {
			forEachBackend(t, "crash", func(t *testing.T, b backend) { crashAt(t, b, point) })
		})
	}
}

// createTables creates the scenario tables on b, or fails the test.
func createTables(t *testing.T, b backend, tables ...string) {
	t.Helper()
	for _, table := range tables {
		for _, q := range b.createTable(table) {
			if err := b.exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// withDynamoStore makes the config at path checkpoint in the DynamoDB
// table (writePipeline writes the checkpoint section last).
func withDynamoStore(t *testing.T, path, table string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), "checkpoint:\n")
	if i < 0 {
		t.Fatalf("no checkpoint section in %s", path)
	}
	if err := os.WriteFile(path, []byte(string(b[:i])+"checkpoint:\n"+dynamoCheckpoint(table)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func crashAt(t *testing.T, b backend, point string) {
	e := b.env()
	useMoto(t)
	const rows = 200
	createTables(t, b, "ledger", "sentinel")
	if err := b.exec(b.bulkInsert("ledger", 0, 0, rows)); err != nil {
		t.Fatal(err)
	}
	table := testTableName("crash")
	cfg := withDynamoStore(t, b.config(nil, ""), table)
	topic := b.topic("ledger")

	p := e.start("run", "--config", cfg)
	p.waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= rows })

	w := newWriter(rows)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.runOn(ctx, b.exec, 60*time.Second)
	}()
	defer func() { cancel(); wg.Wait() }()

	time.Sleep(time.Second)
	p.kill()
	crashes := 0
	for i, n := range []int{40, 2, 3} {
		if point != "after-produce" {
			n = 1 + i%2 // commits with progress happen once a second
		}
		p = e.startWith([]string{fmt.Sprintf("TRIBUTARY_TEST_CRASH=%s:%d", point, n)}, "run", "--config", cfg)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("crash point %s:%d not reached within 30 s; output:\n%s", point, n, p.out)
		}
		if !p.killedBy(syscall.SIGKILL) {
			t.Fatalf("incarnation %d ended with %v, not by its own SIGKILL at %s; output:\n%s", i, p.err, point, p.out)
		}
		crashes++
	}
	cancel()
	wg.Wait()
	if w.err != nil {
		t.Fatal(w.err)
	}

	p = e.start("run", "--config", cfg)
	want := w.committed()
	awaitBackendSentinel(t, b, p, 1)
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	it := dynamoItem(t, table, e.name)
	if owner := attrS(it, "owner"); owner != "" {
		t.Errorf("lease still held by %s after SIGTERM", owner)
	}
	res := verifyOracle(t, topic, w)
	t.Logf("crash %s on %s: %d committed changes (+%d backfilled rows), %d rolled back, %d self-kills, %s; final epoch %s",
		point, b.kind(), len(want), rows, len(w.rolledBack), crashes, res, attrN(it, "epoch"))
	if res.gaps > 0 {
		t.Fatalf("%d gaps", res.gaps)
	}
}
