package itest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestLease is the lease of the binaries these tests start: a takeover
// after a crash waits a little longer than that.
const TestLease = "3s"

// UseMoto points this process (and so every binary it starts) at the AWS
// emulator, with short leases.
func UseMoto(t *testing.T) {
	t.Helper()
	awstest.Env(t)
	t.Setenv("TRIBUTARY_LEASE_DURATION", TestLease)
}

// WriteDynamoConfig writes a pipeline config that checkpoints in the
// DynamoDB table (created when missing). extra goes into the source section.
func (e *Env) WriteDynamoConfig(table, extra string) string {
	return e.WritePipeline(PipelineConfig{Source: extra, Checkpoint: DynamoCheckpoint(table)})
}

// DynamoCheckpoint is the checkpoint section of a DynamoDB store in table,
// created when missing.
func DynamoCheckpoint(table string) string {
	return "  store: dynamodb\n  table: " + table + "\n  create_table: true\n"
}

// StartWith starts the binary with extra environment variables.
func (e *Env) StartWith(extraEnv []string, args ...string) *Proc {
	e.T.Helper()
	p := &Proc{Cmd: exec.Command(Binary, args...), Out: &SyncBuffer{}, Done: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	p.Cmd.Dir = e.Dir
	p.Cmd.Env = append(os.Environ(), extraEnv...)
	if err := p.Cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	go func() { p.Err = p.Cmd.Wait(); close(p.Done) }()
	e.T.Cleanup(func() {
		select {
		case <-p.Done:
		default:
			p.Cmd.Process.Kill()
			<-p.Done
		}
	})
	return p
}

// WaitFor is waitFor that fails at once, with the output, when the
// process exits meanwhile.
func (p *Proc) WaitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitFor(t, timeout, what, func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited (%v) while waiting for %s; output:\n%s", p.Err, what, p.Out)
		}
		return cond()
	})
}

// SentinelTable is created by tests that use awaitSentinel, before the
// pipeline first starts (so that it is published).
const SentinelTable = `CREATE TABLE sentinel (id int PRIMARY KEY)`

// AwaitSentinel commits sentinel row id and waits until p published it.
// The pipeline hands records to the producer in commit order, so then
// everything committed before is handed over too, and a SIGTERM (which
// flushes) delivers it: unlike waiting for a quiet topic, this cannot
// mistake a pipeline still waiting for its lease for one caught up.
func (e *Env) AwaitSentinel(p *Proc, id int) {
	e.T.Helper()
	e.Exec(`INSERT INTO sentinel VALUES ($1)`, id)
	AwaitKey(e.T, p, e.Prefix+".public.sentinel", "id", id)
}

// AwaitBackendSentinel is awaitSentinel on any backend, whose sentinel
// table is b.createTable("sentinel").
func AwaitBackendSentinel(t *testing.T, b Backend, p *Proc, id int) {
	t.Helper()
	if err := b.Exec(fmt.Sprintf(`INSERT INTO sentinel (k, seq) VALUES (%d, %d)`, id, id)); err != nil {
		t.Fatal(err)
	}
	AwaitKey(t, p, b.Topic("sentinel"), "k", id)
}

// AwaitKey waits until p published a row of topic whose column is id.
func AwaitKey(t *testing.T, p *Proc, topic, column string, id int) {
	t.Helper()
	p.WaitFor(t, 120*time.Second, fmt.Sprintf("sentinel row %d", id), func() bool {
		if TopicEnd(topic) == 0 {
			return false
		}
		for _, m := range ReadTopic(t, topic) {
			if pl := m.Payload(); pl != nil {
				if after, ok := pl["after"].(map[string]any); ok && after[column] == float64(id) {
					return true
				}
			}
		}
		return false
	})
}

// KilledBy reports whether the process ended by SIGKILL.
func (p *Proc) KilledBy(sig syscall.Signal) bool {
	ws, ok := p.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func TestTableName(label string) string {
	return fmt.Sprintf("tributary-it-%s-%d-%04d", label, os.Getpid()%100000, rand.IntN(10000))
}

// DynamoItem reads a pipeline's item from the emulator (nil: none).
func DynamoItem(t *testing.T, table, pipeline string) map[string]types.AttributeValue {
	t.Helper()
	it, err := getDynamoItem(table, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// DynamoItemQuiet is dynamoItem for background goroutines: nil on errors.
func DynamoItemQuiet(table, pipeline string) map[string]types.AttributeValue {
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

func AttrS(it map[string]types.AttributeValue, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func AttrN(it map[string]types.AttributeValue, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberN); ok {
		return s.Value
	}
	return ""
}

// CreateTables creates the scenario tables on b, or fails the test.
func CreateTables(t *testing.T, b Backend, tables ...string) {
	t.Helper()
	for _, table := range tables {
		for _, q := range b.CreateTable(table) {
			if err := b.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// WithDynamoStore makes the config at path checkpoint in the DynamoDB
// table (writePipeline writes the checkpoint section last).
func WithDynamoStore(t *testing.T, path, table string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), "checkpoint:\n")
	if i < 0 {
		t.Fatalf("no checkpoint section in %s", path)
	}
	if err := os.WriteFile(path, []byte(string(b[:i])+"checkpoint:\n"+DynamoCheckpoint(table)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
