package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// world is what one system uses in one scenario, shared with nobody: a database, a slot, a
// topic prefix and scratch files.
type world struct {
	system, scenario string
	db               string
	slot             string
	prefix           string
	topic            string
	dir              string
	// source is "postgres" or "mariadb"; tables are source.tables and parallelism is
	// source.snapshot_parallelism (0: the default) of Tributary's pipeline.
	source      string
	tables      []string
	parallelism int
	// binlogStart is where MariaDB's binlog ended before the streaming scenario's changes.
	binlogStart binlogPos
	// httpAddr, when set, is Tributary's --http-addr: the harness reads /metrics there.
	httpAddr string
}

func newWorld(p params, system, scenario, stamp string) world {
	short := map[string]string{sysTributary: "trib", sysTributaryEOS: "tribeos", sysBaseline: "tribbase", sysOneCore: "trib1p", sysAvro: "tribavro", sysDebeziumDefault: "dbzdef", sysDebeziumTuned: "dbztun", sysFloor: "floor"}[system]
	w := world{
		system:   system,
		scenario: scenario,
		db:       "bench_" + short + "_" + strings.ReplaceAll(scenario, "-", "_"),
		prefix:   "bench-" + short + "-" + scenario + "-" + strings.ToLower(stamp),
		dir:      filepath.Join(p.scratch, system+"-"+scenario),
		source:   "postgres",
		tables:   []string{"public.bench"},
	}
	w.topic = w.prefix + ".public.bench"
	if scenario == scBackfillMariaDB || scenario == scStreamingMariaDB || scenario == scLatencyMariaDB || scenario == scBigTxMariaDB || scenario == scLargeMariaDB {
		w.source, w.tables = srcMariaDB, []string{w.db + ".bench"}
		w.topic = w.prefix + "." + w.db + ".bench"
	}
	if isMongo(scenario) {
		w.db = mongoName(w.db, stamp)
		// source.tables are regular expressions on database.collection for MongoDB.
		w.source, w.tables = srcMongoDB, []string{`'` + w.db + `\.bench'`}
		w.topic = w.prefix + "." + w.db + ".bench"
	}
	if isTributary(system) {
		w.slot = "tributary_" + w.db // the default slot of pipeline w.db
	} else {
		w.slot = w.db
	}
	return w
}

// warmTopic is the topic of Debezium's warm-up run.
func (w world) warmTopic() string {
	if w.source == srcMariaDB {
		return w.prefix + "-warm." + w.db + "_warm.bench"
	}
	return w.prefix + "-warm.public.bench"
}

// publisher is one system under test.
type publisher interface {
	// readyStream leaves w's database with a slot whose position is before anything committed
	// afterwards, and nothing running: the state of a publisher stopped while changes pile up.
	readyStream(ctx context.Context, w world) error
	// start launches the measured run. It returns once measuring starts: for a JVM after its
	// warm-up. The time returned is when the measured work began.
	start(ctx context.Context, w world) (*child, time.Time, error)
}

// tributary runs bin/tributary (binary, when set: the baseline's);
// exactlyOnce with delivery exactly_once (the offsets topic created as the
// pipeline starts); procs, when set, is its GOMAXPROCS; avro with
// format.key and format.value avro through the registry at registryURL.
type tributary struct {
	p           params
	exactlyOnce bool
	binary      string
	procs       int
	avro        bool
}

func isTributary(system string) bool {
	return system == sysTributary || system == sysTributaryEOS || system == sysBaseline || system == sysOneCore || system == sysAvro
}

func (t tributary) config(w world) (string, error) {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return "", err
	}
	typ, url := "postgres", dbURL(w.db)
	switch w.source {
	case srcMariaDB:
		typ, url = "mysql", myURL(w.db)
	case srcMongoDB:
		typ, url = "mongodb", mongoURL
	}
	extra := ""
	if w.parallelism > 0 {
		extra = fmt.Sprintf("  snapshot_parallelism: %d\n", w.parallelism)
	}
	cfg := fmt.Sprintf(`name: %s
source:
  type: %s
  url: %s
  tables: [%s]
%sdestination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  delete_mode: record
checkpoint:
  path: %s
`, w.db, typ, url, strings.Join(w.tables, ", "), extra, kafkaAddr, w.prefix, filepath.Join(w.dir, "checkpoints"))
	if t.avro {
		cfg += "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: " + registryURL + "\n"
	}
	if t.exactlyOnce {
		cfg = strings.Replace(cfg, "  delete_mode: record\n", "  delete_mode: record\n  create_missing_topics: true\n", 1) + "delivery: exactly_once\n"
	}
	// BENCH_EOS_MAX_INTERVAL (e.g. 25ms) sets transactions.max_interval of the
	// exactly-once system: the commit interval trades latency for throughput.
	if iv := os.Getenv("BENCH_EOS_MAX_INTERVAL"); t.exactlyOnce && iv != "" {
		cfg += "transactions:\n  max_interval: " + iv + "\n"
	}
	path := filepath.Join(w.dir, "pipeline.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}

func (t tributary) launch(w world, logName string) (*child, error) {
	cfg, err := t.config(w)
	if err != nil {
		return nil, err
	}
	bin := t.p.binary
	if t.binary != "" {
		bin = t.binary
	}
	cmd := exec.Command(bin, "run", "--config", cfg)
	if w.httpAddr != "" {
		cmd.Args = append(cmd.Args, "--http-addr", w.httpAddr)
	}
	cmd.Dir = w.dir
	if t.procs > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", t.procs))
	}
	return startChild(cmd, filepath.Join(w.dir, logName))
}

// readyStream runs Tributary once on the seeded table: it creates its slot, backfills the
// seed and checkpoints the slot's position; then it is stopped.
func (t tributary) readyStream(ctx context.Context, w world) error {
	c, err := t.launch(w, "first-start.log")
	if err != nil {
		return err
	}
	defer c.stop(60 * time.Second)
	if w.source == srcMongoDB {
		// mongo-java-server's change stream hands out no resume point while idle: the
		// checkpoint after the snapshot waits for an event of the collection.
		stop := make(chan struct{})
		defer close(stop)
		go mongoProbe(ctx, w.db, stop)
	}
	if err := awaitSnapshotted(ctx, c, w); err != nil {
		return err
	}
	if err := c.stop(60 * time.Second); err != nil {
		return err
	}
	if c.cmd.ProcessState.ExitCode() != 0 {
		return fmt.Errorf("tributary exited %d on SIGTERM:\n%s", c.cmd.ProcessState.ExitCode(), c.tail())
	}
	return nil
}

// awaitSnapshotted waits until Tributary c's checkpoint in w.dir records the end of its
// initial snapshot (snapshotFinished). The checkpoint file is read directly: `tributary
// status` waits for the running pipeline's lock.
func awaitSnapshotted(ctx context.Context, c *child, w world) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		files, _ := filepath.Glob(filepath.Join(w.dir, "checkpoints", "*.checkpoint.json"))
		if len(files) == 1 && snapshotFinished(files[0]) {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("tributary exited during its first start: %v\n%s", c.err, c.tail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tributary wrote no checkpoint within 2 minutes:\n%s", c.tail())
		}
	}
}

// snapshotFinished reports whether the checkpoint at path records a position after the
// initial snapshot: backfilled, and no table left to read. "backfilled" alone is true from
// the stream's start on, while the watermark snapshot still reads the seed: a streaming run
// started from there would snapshot the grown table while it drains.
func snapshotFinished(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var cp struct {
		Position struct {
			Backfilled bool `json:"backfilled"`
			Snapshot   struct {
				Tables []json.RawMessage `json:"tables"`
			} `json:"snapshot"`
		} `json:"position"`
	}
	return json.Unmarshal(b, &cp) == nil && cp.Position.Backfilled && len(cp.Position.Snapshot.Tables) == 0
}

func (t tributary) start(_ context.Context, w world) (*child, time.Time, error) {
	t0 := time.Now()
	c, err := t.launch(w, "run.log")
	return c, t0, err
}

// debezium runs integration/bench/debezium/BenchRunner in a JVM with a fixed heap.
type debezium struct {
	p     params
	tuned bool
}

// home is where integration/bench/debezium/build.sh put the runner (BENCH_DEBEZIUM_HOME, as
// for build.sh).
func (d debezium) home() string {
	return envStr("BENCH_DEBEZIUM_HOME", filepath.Join(d.p.repo, ".services", "bench-debezium"))
}

// properties are the engine and producer settings of one phase.
func (d debezium) properties(db, slot, prefix, snapshotMode string) string {
	var b strings.Builder
	set := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	set("name", db)
	set("connector.class", "io.debezium.connector.postgresql.PostgresConnector")
	set("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore")
	set("converter.schemas.enable", "true")
	set("database.hostname", "127.0.0.1")
	set("database.port", "5432")
	set("database.user", "postgres")
	set("database.password", "postgres")
	set("database.dbname", db)
	set("topic.prefix", prefix)
	set("plugin.name", "pgoutput")
	set("slot.name", slot)
	set("publication.name", "bench_pub")
	set("publication.autocreate.mode", "disabled")
	set("table.include.list", "public.bench")
	set("snapshot.mode", snapshotMode)
	// One message per change, as Tributary's delete_mode: record.
	set("tombstones.on.delete", "false")
	set("producer.bootstrap.servers", kafkaAddr)
	if d.tuned {
		set("max.batch.size", "20000")
		set("max.queue.size", "100000")
		set("producer.batch.size", "1048576")
		set("producer.linger.ms", "50")
		set("producer.compression.type", "lz4")
	}
	return b.String()
}

// warmRows is the size of the warm-up: a tenth of the measured work, 10,000 to 100,000.
func (d debezium) warmRows() int {
	return min(100_000, max(10_000, d.p.Rows/10/changesPerBatch*changesPerBatch))
}

// prepareWarmup makes the warm-up database for w's scenario and returns its phase file.
// A backfill warms up on a snapshot, the other scenarios on streamed changes.
func (d debezium) prepareWarmup(ctx context.Context, w world) (string, error) {
	db := w.db + "_warm"
	if err := createDB(ctx, db, ""); err != nil {
		return "", err
	}
	n := d.warmRows()
	mode := "initial"
	if w.scenario == scBackfill {
		if err := fillRows(ctx, db, n); err != nil {
			return "", err
		}
		if err := execIn(ctx, db, "CREATE PUBLICATION bench_pub FOR TABLE bench"); err != nil {
			return "", err
		}
	} else {
		mode = "no_data"
		if err := seed(ctx, db); err != nil {
			return "", err
		}
		if err := createSlot(ctx, db, "bench_pub", db); err != nil {
			return "", err
		}
		if err := commitBatches(ctx, db, 0, n/changesPerBatch); err != nil {
			return "", err
		}
	}
	path := filepath.Join(w.dir, "warmup.properties")
	props := d.properties(db, db, w.prefix+"-warm", mode) + fmt.Sprintf("runner.expect.records=%d\n", n)
	return path, os.WriteFile(path, []byte(props), 0o600)
}

// readyStream creates the publication and the slot; Debezium starts streaming from it with
// snapshot.mode=no_data and no stored offsets.
func (d debezium) readyStream(ctx context.Context, w world) error {
	if w.source == srcMariaDB {
		return nil // the measured phase starts where the binlog ended before the changes
	}
	return createSlot(ctx, w.db, "bench_pub", w.slot)
}

func (d debezium) start(ctx context.Context, w world) (*child, time.Time, error) {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil, time.Time{}, err
	}
	if _, err := os.Stat(filepath.Join(d.home(), "classes", "BenchRunner.class")); err != nil {
		return nil, time.Time{}, errors.New("the Debezium runner is not built: run integration/bench/debezium/build.sh")
	}
	if w.source == srcMariaDB {
		return d.startMariaDB(ctx, w)
	}
	warm, err := d.prepareWarmup(ctx, w)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("warm-up database: %w", err)
	}
	mode := "no_data"
	if w.scenario == scBackfill {
		mode = "initial"
		if err := execIn(ctx, w.db, "CREATE PUBLICATION bench_pub FOR TABLE bench"); err != nil {
			return nil, time.Time{}, err
		}
	}
	measure := filepath.Join(w.dir, "measure.properties")
	if err := os.WriteFile(measure, []byte(d.properties(w.db, w.slot, w.prefix, mode)), 0o600); err != nil {
		return nil, time.Time{}, err
	}
	return d.run(ctx, w, filepath.Join(d.home(), "lib"), warm, measure)
}

// run starts BenchRunner with the jars of lib and waits for the start of its measured phase.
// phases are the warm-up phase files, if any, and the measured phase's last.
func (d debezium) run(ctx context.Context, w world, lib string, phases ...string) (*child, time.Time, error) {
	cmd := exec.Command("java", append([]string{"-Xms" + d.p.JVMHeap, "-Xmx" + d.p.JVMHeap, "-XX:+ExitOnOutOfMemoryError",
		"-Djava.awt.headless=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", filepath.Join(d.home(), "classes") + ":" + filepath.Join(lib, "*"),
		"BenchRunner"}, phases...)...)
	cmd.Dir = w.dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, time.Time{}, err
	}
	c, err := startChild(cmd, filepath.Join(w.dir, "run.log"))
	if err != nil {
		return nil, time.Time{}, err
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	timeout := time.After(15 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				<-c.done
				return nil, time.Time{}, fmt.Errorf("the Debezium runner exited before measuring: %v\n%s", c.err, c.tail())
			}
			if n, found := strings.CutPrefix(line, "WARMUP_DONE "); found {
				slog.Info("debezium warmed up", "system", w.system, "records", n)
			}
			if ms, found := strings.CutPrefix(line, "MEASURE_START "); found {
				epoch, err := strconv.ParseInt(ms, 10, 64)
				if err != nil {
					c.stop(time.Minute)
					return nil, time.Time{}, fmt.Errorf("runner said %q", line)
				}
				go func() { // keep draining stdout
					for range lines {
					}
				}()
				return c, time.UnixMilli(epoch), nil
			}
		case <-timeout:
			c.stop(time.Minute)
			return nil, time.Time{}, fmt.Errorf("no MEASURE_START from the Debezium runner within 15 minutes:\n%s", c.tail())
		case <-ctx.Done():
			c.stop(time.Minute)
			return nil, time.Time{}, ctx.Err()
		}
	}
}
