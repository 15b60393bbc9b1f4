package scenario_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// allFeatures are the workload's named switches (ORACLE_FEATURES, comma
// separated; default all). Inserts, updates and deletes are always on.
var allFeatures = []string{
	"keyupdate",  // UPDATE of the primary key: delete of the old key, create of the new
	"multitable", // transactions that change several tables
	"savepoint",  // SAVEPOINT, changes, ROLLBACK TO SAVEPOINT inside committed transactions (and in the big one)
	"rollback",   // whole transactions rolled back
	"bigtx",      // one transaction of ORACLE_BIG_ROWS rows, with a kill aimed at its streaming
	"truncate",   // TRUNCATE TABLE: nothing published (Debezium's default for both sources)
	"ddl",        // add, rename, change type, drop a column while streaming
	"ddlstopped", // rows, then a column that shifts the others, then rows, all while the publisher is down
	"tables",     // a table added to source.tables (backfilled, then streamed) and one removed
	"nulls",      // NULL text values
	"large",      // rows just under and over max_message_bytes (over: row.skipped, no message)
	"encodings",  // text in several scripts (utf8mb4, latin1 columns on MariaDB)
	"startkill",  // SIGKILL in the first second of a start: the first publisher once its backfill is on the topics, later ones now and then (scenario_startkill_test.go)
	"bfstopped",  // `tributary backfill --table` while the pipeline is stopped (SIGTERM), served by the next run (scenario_startkill_test.go)
}

// shapeFeatures are named too but not part of "all" (ORACLE_FEATURES=all,toast
// adds one): each aims at one narrow way to lose or mis-key a change and
// costs time, so the soak runs them all and `make test` only some
// (Makefile, ORACLE_PG_TEST_FEATURES; integration/scenario/scenario_shapes_test.go).
var shapeFeatures = []string{
	"toast",       // a table of 6 KB TOASTed values (MariaDB: MEDIUMTEXT), updates that leave them alone, during the backfill too
	"charsets",    // MariaDB: a column per table in a non-UTF-8 character set, ENUM and SET members with commas, quotes, spaces
	"keyless",     // a table without a primary key (PostgreSQL: REPLICA IDENTITY FULL)
	"identity",    // PostgreSQL: a table with REPLICA IDENTITY USING INDEX of a unique index that is not the primary key
	"dropstopped", // while the publisher is down: changes to a table, DROP TABLE, CREATE TABLE of the same name, rows (scenario_dropstopped_test.go)
	"switch",      // delivery switched between at_least_once and exactly_once between publishers now and then (scenario_switch_test.go)
	"refuse",      // one table's topic refusing writes for 15-30 s while the others take them (scenario_refuse_test.go)
}

type features map[string]bool

func (f features) on(name string) bool { return f[name] }

func (f features) String() string {
	var on []string
	for _, n := range slices.Concat(allFeatures, shapeFeatures) {
		if f[n] {
			on = append(on, n)
		}
	}
	return strings.Join(on, ",")
}

// parseFeatures reads ORACLE_FEATURES_<SOURCE> (e.g. ORACLE_FEATURES_MARIADB)
// or else ORACLE_FEATURES.
func parseFeatures(t *testing.T, kind string) features {
	f := features{}
	s, ok := os.LookupEnv("ORACLE_FEATURES_" + strings.ToUpper(kind))
	if !ok {
		s = os.Getenv("ORACLE_FEATURES")
	}
	if s == "" {
		s = "all"
	}
	known := slices.Concat(allFeatures, shapeFeatures)
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "" || n == "none":
		case n == "all":
			for _, n := range allFeatures {
				f[n] = true
			}
		case !slices.Contains(known, n):
			t.Fatalf("ORACLE_FEATURES: unknown feature %q; known: all,%s", n, strings.Join(known, ","))
		default:
			f[n] = true
		}
	}
	return f
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a whole number", name, s)
	}
	return n
}

// TestRandomOracle is the randomized workload oracle, on every source: a
// seeded generator commits and rolls back transactions of every shape in
// allFeatures while the publisher is SIGKILLed at random moments and
// restarted; then the checker reads every topic, the row.skipped records
// and the database (checkOracle). ORACLE_SEED replays a workload,
// ORACLE_SECONDS sets how long it writes, ORACLE_BIG_ROWS the size of the
// big transaction, ORACLE_FEATURES (or ORACLE_FEATURES_POSTGRES,
// ORACLE_FEATURES_MARIADB) which shapes it makes, ORACLE_DELIVERY=exactly_once
// the delivery (scenario_oracle_eos_test.go).
func TestRandomOracle(t *testing.T) {
	itest.SkipShort(t)
	seed := oracleSeed(t)
	d := time.Duration(envInt(t, "ORACLE_SECONDS", 40)) * time.Second
	bigRows := envInt(t, "ORACLE_BIG_ROWS", 50_000)
	itest.ForEachBackend(t, "rnd", func(t *testing.T, b itest.Backend) {
		f := parseFeatures(t, b.Kind())
		t.Logf("seed %d, features %s; replay: ORACLE_SEED=%d ORACLE_FEATURES=%s go test -count=1 -v -run 'TestRandomOracle/%s' ./integration/scenario/",
			seed, f, seed, f, b.Kind())
		runRandomOracle(t, b, seed, f, d, bigRows)
	})
}

// oracleSeed is ORACLE_SEED, or a random seed.
func oracleSeed(t *testing.T) uint64 { return envSeed(t, "ORACLE_SEED") }

// envSeed is the seed the environment variable name gives, or a random
// one (printed by the test that takes it, so that it replays).
func envSeed(t *testing.T, name string) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return uint64(time.Now().UnixNano() % 1_000_000)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want a whole number", name, s)
	}
	return n
}

const oracleMaxBytes = 128 << 10 // max_message_bytes when "large" is on

// oracleRun is what the controller did, for the checker.
type oracleRun struct {
	b          itest.Backend
	w          *workload
	initial    int
	configured map[string]bool  // tables in source.tables at the end
	fromStart  map[string]bool  // configured from the start and never removed
	added      map[string]int64 // table → seq when it was added to source.tables
	removed    map[string]int64 // table → seq when it was removed
	kills      int
	crashes    []string // output tails of incarnations that exited on their own
	// exactlyOnce: delivery exactly_once (ORACLE_DELIVERY); the checker
	// reads read_committed and fails on duplicates.
	exactlyOnce bool
	// eos is the delivery of the current publisher (exactlyOnce at first;
	// switch flips it through switches), periods the times it changed.
	eos      bool
	switches *switcher
	periods  []deliveryPeriod
	// refusing: a topic refuses writes (refuse); lastEOS: when the last
	// exactly_once publisher stopped. Both under w.mu.
	refusing bool
	lastEOS  time.Time
}

func runRandomOracle(t *testing.T, b itest.Backend, seed uint64, f features, d time.Duration, bigRows int) {
	tables := []string{"t1", "t2", "t3", "t4"}
	// done is captured from the start and written once, after the
	// workload: the publisher has emitted every change once its row is on
	// done's topic. Not part of the model (the checker reads tables only).
	const done = "tdone"
	if f.on("dropstopped") {
		tables = append(tables, dropTable)
	}
	for _, tb := range append(tables, done) {
		for _, s := range b.CreateTable(tb) {
			if err := b.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	w := newWorkload(b, seed, f, tables, oracleMaxBytes, bigRows)
	if err := w.addShapes(); err != nil {
		t.Fatal(err)
	}
	tables = w.tables
	if f.on("refuse") {
		t.Setenv("TRIBUTARY_TEST_TRANSACTION_TIMEOUT", refuseTxnTimeout.String())
	}
	if w.toastTable() != "" {
		t.Setenv("TRIBUTARY_SNAPSHOT_CHUNK_ROWS", "50") // many chunk windows for the early updates to fall in
	}
	const initial = 100
	if err := w.seedRows(initial); err != nil {
		t.Fatal(err)
	}
	run := &oracleRun{b: b, w: w, configured: map[string]bool{}, fromStart: map[string]bool{},
		added: map[string]int64{}, removed: map[string]int64{}, exactlyOnce: oracleExactlyOnce(t)}
	for _, tb := range tables {
		if tb != "t4" || !f.on("tables") {
			run.configured[tb], run.fromStart[tb] = true, true
			if tb != w.toastTable() { // its backfill is to meet the writer
				run.initial += initial
			}
		}
	}
	destExtra := ""
	if f.on("large") {
		destExtra = fmt.Sprintf("  max_message_bytes: %d\n", oracleMaxBytes)
	}
	run.eos = run.exactlyOnce
	if run.eos {
		run.lastEOS = time.Now().Add(time.Duration(1 << 62)) // exactly_once throughout: no refusals
	}
	if f.on("switch") {
		run.switches = newSwitcher(seed)
	}
	writeCfg := func() string {
		destExtra := destExtra
		if run.eos {
			destExtra += itest.ExactlyOnceLines // a top-level line: it ends the destination section
		}
		list := []string{done}
		for _, tb := range tables {
			if run.configured[tb] {
				list = append(list, tb)
			}
		}
		return b.Config(list, destExtra)
	}
	cfg := writeCfg()
	e := b.Env()
	start := func() *itest.Proc {
		run.started()
		return e.Start("run", "--config", cfg)
	}
	backfilled := func() bool {
		var n int64
		for tb := range run.fromStart {
			if tb != w.toastTable() {
				n += itest.TopicEnd(b.Topic(tb))
			}
		}
		return n >= int64(run.initial)
	}
	sk := newStartKiller(seed)
	var p *itest.Proc
	if f.on("startkill") {
		run.started()
		p = sk.first(t, w, e, cfg, start, backfilled)
	} else {
		p = start()
	}
	itest.WaitFor(t, 90*time.Second, "the backfill", backfilled)
	if tb := w.toastTable(); tb != "" {
		t.Logf("toast: %d of the %d rows of %s on its topic when the writer starts", itest.TopicEnd(b.Topic(tb)), toastSeedRows, tb)
	}

	// The writer, pausing up to ORACLE_TX_PAUSE_MS between transactions.
	pause := envInt(t, "ORACLE_TX_PAUSE_MS", 2)
	prng := rand.New(rand.NewPCG(seed, 0x9a05e))
	ctx, cancel := context.WithCancel(context.Background())
	werr := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := w.step(); err != nil {
				werr <- err
				return
			}
			time.Sleep(time.Duration(prng.IntN(pause+1)) * time.Millisecond)
		}
		werr <- nil
	}()
	var ref *refuser
	if f.on("refuse") {
		ref = startRefuser(ctx, t, run, seed)
	}

	// The controller: SIGKILL at random moments (and soon after the big
	// transaction commits), restart; while down, change the configuration
	// or the tables' shape.
	krng := rand.New(rand.NewPCG(seed, 0xc0de))
	deadline := time.Now().Add(d)
	bigDone := w.bigDone
	minKills := 3
	if f.on("tables") {
		minKills = 5
	}
	var prevOut string // the last killed publisher's output tail
	for (time.Now().Before(deadline) || run.kills < minKills) && len(run.crashes) < 5 {
		wait := time.Duration(1500+krng.IntN(3500)) * time.Millisecond
		select {
		case <-time.After(wait):
		case <-bigDone:
			bigDone = nil
			t.Log(aimAtBigTx(b.Topic(tables[0]), filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json"), bigRows))
		}
		if p.Exited() {
			if len(run.crashes) == 0 && prevOut != "" {
				// The first crash's cause is often in what the publisher
				// before it did: its last lines, once.
				t.Logf("%s: the publisher before the first crash (killed) logged, last lines:\n%s", b.Kind(), prevOut)
			}
			run.crashes = append(run.crashes, itest.Tail(p.Out.String(), 600))
			t.Errorf("%s: the publisher exited on its own (%v):\n%s", b.Kind(), p.Err, itest.Tail(p.Out.String(), 600))
		} else {
			p.Kill()
			run.kills++
			prevOut = itest.Tail(p.Out.String(), 6000)
		}
		w.mu.Lock()
		switch {
		case f.on("tables") && run.kills == 2:
			run.configured["t4"], run.added["t4"] = true, w.seq
			cfg = writeCfg()
		case f.on("tables") && run.kills == 4:
			delete(run.configured, "t3")
			delete(run.fromStart, "t3")
			run.removed["t3"] = w.seq
			cfg = writeCfg()
		case f.on("ddlstopped") && run.kills%3 == 0:
			if err := w.whileDown(); err != nil {
				t.Errorf("while down: %v", err)
			}
		case f.on("bfstopped") && run.kills == 1:
			oracleBackfillWhileStopped(t, run, start, cfg)
		case f.on("dropstopped") && run.kills%3 == 2:
			if err := w.dropWhileDown(); err != nil {
				t.Errorf("dropstopped: %v", err)
			}
		}
		if run.switches != nil && run.switches.maybe(run) {
			cfg = writeCfg()
		}
		w.mu.Unlock()
		p = start()
		if f.on("startkill") {
			p = sk.maybe(t, w, p, start)
		}
	}
	cancel()
	if err := <-werr; err != nil {
		t.Errorf("writer: %v", err)
	}
	if ref != nil {
		ref.wait()
		t.Logf("refuse: %d topics refused writes for a while", ref.rounds)
	}

	// Catch up: the done row on its topic means every change before it
	// was emitted; then the topics still (the last acks) and a graceful
	// stop. Counting messages would not do: duplicates make up the count
	// while a restarted publisher has not yet replayed everything.
	if err := b.Exec(w.insertSQL(done, 1, w.seq+1, vexp{}, "")); err != nil {
		t.Fatalf("the done row: %v", err)
	}
	still := topicsStill(b, func() []string { return tables })
	caughtUp := func() bool { return itest.TopicEnd(b.Topic(done)) >= 1 && still() }
	// A soak's publisher can end far behind its writer on a loaded machine
	// (every kill replays from the last checkpoint): give it a quarter of
	// the writing time, and say so if it still has not caught up, rather
	// than report the changes it has yet to publish as gaps.
	wait := max(180*time.Second, d/4)
	caught := false
	for end := time.Now().Add(wait); time.Now().Before(end); {
		if caught = caughtUp(); caught || p.Exited() {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if !caught && !p.Exited() {
		p.Stop(t)
		t.Fatalf("%s: the publisher did not catch up within %v of the writer's end (the done row is not on its topic, or the topics still grow); seed %d", b.Kind(), wait, seed)
	}
	if p.Exited() {
		run.crashes = append(run.crashes, itest.Tail(p.Out.String(), 600))
		t.Errorf("%s: the last publisher exited on its own (%v):\n%s", b.Kind(), p.Err, itest.Tail(p.Out.String(), 600))
	} else if code := p.Stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM; output:\n%s", code, itest.Tail(p.Out.String(), 3000))
	}
	checkOracle(t, run, seed)
	if f.on("startkill") {
		t.Logf("startkill: %d publishers killed in their first second", sk.kills)
	}
}

// aimAtBigTx returns at the moment to kill the publisher while the big
// transaction's rows stream: as soon as a checkpoint is written while
// they stream (a position inside the transaction, such as a SAVEPOINT
// taken for a commit, is then saved), or when three quarters of them are
// on the topic. It says how many of the rows were there.
func aimAtBigTx(topic, checkpoint string, rows int) string {
	base := itest.TopicEnd(topic)
	var cp []byte
	n := int64(0)
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		n = itest.TopicEnd(topic) - base
		if n >= int64(rows)*3/4 {
			break
		}
		if n > 0 {
			now, _ := os.ReadFile(checkpoint)
			if cp == nil {
				cp = now
			} else if !bytes.Equal(cp, now) {
				break
			}
		}
	}
	return fmt.Sprintf("big transaction: killed with %d of its %d rows on the topic", n, rows)
}

// whileDown runs, with the publisher down: transactions, a column that
// shifts the others in a configured table, more transactions. Called
// with w.mu held.
func (w *workload) whileDown() error {
	for i := 0; i < 3; i++ {
		if err := w.Tx(); err != nil {
			return err
		}
	}
	if err := w.shiftWhileDown(w.tables[w.rng.IntN(2)]); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if err := w.Tx(); err != nil {
			return err
		}
	}
	return nil
}
