package faults_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/go-mysql-org/go-mysql/client"
)

// faultReplicaAddr is the second private MariaDB of faults.sh (server_id
// 2): a replica of the first, promoted to primary by the failover test.
const faultReplicaAddr = "127.0.0.1:3318"

// replicaOf makes the second private MariaDB a GTID replica of the first,
// starting at the first's current position (not its whole history, which
// holds every earlier fault test), with e's database created on it first.
func replicaOf(t *testing.T, e *itest.MyEnv) *client.Conn {
	t.Helper()
	itest.Faults(t, "mariadb-replica", "up")
	replica, err := client.Connect(faultReplicaAddr, "root", "root", "")
	if err != nil {
		t.Fatalf("connect to the replica: %v", err)
	}
	t.Cleanup(func() {
		replica.Execute("STOP SLAVE")
		replica.Execute("RESET SLAVE ALL")
		replica.Execute("DROP DATABASE IF EXISTS " + e.DB)
		replica.Close()
	})
	r := e.Exec("SELECT @@GLOBAL.gtid_binlog_pos")
	pos, _ := r.GetString(0, 0)
	for _, q := range []string{
		"STOP SLAVE",
		"RESET SLAVE ALL",
		"RESET MASTER",
		"SET SESSION sql_log_bin = 0",
		"DROP DATABASE IF EXISTS " + e.DB,
		"CREATE DATABASE " + e.DB,
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
func awaitReplica(t *testing.T, e *itest.MyEnv, replica *client.Conn) {
	t.Helper()
	r := e.Exec("SELECT @@GLOBAL.gtid_binlog_pos")
	want, _ := r.GetString(0, 0)
	var got string
	itest.WaitFor(t, 60*time.Second, "the replica to catch up with "+want, func() bool {
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
	e := itest.FaultMyEnv(t, "myfailover")
	replica := replicaOf(t, e)
	e.Exec(`CREATE TABLE ledger (k INT PRIMARY KEY, seq BIGINT NOT NULL, pad VARCHAR(200))`)
	e.Exec(`INSERT INTO ledger SELECT seq, seq, REPEAT('x', 100) FROM seq_1_to_200`)
	topic := e.Prefix + "." + e.DB + ".ledger"
	cfg := e.FaultConfig("60s")
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 200 })
	w := itest.NewLedgerWriter(200)
	w.WriteMySQLFor(t, itest.FaultMariaDBAddr, e.DB, 3*time.Second)
	itest.AwaitCatchUp(t, topic, int64(200+len(w.Committed())))
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	// Committed on the old primary after the pipeline stopped: only the
	// replica can deliver these now.
	w.WriteMySQLFor(t, itest.FaultMariaDBAddr, e.DB, 2*time.Second)
	awaitReplica(t, e, replica)
	for _, q := range []string{"STOP SLAVE", "RESET SLAVE ALL"} { // promoted
		if _, err := replica.Execute(q); err != nil {
			t.Fatalf("promote: %s: %v", q, err)
		}
	}
	w.WriteMySQLFor(t, faultReplicaAddr, e.DB, 2*time.Second)
	cfg = retarget(t, e.FaultConfig("60s"), itest.FaultMariaDBAddr, faultReplicaAddr)
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 30*time.Second, "streaming from the new primary", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited on the new primary:\n%s", p.Out)
		}
		return strings.Contains(p.Out.String(), "streaming binlog")
	})
	report := []string{"failover to a GTID replica: " + itest.LineWith(p.Out.String(), "streaming binlog")}
	verifyFaultRun(t, p, topic, w, "mysql failover", report)

	// Back to the old primary: it lacks the new primary's transactions.
	cfg = e.FaultConfig("60s")
	p = e.Start("run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("tributary kept running on a server that lacks the checkpoint's transactions:\n%s", p.Out)
	}
	out := p.Out.String()
	if code := p.Cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out, "resnapshot required") ||
		!strings.Contains(out, "lacks transactions") || !strings.Contains(out, "-2-") {
		t.Fatalf("exit %d on a server lacking the checkpoint's GTIDs, want 1, \"resnapshot required\" and the missing GTIDs (server_id 2):\n%s", code, out)
	}
	if strings.Contains(out, `"class":"retriable"`) {
		t.Errorf("a server lacking the checkpoint's transactions was retried:\n%s", out)
	}
	t.Log("stale old primary: " + itest.LineWith(out, "lacks transactions"))
}
