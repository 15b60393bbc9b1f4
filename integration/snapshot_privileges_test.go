package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"
)

// TestSnapshotRestrictedUser, on every source: a pipeline whose database
// user has only what an RDS / Aurora master user can grant — PostgreSQL:
// LOGIN REPLICATION and SELECT, no superuser, a publication its owner
// made; MariaDB: SELECT, REPLICATION SLAVE, REPLICATION CLIENT and
// INSERT/UPDATE on the signal table, no RELOAD, SUPER or LOCK TABLES —
// snapshots its table and streams its changes. (The old MySQL backfill
// took FLUSH TABLES WITH READ LOCK, which needs RELOAD.)
func TestSnapshotRestrictedUser(t *testing.T) {
	forEachBackend(t, "snaprds", func(t *testing.T, b backend) {
		mustExec := func(sql string) {
			t.Helper()
			if err := b.exec(sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		for _, s := range b.createTable("items") {
			mustExec(s)
		}
		mustExec(b.bulkInsert("items", 0, 0, 500))
		e := b.env()
		user := fmt.Sprintf("it_rds_%d_%04d", os.Getpid()%100000, rand.IntN(10000))
		var cfg string
		switch bk := b.(type) {
		case *pgBackend:
			admin, err := pgx.Connect(context.Background(), pgAdminURL)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(context.Background())
			if _, err := admin.Exec(context.Background(), "CREATE ROLE "+user+" LOGIN REPLICATION PASSWORD 'pw'"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// After the pipeline (its cleanup ran first): the grants
				// in the test database, then the role.
				ctx := context.Background()
				if c, err := pgx.Connect(ctx, e.pgURL()); err == nil {
					c.Exec(ctx, "DROP OWNED BY "+user)
					c.Close(ctx)
				}
				if a, err := pgx.Connect(ctx, pgAdminURL); err == nil {
					for range 20 {
						if _, err := a.Exec(ctx, "DROP ROLE IF EXISTS "+user); err == nil {
							break
						}
						time.Sleep(500 * time.Millisecond)
					}
					a.Close(ctx)
				}
			})
			e.exec("GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + user)
			e.exec("CREATE PUBLICATION pub_" + user + " FOR TABLE items WITH (publish_via_partition_root = true)")
			cfg = e.writePipeline(pipelineConfig{typ: "postgres", url: "postgres://" + user + ":pw@127.0.0.1:5432/" + e.db,
				source: "  publication: pub_" + user + "\n  tables:\n    - public.items\n"})
		case *mariaBackend:
			db := bk.e.db
			bk.e.exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'")
			t.Cleanup(func() {
				if c, err := client.Connect(mariadbAddr, "root", "root", ""); err == nil {
					c.Execute("DROP USER IF EXISTS '" + user + "'@'%'")
					c.Close()
				}
			})
			bk.e.exec("GRANT SELECT ON `" + db + "`.* TO '" + user + "'@'%'")
			bk.e.exec("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '" + user + "'@'%'")
			bk.e.exec("CREATE TABLE `" + db + "`.tributary_signal (id VARCHAR(64) NOT NULL PRIMARY KEY, mark VARCHAR(128) NOT NULL)")
			bk.e.exec("GRANT INSERT, UPDATE ON `" + db + "`.tributary_signal TO '" + user + "'@'%'")
			r := bk.e.exec("SHOW GRANTS FOR '" + user + "'@'%'")
			for i := range r.Values {
				g, _ := r.GetString(i, 0)
				for _, p := range []string{"RELOAD", "SUPER", "LOCK TABLES", "ALL PRIVILEGES"} {
					if strings.Contains(g, p) {
						t.Fatalf("the test user has %s: %s", p, g)
					}
				}
			}
			cfg = e.writePipeline(pipelineConfig{typ: "mysql", url: "mysql://" + user + ":pw@" + mariadbAddr + "/" + db,
				source: "  tables:\n    - " + db + ".items\n"})
		}
		topic := b.topic("items")
		p := e.start("run", "--config", cfg)
		waitOrDump(t, p, 90*time.Second, "500 snapshot rows", func() bool { return topicEnd(topic) >= 500 })
		mustExec(`UPDATE items SET seq = 9999 WHERE k = 1`)
		waitFor(t, 60*time.Second, "the streamed update", func() bool { return topicEnd(topic) >= 501 })
		if code := p.stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
		}
		want, err := b.state("items")
		if err != nil {
			t.Fatal(err)
		}
		checkKeyHistories(t, readTopic(t, topic), want)
	})
}
