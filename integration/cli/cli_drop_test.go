package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestDropPostgres: after run (exactly_once, file store), drop refuses
// while run holds the pipeline, refuses without --yes when stdin is no
// terminal, and with --yes removes the slot, the publication Tributary
// created, the checkpoint files and the offsets record (a tombstone); a
// second drop finds nothing left, and a new run starts afresh.
func TestDropPostgres(t *testing.T) {
	e := itest.NewEnv(t, "drop")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY, note text)`)
	e.Exec(`INSERT INTO items SELECT g, 'n' FROM generate_series(1, 5) g`)
	dir := filepath.Join(e.Dir, "checkpoints")
	cfg := e.WritePipeline(itest.PipelineConfig{Checkpoint: "  path: " + dir + "\n" + itest.ExactlyOnceLines})
	slot := `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`
	pub := `SELECT count(*) FROM pg_publication WHERE pubname = $1`
	name := "tributary_" + e.Name

	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 90*time.Second, "the offsets record of the backfill", func() bool { return e.OffsetsRecord(t) })
	if code, out := e.Drop(t, cfg, "--yes"); code != 1 || !strings.Contains(out, "is running") || !strings.Contains(out, "stop it first") {
		t.Errorf("drop while running: exit %d, want 1 saying it is running\n%s", code, out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	if e.PGCount(t, slot, name) != 1 || e.PGCount(t, pub, name) != 1 {
		t.Fatalf("after run: want the slot and the publication %s", name)
	}

	code, out := e.Drop(t, cfg)
	if code != 2 || !strings.Contains(out, "--yes") || !strings.Contains(out, "replication slot "+name) {
		t.Errorf("drop without --yes nor a terminal: exit %d, want 2 listing the slot and asking for --yes\n%s", code, out)
	}
	if e.PGCount(t, slot, name) != 1 {
		t.Fatalf("drop without --yes removed the slot\n%s", out)
	}

	code, out = e.Drop(t, cfg, "--yes")
	if code != 0 {
		t.Fatalf("drop --yes: exit %d\n%s", code, out)
	}
	for _, want := range []string{"replication slot " + name, "publication " + name, "offsets record", ".checkpoint.json", "dropped pipeline"} {
		if !strings.Contains(out, want) {
			t.Errorf("drop --yes does not list %q\n%s", want, out)
		}
	}
	if n := e.PGCount(t, slot, name); n != 0 {
		t.Errorf("after drop: %d slots named %s, want 0", n, name)
	}
	if n := e.PGCount(t, pub, name); n != 0 {
		t.Errorf("after drop: %d publications named %s, want 0", n, name)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, e.Name+".*")); len(left) > 0 {
		t.Errorf("after drop: files left in the store: %v", left)
	}
	if e.OffsetsRecord(t) {
		t.Errorf("after drop: the offsets topic still holds the pipeline's record")
	}

	if code, out := e.Drop(t, cfg, "--yes"); code != 0 || !strings.Contains(out, "nothing left") {
		t.Errorf("second drop: exit %d, want 0 saying nothing is left\n%s", code, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, e.Name+".*")); len(left) > 0 {
		t.Errorf("after the second drop: files left in the store: %v", left)
	}
}

// TestDropKeepsAPublicationItDidNotCreate: a publication made by hand
// (source.publication) stays, and drop says how to remove it.
func TestDropKeepsAPublicationItDidNotCreate(t *testing.T) {
	e := itest.NewEnv(t, "dropkeep")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.Exec(`CREATE PUBLICATION mine FOR TABLE items`)
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  publication: mine\n"})
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "the slot", func() bool {
		return e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.Name) == 1
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	code, out := e.Drop(t, cfg, "--yes")
	if code != 0 || !strings.Contains(out, `DROP PUBLICATION "mine"`) || !strings.Contains(out, "keeps") {
		t.Errorf("drop: exit %d, want 0 keeping publication mine and naming DROP PUBLICATION\n%s", code, out)
	}
	if n := e.PGCount(t, `SELECT count(*) FROM pg_publication WHERE pubname = 'mine'`); n != 1 {
		t.Errorf("after drop: the hand-made publication is gone")
	}
}

// TestDropMySQLDynamoDB: with the DynamoDB store, drop refuses while run
// renews the lease; after run stopped it removes the pipeline's signal
// table rows and its item; a second drop finds nothing left.
func TestDropMySQLDynamoDB(t *testing.T) {
	awsCfg := awstest.Env(t)
	e := itest.NewMyEnv(t, "dropmy")
	e.Exec("CREATE TABLE items (id INT PRIMARY KEY)")
	e.Exec("INSERT INTO items VALUES (1), (2), (3)")
	table := awstest.Name("drop-")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), Checkpoint: itest.DynamoCheckpoint(table)})
	signalRows := func() int {
		r := e.Exec("SELECT COUNT(*) FROM " + e.DB + ".tributary_signal WHERE id NOT LIKE 'check'")
		n, _ := r.GetInt(0, 0)
		return int(n)
	}
	p := e.StartWith([]string{"TRIBUTARY_LEASE_DURATION=3s"}, "run", "--config", cfg)
	p.WaitFor(t, 90*time.Second, "the backfill's watermarks", func() bool {
		r, err := e.My.Execute("SELECT COUNT(*) FROM " + e.DB + ".tributary_signal")
		if err != nil {
			return false
		}
		n, _ := r.GetInt(0, 0)
		return n > 0 && itest.TopicEnd(e.Prefix+"."+e.DB+".items") >= 3
	})
	if code, out := e.Drop(t, cfg, "--yes"); code != 1 || !strings.Contains(out, "is running") {
		t.Errorf("drop while running: exit %d, want 1 saying it is running\n%s", code, out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	if signalRows() == 0 {
		t.Fatal("after run: no signal rows")
	}
	code, out := e.Drop(t, cfg, "--yes")
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
		if k, _ := it["pipeline"].(*types.AttributeValueMemberS); k != nil && strings.HasPrefix(k.Value, e.Name) {
			t.Errorf("after drop: item %s left in %s", k.Value, table)
		}
	}
	if code, out := e.Drop(t, cfg, "--yes"); code != 0 || !strings.Contains(out, "nothing left") {
		t.Errorf("second drop: exit %d, want 0 saying nothing is left\n%s", code, out)
	}
}

// TestDropMySQLRunningElsewhere: drop from a copy of a running MariaDB
// pipeline's config with another checkpoint path (another host: the
// running task's file lock is not in the way) is refused, exit 1 naming
// the running reader, as PostgreSQL refuses to drop a slot in use: the
// running task keeps its signal rows and offsets record, and its
// exactly-once producer is not fenced. Once it has stopped, the same drop
// removes them.
func TestDropMySQLRunningElsewhere(t *testing.T) {
	e := itest.NewMyEnv(t, "dropmyrun")
	e.Exec("CREATE TABLE items (id INT PRIMARY KEY)")
	e.Exec("INSERT INTO items VALUES (1), (2), (3)")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(),
		Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + itest.ExactlyOnceLines})
	other := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), File: "elsewhere.yaml",
		Checkpoint: "  path: " + filepath.Join(e.Dir, "elsewhere") + "\n" + itest.ExactlyOnceLines})
	signalRows := func() int {
		r := e.Exec("SELECT COUNT(*) FROM " + e.DB + ".tributary_signal WHERE id NOT LIKE 'check'")
		n, _ := r.GetInt(0, 0)
		return int(n)
	}
	topic := e.Prefix + "." + e.DB + ".items"
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 90*time.Second, "the backfill and its offsets record", func() bool {
		return itest.TopicEnd(topic) >= 3 && e.OffsetsRecord(t)
	})
	before := signalRows()
	code, out := e.Drop(t, other, "--yes")
	if code != 1 || !strings.Contains(out, "in use by another reader") || !strings.Contains(out, "is running") {
		t.Errorf("drop of a pipeline running elsewhere: exit %d, want 1 saying it runs\n%s", code, out)
	}
	if n := signalRows(); n != before || before == 0 {
		t.Errorf("signal rows %d before the refused drop, %d after", before, n)
	}
	if !e.OffsetsRecord(t) {
		t.Error("the refused drop removed the running pipeline's offsets record")
	}
	e.Exec("INSERT INTO items VALUES (4)")
	p.WaitFor(t, 30*time.Second, "a change after the refused drop", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run after the refused drop: exit %d (fenced?)\n%s", code, p.Out)
	}
	code, out = e.Drop(t, other, "--yes")
	if code != 0 || !strings.Contains(out, "signal table rows") || !strings.Contains(out, "offsets record") {
		t.Errorf("drop once stopped: exit %d, want 0 removing the signal rows and the offsets record\n%s", code, out)
	}
	if n := signalRows(); n != 0 {
		t.Errorf("after drop: %d signal rows of the pipeline, want 0", n)
	}
}

// TestDropKeepsAnotherPipelinesSlot: slot names are server-wide, so a
// pipeline that never ran may name a slot another pipeline streams from:
// one of the same name on another database of the server, or one whose
// source.slot names it. Its drop must keep that slot, saying why; the
// owner's drop still removes it.
func TestDropKeepsAnotherPipelinesSlot(t *testing.T) {
	a := itest.NewEnv(t, "dropowna")
	a.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	a.Exec(`INSERT INTO items VALUES (1)`)
	cfgA := a.WritePipeline(itest.PipelineConfig{})
	slotName := "tributary_" + a.Name
	slot := `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`
	p := a.Start("run", "--config", cfgA)
	p.WaitFor(t, 60*time.Second, "the first checkpoint", func() bool {
		_, err := os.Stat(filepath.Join(a.Dir, "checkpoints", a.Name+".checkpoint.json"))
		return err == nil
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	if a.PGCount(t, slot, slotName) != 1 {
		t.Fatalf("after run: no slot %s", slotName)
	}

	// The same pipeline name on another database of the server, with a
	// checkpoint store of its own: it never ran.
	b := itest.NewEnv(t, "dropownb")
	b.Name = a.Name
	cfgB := b.WritePipeline(itest.PipelineConfig{})
	code, out := b.Drop(t, cfgB, "--yes")
	if code != 0 || !strings.Contains(out, "replication slot "+slotName+": ") || !strings.Contains(out, a.DB) {
		t.Errorf("drop of the namesake on database %s: exit %d, want 0 keeping slot %s of database %s\n%s", b.DB, code, slotName, a.DB, out)
	}
	if a.PGCount(t, slot, slotName) != 1 {
		t.Fatalf("drop of the namesake on database %s removed slot %s of database %s\n%s", b.DB, slotName, a.DB, out)
	}

	// Another pipeline on A's database whose source.slot names A's slot:
	// it never ran either.
	c := &itest.Env{T: t, Name: a.Name + "_c", DB: a.DB, Prefix: a.Prefix + "-c", Dir: t.TempDir(), Conn: a.Conn}
	cfgC := c.WritePipeline(itest.PipelineConfig{Source: "  slot: " + slotName + "\n"})
	code, out = c.Drop(t, cfgC, "--yes")
	if code != 0 || !strings.Contains(out, "replication slot "+slotName+": ") || !strings.Contains(out, "pg_drop_replication_slot") {
		t.Errorf("drop of a pipeline whose source.slot names %s: exit %d, want 0 keeping it and saying how to drop it\n%s", slotName, code, out)
	}
	if a.PGCount(t, slot, slotName) != 1 {
		t.Fatalf("drop of a pipeline whose source.slot names %s removed it\n%s", slotName, out)
	}

	// While the owner reads the slot, that drop refuses: the reader may
	// be this very pipeline, run with another checkpoint store.
	p = a.Start("run", "--config", cfgA)
	p.WaitFor(t, 60*time.Second, "the owner streaming", func() bool {
		return a.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND active`, slotName) == 1
	})
	if code, out := c.Drop(t, cfgC, "--yes"); code != 1 || !strings.Contains(out, "in use") {
		t.Errorf("drop of a pipeline whose source.slot names %s while its owner reads it: exit %d, want 1 saying it is in use\n%s", slotName, code, out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}

	// The owner's drop removes it.
	if code, out := a.Drop(t, cfgA, "--yes"); code != 0 || !strings.Contains(out, "dropped pipeline") {
		t.Fatalf("drop of the owner: exit %d\n%s", code, out)
	}
	if a.PGCount(t, slot, slotName) != 0 {
		t.Errorf("drop of the owner kept slot %s", slotName)
	}
}

// TestDropMySQLRunningElsewhereLeased: a copy of a running MariaDB
// pipeline's config that names the DynamoDB store (another store, table or
// region than the running task's) takes a lease of its own, which fences
// nothing that runs: its drop must still refuse while the pipeline's
// reader is registered, and leave the running task's signal rows, offsets
// record and exactly-once producer alone.
func TestDropMySQLRunningElsewhereLeased(t *testing.T) {
	awstest.Env(t)
	e := itest.NewMyEnv(t, "dropmylease")
	e.Exec("CREATE TABLE items (id INT PRIMARY KEY)")
	e.Exec("INSERT INTO items VALUES (1), (2), (3)")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(),
		Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + itest.ExactlyOnceLines})
	other := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), File: "elsewhere.yaml",
		Checkpoint: itest.DynamoCheckpoint(awstest.Name("droplease-")) + itest.ExactlyOnceLines})
	signalRows := func() int {
		r := e.Exec("SELECT COUNT(*) FROM " + e.DB + ".tributary_signal WHERE id NOT LIKE 'check'")
		n, _ := r.GetInt(0, 0)
		return int(n)
	}
	topic := e.Prefix + "." + e.DB + ".items"
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 90*time.Second, "the backfill and its offsets record", func() bool {
		return itest.TopicEnd(topic) >= 3 && e.OffsetsRecord(t)
	})
	before := signalRows()
	code, out := e.Drop(t, other, "--yes")
	if code != 1 || !strings.Contains(out, "in use by another reader") {
		t.Errorf("drop from a copy with another (leased) store: exit %d, want 1 saying the pipeline runs\n%s", code, out)
	}
	if n := signalRows(); n != before || before == 0 {
		t.Errorf("signal rows %d before the refused drop, %d after", before, n)
	}
	if !e.OffsetsRecord(t) {
		t.Error("the refused drop removed the running pipeline's offsets record")
	}
	e.Exec("INSERT INTO items VALUES (4)")
	p.WaitFor(t, 30*time.Second, "a change after the refused drop", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run after the refused drop: exit %d (fenced?)\n%s", code, p.Out)
	}
}

// TestDropPGRunningElsewhereLeased: the pipeline ran once with the DynamoDB
// store, whose checkpoint names its slot, and now runs with the file store
// (another host, or a switch of stores). A drop with the DynamoDB config
// takes that store's lease, which fences nothing that runs: it must wait
// for the slot's reader and refuse, never end the running task's
// walsender and drop its slot.
func TestDropPGRunningElsewhereLeased(t *testing.T) {
	awstest.Env(t)
	e := itest.NewEnv(t, "droppglease")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO items VALUES (1), (2), (3)`)
	leased := e.WritePipeline(itest.PipelineConfig{File: "leased.yaml", Checkpoint: itest.DynamoCheckpoint(awstest.Name("droppglease-"))})
	file := e.WritePipeline(itest.PipelineConfig{Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n"})
	topic := e.Prefix + ".public.items"
	first := e.Start("run", "--config", leased)
	first.WaitFor(t, 90*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 3 })
	if code := first.Stop(t); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, first.Out)
	}
	p := e.Start("run", "--config", file)
	slotName := "tributary_" + e.Name
	active := `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND active`
	p.WaitFor(t, 90*time.Second, "the file-store run reading the slot", func() bool { return e.PGCount(t, active, slotName) == 1 })
	code, out := e.Drop(t, leased, "--yes")
	if code != 1 || !strings.Contains(out, "in use by another reader") {
		t.Errorf("drop from the leased store while the pipeline runs elsewhere: exit %d, want 1 saying the slot is read\n%s", code, out)
	}
	e.Exec(`INSERT INTO items VALUES (4)`)
	p.WaitFor(t, 30*time.Second, "a change after the refused drop", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run after the refused drop: exit %d (its walsender ended?)\n%s", code, p.Out)
	}
}
