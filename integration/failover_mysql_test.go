package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// faultReplicaAddr is the second private MariaDB of faults.sh (server_id
// 2): a replica of the first, promoted to primary by the failover test.
const faultReplicaAddr = "127.0.0.1:3318"

// replicaOf makes the second private MariaDB a GTID replica of the first,
// starting at the first's current position (not its whole history, which
// holds every earlier fault test), with e's database created on it first.
func replicaOf(t *testing.T, e *myEnv) *client.Conn {
	t.Helper()
	faults(t, "mariadb-replica", "up")
	replica, err := client.Connect(faultReplicaAddr, "root", "root", "")
	if err != nil {
		t.Fatalf("connect to the replica: %v", err)
	}
	t.Cleanup(func() {
		replica.Execute("STOP SLAVE")
		replica.Execute("RESET SLAVE ALL")
		replica.Execute("DROP DATABASE IF EXISTS " + e.db)
		replica.Close()
	})
	r := e.exec("SELECT @@GLOBAL.gtid_binlog_pos")
	pos, _ := r.GetString(0, 0)
	for _, q := range []string{
		"STOP SLAVE",
		"RESET SLAVE ALL",
		"RESET MASTER",
		"SET SESSION sql_log_bin = 0",
		"DROP DATABASE IF EXISTS " + e.db,
		"CREATE DATABASE " + e.db,
		"SET SESSION sql_log_bin = 1",
		fmt.Sprintf("SET GLOBAL gtid_slave_pos = '%s'", pos),
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 3316, MASTER_USER = 'root', MASTER_PASSWORD = 'root', MASTER_USE_GTID = slave_pos"),
		"START SLAVE",
	} {
		if _, err := replica.Execute(q); err != nil {
			t.Fatalf("replica: %s: %v", q, err)
		}
	}
	return replica
}

// awaitReplica waits until the replica has applied everything the primary
// has binlogged.
func awaitReplica(t *testing.T, e *myEnv, replica *client.Conn) {
	t.Helper()
	r := e.exec("SELECT @@GLOBAL.gtid_binlog_pos")
	want, _ := r.GetString(0, 0)
	var got string
	waitFor(t, 60*time.Second, "the replica to catch up with "+want, func() bool {
		r, err := replica.Execute("SELECT @@GLOBAL.gtid_slave_pos")
		if err != nil {
			t.Fatal(err)
		}
		got, _ = r.GetString(0, 0)
		return got == want
	})
}

// TestMySQLFailoverByGTID: a pipeline streams from a MariaDB primary with
// a GTID replica (another server_id); the pipeline stops, the primary
// commits more, the replica applies it and is promoted, and the pipeline,
// pointed at the new primary, resumes by GTID there: every change
// committed on either server is published (no gap), although the new
// primary's binlog files are its own. (The old code checked the
// checkpoint's binlog file name on the new server and, with its GTID set
// keyed by server, sent a start position the server refuses once the new
// primary wrote.) Then, pointed back at the old primary, which lacks what
// the new one committed, it refuses to start: "resnapshot required",
// naming the missing GTIDs.
func TestMySQLFailoverByGTID(t *testing.T) {
	e := faultMyEnv(t, "myfailover")
	replica := replicaOf(t, e)
	e.exec(`CREATE TABLE ledger (k INT PRIMARY KEY, seq BIGINT NOT NULL, pad VARCHAR(200))`)
	e.exec(`INSERT INTO ledger SELECT seq, seq, REPEAT('x', 100) FROM seq_1_to_200`)
	topic := e.prefix + "." + e.db + ".ledger"
	cfg := e.faultConfig("60s")
	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "the backfill", func() bool { return topicEnd(topic) >= 200 })
	w := newWriter(200)
	w.writeMySQLFor(t, faultMariaDBAddr, e.db, 3*time.Second)
	awaitCatchUp(t, topic, int64(200+len(w.committed())))
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.out)
	}
	// Committed on the old primary after the pipeline stopped: only the
	// replica can deliver these now.
	w.writeMySQLFor(t, faultMariaDBAddr, e.db, 2*time.Second)
	awaitReplica(t, e, replica)
	for _, q := range []string{"STOP SLAVE", "RESET SLAVE ALL"} { // promoted
		if _, err := replica.Execute(q); err != nil {
			t.Fatalf("promote: %s: %v", q, err)
		}
	}
	w.writeMySQLFor(t, faultReplicaAddr, e.db, 2*time.Second)
	cfg = retarget(t, e.faultConfig("60s"), faultMariaDBAddr, faultReplicaAddr)
	p = e.start("run", "--config", cfg)
	waitFor(t, 30*time.Second, "streaming from the new primary", func() bool {
		if p.exited() {
			t.Fatalf("tributary exited on the new primary:\n%s", p.out)
		}
		return strings.Contains(p.out.String(), "streaming binlog")
	})
	report := []string{"failover to a GTID replica: " + lineWith(p.out.String(), "streaming binlog")}
	verifyFaultRun(t, p, topic, w, "mysql failover", report)

	// Back to the old primary: it lacks the new primary's transactions.
	cfg = e.faultConfig("60s")
	p = e.start("run", "--config", cfg)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("tributary kept running on a server that lacks the checkpoint's transactions:\n%s", p.out)
	}
	out := p.out.String()
	if code := p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out, "resnapshot required") ||
		!strings.Contains(out, "lacks transactions") || !strings.Contains(out, "-2-") {
		t.Fatalf("exit %d on a server lacking the checkpoint's GTIDs, want 1, \"resnapshot required\" and the missing GTIDs (server_id 2):\n%s", code, out)
	}
	if strings.Contains(out, `"class":"retriable"`) {
		t.Errorf("a server lacking the checkpoint's transactions was retried:\n%s", out)
	}
	t.Log("stale old primary: " + lineWith(out, "lacks transactions"))
}
