package avro_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestAvroJDBCSink puts a consumer we did not write behind Tributary's
// Avro: a Kafka Connect worker running Debezium's JDBC sink with Apicurio's
// AvroConverter (Confluent ids) reads the pipeline's Avro topic, fetching
// its schemas from the test registry, into a second database; inserts,
// updates, a delete and a column added mid-stream leave the sink's table
// equal to the source's.
func TestAvroJDBCSink(t *testing.T) {
	e := itest.NewEnv(t, "avrosink")
	ctx := context.Background()
	sinkDB := e.DB + "_sink"
	admin, err := pgx.Connect(ctx, itest.PGAdminURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+sinkDB); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	t.Cleanup(func() {
		if a, err := pgx.Connect(context.Background(), itest.PGAdminURL); err == nil {
			a.Exec(context.Background(), "DROP DATABASE IF EXISTS "+sinkDB+" WITH (FORCE)")
			a.Close(context.Background())
		}
	})
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, name text, price numeric(10,2), ok boolean, f float8, d date)`)
	cfg := e.WritePipeline(itest.PipelineConfig{})
	itest.AppendConfig(t, cfg, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	p := e.Start("run", "--config", cfg)
	worker := startAvroJDBCSink(t, e, sinkDB)

	e.Exec(`INSERT INTO t VALUES (1, 'héllo ☃', 12.50, true, -0.5, '1999-12-31'), (2, 'two', -0.01, false, 1e10, NULL), (3, NULL, NULL, NULL, NULL, NULL)`)
	e.Exec(`UPDATE t SET name = 'second', price = 99999999.99 WHERE id = 2`)
	e.Exec(`DELETE FROM t WHERE id = 3`)
	e.Exec(`ALTER TABLE t ADD COLUMN note text`)
	e.Exec(`INSERT INTO t VALUES (4, 'four', 4.00, true, 4, '2024-02-29', 'added')`)
	e.Exec(`UPDATE t SET note = 'later' WHERE id = 1`)

	const q = `SELECT id, name, price::text, ok, f, d::text, note FROM t ORDER BY id`
	sink, err := pgx.Connect(ctx, "postgres://postgres:postgres@127.0.0.1:5432/"+sinkDB)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close(ctx)
	want := dumpRows(t, e.Conn, q)
	var got []string
	itest.WaitFor(t, 120*time.Second, "the sink equal to the source", func() bool {
		got = dumpRows(nil, sink, q)
		return strings.Join(got, "\n") == strings.Join(want, "\n") || p.Exited() || worker.Exited()
	})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sink:\n%s\nsource:\n%s\nworker:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), worker.Out)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	t.Logf("the JDBC sink read %d rows through the Avro converter, equal to the source", len(want))
}

// dumpRows runs q and prints each row's values; with t nil, an error is
// an empty result (the sink's table may not exist yet).
func dumpRows(t *testing.T, conn *pgx.Conn, q string) []string {
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		if t != nil {
			t.Fatal(err)
		}
		return nil
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			if t != nil {
				t.Fatal(err)
			}
			return nil
		}
		out = append(out, fmt.Sprint(vals...))
	}
	return out
}

// startAvroJDBCSink starts a Kafka Connect worker (standalone) with
// Debezium's JDBC sink (the jdbc-sink jar set) and Apicurio's Avro
// converter (the avro-converter set) reading e's topics into sinkDB.
func startAvroJDBCSink(t *testing.T, e *itest.Env, sinkDB string) *itest.Proc {
	t.Helper()
	root, err := filepath.Abs(".") // itest.Main runs the tests in integration/
	if err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("bash", filepath.Join(root, "debezium", "build.sh"), "jdbc-sink", "avro-converter").CombinedOutput(); err != nil {
		t.Fatalf("integration/debezium/build.sh jdbc-sink avro-converter: %v\n%s", err, b)
	}
	home := filepath.Join(root, "..", ".services", "debezium")
	write := func(path string, lines ...string) {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var conv []string
	for _, side := range []string{"key", "value"} {
		conv = append(conv,
			side+".converter=io.apicurio.registry.utils.converter.AvroConverter",
			side+".converter.apicurio.registry.url="+registryV2,
			side+".converter.apicurio.registry.as-confluent=true",
			side+".converter.apicurio.registry.id-handler=io.apicurio.registry.serde.Legacy4ByteIdHandler",
			side+".converter.apicurio.registry.headers.enabled=false",
			side+".converter.apicurio.registry.use-id=contentId")
	}
	worker := filepath.Join(e.Dir, "connect-worker.properties")
	connector := filepath.Join(e.Dir, "connect-jdbc-sink.properties")
	write(worker, append(conv,
		"bootstrap.servers="+itest.KafkaAddr,
		"offset.storage.file.filename="+filepath.Join(e.Dir, "connect.offsets"),
		"offset.flush.interval.ms=1000",
		"plugin.discovery=only_scan",
		"listeners=http://127.0.0.1:0",
		"consumer.auto.offset.reset=earliest",
		"consumer.metadata.max.age.ms=2000",
	)...)
	write(connector,
		"name=jdbc-sink-"+e.Name,
		"connector.class=io.debezium.connector.jdbc.JdbcSinkConnector",
		"tasks.max=1",
		"topics.regex="+strings.ReplaceAll(e.Prefix, ".", `\\.`)+`\\..*`,
		"connection.url=jdbc:postgresql://127.0.0.1:5432/"+sinkDB,
		"connection.username=postgres",
		"connection.password=postgres",
		"connection.provider=org.hibernate.engine.jdbc.connections.internal.DriverManagerConnectionProvider",
		"insert.mode=upsert",
		"delete.enabled=true",
		"primary.key.mode=record_key",
		"schema.evolution=basic",
		"transforms=route",
		"transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter",
		`transforms.route.regex=.*\\.([^.]+)`,
		"transforms.route.replacement=$1",
		"collection.name.format=${topic}",
		"use.time.zone=UTC",
	)
	p := &itest.Proc{Out: &itest.SyncBuffer{}, Done: make(chan struct{})}
	p.Cmd = exec.Command("java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dlog4j2.configurationFile="+filepath.Join(root, "debezium", "jdbc-sink", "log4j2.xml"),
		"-cp", filepath.Join(home, "jdbc-sink", "classes")+":"+filepath.Join(home, "jdbc-sink", "lib", "*")+":"+filepath.Join(home, "avro-converter", "lib", "*"),
		"org.apache.kafka.connect.cli.ConnectStandalone", worker, connector)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.Err = p.Cmd.Wait(); close(p.Done) }()
	t.Cleanup(func() {
		if !p.Exited() {
			p.Cmd.Process.Kill()
			<-p.Done
		}
	})
	return p
}
