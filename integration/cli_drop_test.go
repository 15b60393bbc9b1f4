package integration

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// drop runs `tributary drop` with args (stdin not a terminal) and
// returns its exit code and output.
func (e *env) drop(t *testing.T, cfg string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"drop", "--config", cfg}, args...)...)
	cmd.Dir = e.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("drop: %v\n%s", err, out)
	}
	return 0, string(out)
}

// pgCount counts what a catalog query finds.
func (e *env) pgCount(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// offsetsRecord says whether the offsets topic holds a committed record
// of the pipeline.
func (e *env) offsetsRecord(t *testing.T) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, found, err := kafka.ReadLastCommitted(ctx, kafka.Options{BootstrapServers: kafkaAddr, DisableTLS: true},
		e.prefix+"."+config.OffsetsTopicSuffix, []byte(e.name))
	if err != nil {
		t.Fatalf("read the offsets topic: %v", err)
	}
	return found
}

// TestDropPostgres: after run (exactly_once, file store), drop refuses
// while run holds the pipeline, refuses without --yes when stdin is no
// terminal, and with --yes removes the slot, the publication Tributary
// created, the checkpoint files and the offsets record (a tombstone); a
// second drop finds nothing left, and a new run starts afresh.
func TestDropPostgres(t *testing.T) {
	e := newEnv(t, "drop")
	e.exec(`CREATE TABLE items (id int PRIMARY KEY, note text)`)
	e.exec(`INSERT INTO items SELECT g, 'n' FROM generate_series(1, 5) g`)
	dir := filepath.Join(e.dir, "checkpoints")
	cfg := e.writePipeline(pipelineConfig{checkpoint: "  path: " + dir + "\n" + exactlyOnceLines})
	slot := `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`
	pub := `SELECT count(*) FROM pg_publication WHERE pubname = $1`
	name := "tributary_" + e.name

	p := e.start("run", "--config", cfg)
	p.waitFor(t, 90*time.Second, "the offsets record of the backfill", func() bool { return e.offsetsRecord(t) })
	if code, out := e.drop(t, cfg, "--yes"); code != 1 || !strings.Contains(out, "is running") || !strings.Contains(out, "stop it first") {
		t.Errorf("drop while running: exit %d, want 1 saying it is running\n%s", code, out)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.out)
	}
	if e.pgCount(t, slot, name) != 1 || e.pgCount(t, pub, name) != 1 {
		t.Fatalf("after run: want the slot and the publication %s", name)
	}

	code, out := e.drop(t, cfg)
	if code != 2 || !strings.Contains(out, "--yes") || !strings.Contains(out, "replication slot "+name) {
		t.Errorf("drop without --yes nor a terminal: exit %d, want 2 listing the slot and asking for --yes\n%s", code, out)
	}
	if e.pgCount(t, slot, name) != 1 {
		t.Fatalf("drop without --yes removed the slot\n%s", out)
	}

	code, out = e.drop(t, cfg, "--yes")
	if code != 0 {
		t.Fatalf("drop --yes: exit %d\n%s", code, out)
	}
	for _, want := range []string{"replication slot " + name, "publication " + name, "offsets record", ".checkpoint.json", "dropped pipeline"} {
		if !strings.Contains(out, want) {
			t.Errorf("drop --yes does not list %q\n%s", want, out)
		}
	}
	if n := e.pgCount(t, slot, name); n != 0 {
		t.Errorf("after drop: %d slots named %s, want 0", n, name)
	}
	if n := e.pgCount(t, pub, name); n != 0 {
		t.Errorf("after drop: %d publications named %s, want 0", n, name)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, e.name+".*")); len(left) > 0 {
		t.Errorf("after drop: files left in the store: %v", left)
	}
	if e.offsetsRecord(t) {
		t.Errorf("after drop: the offsets topic still holds the pipeline's record")
	}

	if code, out := e.drop(t, cfg, "--yes"); code != 0 || !strings.Contains(out, "nothing left") {
		t.Errorf("second drop: exit %d, want 0 saying nothing is left\n%s", code, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, e.name+".*")); len(left) > 0 {
		t.Errorf("after the second drop: files left in the store: %v", left)
	}
}

// TestDropKeepsAPublicationItDidNotCreate: a publication made by hand
// (source.publication) stays, and drop says how to remove it.
func TestDropKeepsAPublicationItDidNotCreate(t *testing.T) {
	e := newEnv(t, "dropkeep")
	e.exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.exec(`CREATE PUBLICATION mine FOR TABLE items`)
	cfg := e.writePipeline(pipelineConfig{source: "  publication: mine\n"})
	p := e.start("run", "--config", cfg)
	p.waitFor(t, 60*time.Second, "the slot", func() bool {
		return e.pgCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.name) == 1
	})
	if code := p.stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.out)
	}
	code, out := e.drop(t, cfg, "--yes")
	if code != 0 || !strings.Contains(out, `DROP PUBLICATION "mine"`) || !strings.Contains(out, "keeps") {
		t.Errorf("drop: exit %d, want 0 keeping publication mine and naming DROP PUBLICATION\n%s", code, out)
	}
	if n := e.pgCount(t, `SELECT count(*) FROM pg_publication WHERE pubname = 'mine'`); n != 1 {
		t.Errorf("after drop: the hand-made publication is gone")
	}
}

// TestDropMySQLDynamoDB: with the DynamoDB store, drop refuses while run
// renews the lease; after run stopped it removes the pipeline's signal
// table rows and its item; a second drop finds nothing left.
func TestDropMySQLDynamoDB(t *testing.T) {
	awsCfg := awstest.Env(t)
	e := newMyEnv(t, "dropmy")
	e.exec("CREATE TABLE items (id INT PRIMARY KEY)")
	e.exec("INSERT INTO items VALUES (1), (2), (3)")
	table := awstest.Name("drop-")
	cfg := e.writePipeline(pipelineConfig{typ: "mysql", url: e.url(), checkpoint: dynamoCheckpoint(table)})
	signalRows := func() int {
		r := e.exec("SELECT COUNT(*) FROM " + e.db + ".tributary_signal WHERE id NOT LIKE 'check'")
		n, _ := r.GetInt(0, 0)
		return int(n)
	}
	p := e.startWith([]string{"TRIBUTARY_LEASE_DURATION=3s"}, "run", "--config", cfg)
	p.waitFor(t, 90*time.Second, "the backfill's watermarks", func() bool {
		r, err := e.my.Execute("SELECT COUNT(*) FROM " + e.db + ".tributary_signal")
		if err != nil {
			return false
		}
		n, _ := r.GetInt(0, 0)
		return n > 0 && topicEnd(e.prefix+"."+e.db+".items") >= 3
	})
	if code, out := e.drop(t, cfg, "--yes"); code != 1 || !strings.Contains(out, "is running") {
		t.Errorf("drop while running: exit %d, want 1 saying it is running\n%s", code, out)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.out)
	}
	if signalRows() == 0 {
		t.Fatal("after run: no signal rows")
	}
	code, out := e.drop(t, cfg, "--yes")
	if code != 0 || !strings.Contains(out, "signal table rows") || !strings.Contains(out, "DynamoDB table "+table) {
		t.Fatalf("drop --yes: exit %d, want 0 listing the signal rows and the item\n%s", code, out)
	}
	if n := signalRows(); n != 0 {
		t.Errorf("after drop: %d signal rows of the pipeline, want 0", n)
	}
	ddb := dynamodb.NewFromConfig(awsCfg)
	got, err := ddb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got.Items {
		if k, _ := it["pipeline"].(*types.AttributeValueMemberS); k != nil && strings.HasPrefix(k.Value, e.name) {
			t.Errorf("after drop: item %s left in %s", k.Value, table)
		}
	}
	if code, out := e.drop(t, cfg, "--yes"); code != 0 || !strings.Contains(out, "nothing left") {
		t.Errorf("second drop: exit %d, want 0 saying nothing is left\n%s", code, out)
	}
}
