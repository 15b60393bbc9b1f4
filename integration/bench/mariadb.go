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

// The MariaDB side of the backfill: the same table as PostgreSQL's (schemaSQL), every value
// the same function of the id, so both sources publish the same rows.

const (
	srcPostgres = "postgres"
	srcMariaDB  = "mariadb"
	mariaDBAddr = "127.0.0.1:3306"
)

func myURL(db string) string { return "mysql://root:root@" + mariaDBAddr + "/" + db }

// myExec runs statements on the local MariaDB, outside the binlog: the fill of a million
// rows is not a change anybody streams (the soaks and other pipelines read the same binlog),
// and a snapshot reads the table, not the log.
func myExec(db string, stmts ...string) error {
	c, err := client.Connect(mariaDBAddr, "root", "root", db)
	if err != nil {
		return fmt.Errorf("connect to MariaDB %s (is `make services-up` done?): %w", mariaDBAddr, err)
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

// createMyDB makes db afresh with the benchmark table holding ids 1..rows.
func createMyDB(_ context.Context, db string, rows int) error {
	q := "`" + db + "`"
	return myExec("", "DROP DATABASE IF EXISTS "+q, "CREATE DATABASE "+q, "USE "+q, `
CREATE TABLE bench (
  id          bigint PRIMARY KEY,
  customer_id int NOT NULL,
  status      varchar(16) NOT NULL,
  amount      decimal(12,2) NOT NULL,
  created_at  datetime(6) NOT NULL,
  note        text
)`, fmt.Sprintf(`INSERT INTO bench
SELECT seq, seq %% 10000, ELT(1 + seq %% 4, 'new', 'paid', 'shipped', 'delivered'),
       (seq %% 100000) / 100.0, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND,
       REPEAT(MD5(seq), 4)
FROM seq_1_to_%d`, rows), "ANALYZE TABLE bench")
}

func dropMyDB(db string) error { return myExec("", "DROP DATABASE IF EXISTS `"+db+"`") }

// startMariaDB runs BenchRunner on Debezium's MariaDB connector: a warm-up snapshot of a
// table of warmRows rows, then the measured snapshot of w's table. The connector is not
// published for the runner's Debezium version; it runs on the 3.5.0 jar set that
// integration/debezium/build.sh keeps for the MariaDB side-by-side tests (see its
// mariadb/pom.xml), the runner compiled against the main set.
func (d debezium) startMariaDB(ctx context.Context, w world) (*child, time.Time, error) {
	lib := filepath.Join(d.p.repo, ".services", "debezium", "mariadb", "lib")
	if _, err := os.Stat(lib); err != nil {
		return nil, time.Time{}, errors.New("Debezium's MariaDB jars are missing: run integration/debezium/build.sh (make services-up does)")
	}
	n := d.warmRows()
	if err := createMyDB(ctx, w.db+"_warm", n); err != nil {
		return nil, time.Time{}, fmt.Errorf("warm-up database: %w", err)
	}
	warm := filepath.Join(w.dir, "warmup.properties")
	props := d.myProperties(w.db+"_warm", w.prefix+"-warm") + fmt.Sprintf("runner.expect.records=%d\n", n)
	if err := os.WriteFile(warm, []byte(props), 0o600); err != nil {
		return nil, time.Time{}, err
	}
	measure := filepath.Join(w.dir, "measure.properties")
	if err := os.WriteFile(measure, []byte(d.myProperties(w.db, w.prefix)), 0o600); err != nil {
		return nil, time.Time{}, err
	}
	return d.run(ctx, w, lib, warm, measure)
}

// myProperties are the MariaDB connector's settings for an initial snapshot of db.bench;
// the producer's are those of the PostgreSQL runs.
func (d debezium) myProperties(db, prefix string) string {
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
	set("snapshot.mode", "initial")
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
