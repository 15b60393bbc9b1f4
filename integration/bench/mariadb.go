package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// The MariaDB side: the same table as PostgreSQL's (schemaSQL), every value the same
// function of the id, and the same batches of changes (bench_batch, data.go), so both
// sources publish the same rows and changes.

const (
	srcPostgres = "postgres"
	srcMariaDB  = "mariadb"
	mariaDBAddr = "127.0.0.1:3306"
)

func myURL(db string) string { return "mysql://root:root@" + mariaDBAddr + "/" + db }

func myConnect(db string) (*client.Conn, error) {
	c, err := client.Connect(mariaDBAddr, "root", "root", db)
	if err != nil {
		return nil, fmt.Errorf("connect to MariaDB %s (is `make services-up` done?): %w", mariaDBAddr, err)
	}
	return c, nil
}

// myExec runs statements on the local MariaDB, outside the binlog: the fill of a million
// rows is not a change anybody streams (the soaks and other pipelines read the same binlog),
// and a snapshot reads the table, not the log.
func myExec(db string, stmts ...string) error {
	c, err := myConnect(db)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Execute("SET SESSION sql_log_bin = 0"); err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := c.Execute(s); err != nil {
			return fmt.Errorf("MariaDB: %s: %w", s, err)
		}
	}
	return nil
}

const myTableSQL = `
CREATE TABLE bench (
  id          bigint PRIMARY KEY,
  customer_id int NOT NULL,
  status      varchar(16) NOT NULL,
  amount      decimal(12,2) NOT NULL,
  created_at  datetime(6) NOT NULL,
  note        text
)`

// myBatchSQL are data.go's bench_rows and bench_batch for MariaDB (bench_changes is a
// batch's statements, bench_batch them in a transaction), bench_batches(lo, hi) committing
// batches lo..hi-1, and bench_one_transaction(lo, hi) committing them all at once.
var myBatchSQL = []string{`
CREATE PROCEDURE bench_rows(lo bigint)
  INSERT INTO bench
  SELECT g, abs(g) % 10000, ELT(1 + abs(g) % 4, 'new', 'paid', 'shipped', 'delivered'),
         (abs(g) % 100000) / 100.0, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL g SECOND, REPEAT(MD5(g), 4)
  FROM (SELECT lo + CAST(seq AS SIGNED) AS g FROM seq_0_to_59) ids`, `
CREATE PROCEDURE bench_changes(b bigint)
BEGIN
  CALL bench_rows(b * 60);
  UPDATE bench SET status = 'updated', amount = amount + 1, note = REPEAT(MD5(id + 1), 4)
   WHERE id BETWEEN (b - 1) * 60 AND (b - 1) * 60 + 29;
  DELETE FROM bench WHERE id BETWEEN (b - 1) * 60 + 30 AND (b - 1) * 60 + 39;
END`, `
CREATE PROCEDURE bench_batch(b bigint)
BEGIN
  START TRANSACTION;
  CALL bench_changes(b);
  COMMIT;
END`, `
CREATE PROCEDURE bench_one_transaction(lo bigint, hi bigint)
BEGIN
  DECLARE b bigint DEFAULT lo;
  START TRANSACTION;
  WHILE b < hi DO
    CALL bench_changes(b);
    SET b = b + 1;
  END WHILE;
  COMMIT;
END`, `
CREATE PROCEDURE bench_batches(lo bigint, hi bigint)
BEGIN
  DECLARE b bigint DEFAULT lo;
  WHILE b < hi DO
    CALL bench_batch(b);
    SET b = b + 1;
  END WHILE;
END`}

// createMyStreamDB makes db afresh for a streaming scenario: the table with the seed rows
// (batch -1) and the procedures, all outside the binlog; only the batches are streamed.
func createMyStreamDB(db string) error {
	q := "`" + db + "`"
	stmts := append([]string{"DROP DATABASE IF EXISTS " + q, "CREATE DATABASE " + q, "USE " + q, myTableSQL}, myBatchSQL...)
	return myExec("", append(stmts, fmt.Sprintf("CALL bench_rows(%d)", -seedRows))...)
}

// myCommitBatches commits batches from..to-1 of db, one transaction each, into the binlog.
func myCommitBatches(db string, from, to int) error {
	c, err := myConnect(db)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Execute(fmt.Sprintf("CALL bench_batches(%d, %d)", from, to)); err != nil {
		return fmt.Errorf("MariaDB %s: batches %d to %d: %w", db, from, to-1, err)
	}
	return nil
}

// myCommitOneTransaction commits batches from..to-1 in one transaction.
func myCommitOneTransaction(db string, from, to int) error {
	c, err := myConnect(db)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Execute(fmt.Sprintf("CALL bench_one_transaction(%d, %d)", from, to)); err != nil {
		return fmt.Errorf("MariaDB %s: batches %d to %d in one transaction: %w", db, from, to-1, err)
	}
	return nil
}

// myCommitLarge is commitLarge (data.go) on MariaDB (readyStreamDB made the note LONGTEXT).
func myCommitLarge(db string, rows, size int) error {
	c, err := myConnect(db)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Execute(fmt.Sprintf("SET SESSION group_concat_max_len = %d", 2*size)); err != nil {
		return err
	}
	for t := 0; t < rows/largePerTx; t++ {
		lo := largeIDs + t*largePerTx
		if _, err := c.Execute(fmt.Sprintf(`INSERT INTO bench SELECT %d + CAST(ids.seq AS SIGNED), %d, 'new', 0, TIMESTAMP '2024-01-01 00:00:00',
  (SELECT GROUP_CONCAT(MD5(CONCAT(%d + ids.seq, '.', d.seq)) SEPARATOR '') FROM seq_1_to_%d d) FROM seq_0_to_%d ids`,
			lo, lo%10000, lo, size/32, largePerTx-1)); err != nil {
			return fmt.Errorf("MariaDB %s: large rows from %d: %w", db, lo, err)
		}
	}
	return nil
}

// myLoader is loader (data.go) on MariaDB.
func myLoader(ctx context.Context, db string, rate int, d time.Duration, first int) ([]time.Time, time.Duration, error) {
	c, err := myConnect(db)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	return schedule(ctx, rate, d, first, func(b int) error {
		_, err := c.Execute(fmt.Sprintf("CALL bench_batch(%d)", b))
		return err
	})
}

// binlogPos is a position in MariaDB's binlog, as a file and offset and as the GTID
// position (gtid_binlog_pos) of the same point.
type binlogPos struct {
	File string
	Pos  uint32
	GTID string
}

// myBinlogPos is the end of the binlog now: where the next change is written.
func myBinlogPos() (binlogPos, error) {
	c, err := myConnect("")
	if err != nil {
		return binlogPos{}, err
	}
	defer c.Close()
	gtid := func() (string, error) {
		r, err := c.Execute("SELECT @@gtid_binlog_pos")
		if err != nil {
			return "", err
		}
		return r.GetString(0, 0)
	}
	// Other sessions commit too: the file position is the GTID's when the GTID did not move.
	for range 100 {
		before, err := gtid()
		if err != nil {
			return binlogPos{}, err
		}
		r, err := c.Execute("SHOW MASTER STATUS")
		if err != nil {
			return binlogPos{}, err
		}
		if r.RowNumber() == 0 {
			return binlogPos{}, errors.New("SHOW MASTER STATUS is empty: MariaDB runs without log_bin")
		}
		file, _ := r.GetString(0, 0)
		pos, err := r.GetUint(0, 1)
		if err != nil {
			return binlogPos{}, err
		}
		if after, err := gtid(); err != nil || after == before {
			return binlogPos{file, uint32(pos), before}, err
		}
	}
	return binlogPos{}, errors.New("MariaDB's binlog moved under each of 100 reads of its position")
}

// createMyDB makes db afresh with the benchmark table holding ids 1..rows.
func createMyDB(_ context.Context, db string, rows int) error {
	q := "`" + db + "`"
	return myExec("", "DROP DATABASE IF EXISTS "+q, "CREATE DATABASE "+q, "USE "+q, myTableSQL, fmt.Sprintf(`INSERT INTO bench
SELECT seq, seq %% 10000, ELT(1 + seq %% 4, 'new', 'paid', 'shipped', 'delivered'),
       (seq %% 100000) / 100.0, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND,
       REPEAT(MD5(seq), 4)
FROM seq_1_to_%d`, rows), "ANALYZE TABLE bench")
}

func dropMyDB(db string) error { return myExec("", "DROP DATABASE IF EXISTS `"+db+"`") }

// startMariaDB runs BenchRunner on Debezium's MariaDB connector: a warm-up phase of warmRows
// rows or changes (a snapshot for the backfill, streamed changes otherwise) in a database of
// its own, then the measured phase on w's database. The connector is not published for the
// runner's Debezium version; it runs on the 3.5.0 jar set that integration/debezium/build.sh
// keeps for the MariaDB side-by-side tests (see its mariadb/pom.xml), the runner compiled
// against the main set.
func (d debezium) startMariaDB(ctx context.Context, w world) (*child, time.Time, error) {
	lib := filepath.Join(d.p.repo, ".services", "debezium", "mariadb", "lib")
	if _, err := os.Stat(lib); err != nil {
		return nil, time.Time{}, errors.New("Debezium's MariaDB jars are missing: run integration/debezium/build.sh (make services-up does)")
	}
	n := d.warmRows()
	warmDB := w.db + "_warm"
	var props, measure string
	if w.scenario == scBackfillMariaDB {
		if err := createMyDB(ctx, warmDB, n); err != nil {
			return nil, time.Time{}, fmt.Errorf("warm-up database: %w", err)
		}
		props = d.myProperties(warmDB, w.prefix+"-warm", "initial")
		measure = d.myProperties(w.db, w.prefix, "initial")
	} else {
		if err := createMyStreamDB(warmDB); err != nil {
			return nil, time.Time{}, fmt.Errorf("warm-up database: %w", err)
		}
		from, err := myBinlogPos()
		if err != nil {
			return nil, time.Time{}, err
		}
		if err := myCommitBatches(warmDB, 0, n/changesPerBatch); err != nil {
			return nil, time.Time{}, fmt.Errorf("warm-up changes: %w", err)
		}
		props = d.myStreamProperties(w.dir, warmDB, w.prefix+"-warm", &from)
		// latency-mariadb starts at the binlog's end (probe, bench.go, waits for it)
		var start *binlogPos
		if w.scenario == scStreamingMariaDB || w.scenario == scBigTxMariaDB || w.scenario == scLargeMariaDB {
			start = &w.binlogStart
		}
		measure = d.myStreamProperties(w.dir, w.db, w.prefix, start)
	}
	warm := filepath.Join(w.dir, "warmup.properties")
	if err := os.WriteFile(warm, []byte(props+fmt.Sprintf("runner.expect.records=%d\n", n)), 0o600); err != nil {
		return nil, time.Time{}, err
	}
	measureFile := filepath.Join(w.dir, "measure.properties")
	if err := os.WriteFile(measureFile, []byte(measure), 0o600); err != nil {
		return nil, time.Time{}, err
	}
	return d.run(ctx, w, lib, warm, measureFile)
}

// myProperties are the MariaDB connector's settings for db.bench with snapshot.mode mode;
// the producer's are those of the PostgreSQL runs.
func (d debezium) myProperties(db, prefix, mode string) string {
	var b strings.Builder
	set := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	set("name", db)
	set("connector.class", "io.debezium.connector.mariadb.MariaDbConnector")
	set("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore")
	set("schema.history.internal", "io.debezium.relational.history.MemorySchemaHistory")
	set("include.schema.changes", "false")
	set("converter.schemas.enable", "true")
	set("database.hostname", "127.0.0.1")
	set("database.port", "3306")
	set("database.user", "root")
	set("database.password", "root")
	// Random: two runners at once must not take each other's binlog connection.
	set("database.server.id", strconv.Itoa(5_600_000+rand.IntN(200_000)))
	set("database.include.list", db)
	set("table.include.list", db+".bench")
	set("topic.prefix", prefix)
	set("snapshot.mode", mode)
	set("tombstones.on.delete", "false")
	// The producer settings, without the PostgreSQL ones.
	pg := d.properties(db, "", prefix, "initial")
	for _, line := range strings.Split(pg, "\n") {
		if strings.HasPrefix(line, "producer.") || strings.HasPrefix(line, "max.") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// myStreamProperties stream db.bench: from the binlog position from, or from the binlog's
// end when from is nil. The connector keeps no schema history here, so a phase given a
// position starts in snapshot.mode recovery (the table's schema read afresh, then the binlog
// from the stored offset), one without in no_data; neither takes a lock on the server the
// other tests share.
func (d debezium) myStreamProperties(dir, db, prefix string, from *binlogPos) string {
	mode := "no_data"
	if from != nil {
		mode = "recovery"
	}
	props := d.myProperties(db, prefix, mode) +
		"snapshot.locking.mode=none\n" +
		"schema.history.internal.store.only.captured.tables.ddl=true\n"
	if from == nil {
		return props
	}
	// The offset of Kafka Connect's FileOffsetBackingStore, written by the runner: key
	// [engine name, source partition], value the connector's binlog offset.
	return props + fmt.Sprintf("offset.storage=org.apache.kafka.connect.storage.FileOffsetBackingStore\n"+
		"offset.storage.file.filename=%s\n"+
		"offset.flush.interval.ms=1000\n"+
		"runner.offset.key=[\"%s\",{\"server\":\"%s\"}]\n"+
		"runner.offset.value={\"file\":\"%s\",\"pos\":%d,\"gtids\":\"%s\"}\n",
		filepath.Join(dir, db+".offsets"), db, prefix, from.File, from.Pos, from.GTID)
}
