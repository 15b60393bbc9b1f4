package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestSnapshotRestrictedUser, on every source: a pipeline whose database
// user has only what an RDS / Aurora master user can grant — PostgreSQL:
// LOGIN REPLICATION and SELECT, no superuser, a publication its owner
// made; MariaDB: SELECT, REPLICATION SLAVE, REPLICATION CLIENT and
// INSERT/UPDATE on the signal table, no RELOAD, SUPER or LOCK TABLES —
// snapshots its table and streams its changes. (The old MySQL backfill
// took FLUSH TABLES WITH READ LOCK, which needs RELOAD.)
func TestSnapshotRestrictedUser(t *testing.T) {
	itest.ForEachBackend(t, "snaprds", func(t *testing.T, b itest.Backend) {
		itest.CreateTables(t, b, "items")
		itest.MustExecOn(t, b, b.BulkInsert("items", 0, 0, 500))
		e := b.Env()
		user := "it_" + itest.UniqueID("rds")
		var cfg string
		switch bk := b.(type) {
		case *itest.PGBackend:
			e.ReplicationRole(t, user)
			e.Exec("GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + user)
			e.Exec("CREATE PUBLICATION pub_" + user + " FOR TABLE items WITH (publish_via_partition_root = true)")
			cfg = e.WritePipeline(itest.PipelineConfig{Typ: "postgres", URL: "postgres://" + user + ":pw@127.0.0.1:5432/" + e.DB,
				Source: "  publication: pub_" + user + "\n  tables:\n    - public.items\n"})
		case *itest.MariaBackend:
			db := bk.E.DB
			bk.E.Exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'")
			t.Cleanup(func() {
				if c, err := client.Connect(itest.MariadbAddr, "root", "root", ""); err == nil {
					c.Execute("DROP USER IF EXISTS '" + user + "'@'%'")
					c.Close()
				}
			})
			bk.E.Exec("GRANT SELECT ON `" + db + "`.* TO '" + user + "'@'%'")
			bk.E.Exec("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '" + user + "'@'%'")
			bk.E.Exec("CREATE TABLE `" + db + "`.tributary_signal (id VARCHAR(64) NOT NULL PRIMARY KEY, mark VARCHAR(128) NOT NULL)")
			bk.E.Exec("GRANT INSERT, UPDATE ON `" + db + "`.tributary_signal TO '" + user + "'@'%'")
			r := bk.E.Exec("SHOW GRANTS FOR '" + user + "'@'%'")
			for i := range r.Values {
				g, _ := r.GetString(i, 0)
				for _, p := range []string{"RELOAD", "SUPER", "LOCK TABLES", "ALL PRIVILEGES"} {
					if strings.Contains(g, p) {
						t.Fatalf("the test user has %s: %s", p, g)
					}
				}
			}
			cfg = e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: "mysql://" + user + ":pw@" + itest.MariadbAddr + "/" + db,
				Source: "  tables:\n    - " + db + ".items\n"})
		}
		topic := b.Topic("items")
		p := e.Start("run", "--config", cfg)
		itest.WaitOrDump(t, p, 90*time.Second, "500 snapshot rows", func() bool { return itest.TopicEnd(topic) >= 500 })
		itest.MustExecOn(t, b, `UPDATE items SET seq = 9999 WHERE k = 1`)
		itest.WaitFor(t, 60*time.Second, "the streamed update", func() bool { return itest.TopicEnd(topic) >= 501 })
		if code := p.Stop(t); code != 0 {
			t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
		}
		want, err := b.State("items")
		if err != nil {
			t.Fatal(err)
		}
		itest.CheckKeyHistories(t, itest.ReadTopic(t, topic), want)
	})
}
