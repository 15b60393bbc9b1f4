package faults_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestMySQLSourceFaults: while a writer commits changes, the binlog
// connection is KILLed and then MariaDB is restarted; the publisher,
// never restarted by hand, reconnects by itself both times (the old code
// exited with "binlog stream: … connection was bad"), reports it on
// /metrics, and the topic holds every committed change. Then an outage
// longer than source.outage_window ends it with exit 1 and the reason,
// and a restart after the server is back resumes with no gap.
func TestMySQLSourceFaults(t *testing.T) {
	e := itest.FaultMyEnv(t, "myfault")
	e.Exec(`CREATE TABLE ledger (k INT PRIMARY KEY, seq BIGINT NOT NULL, pad VARCHAR(200))`)
	e.Exec(`INSERT INTO ledger SELECT seq, seq, REPEAT('x', 100) FROM seq_1_to_200`)
	topic := e.Prefix + "." + e.DB + ".ledger"
	cfg := e.FaultConfig("60s")
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", cfg, "--metrics-addr", addr)
	itest.WaitFor(t, 60*time.Second, "the backfill", func() bool { return itest.TopicEnd(topic) >= 200 })
	w := itest.NewLedgerWriter(200)
	var report []string

	// 1. The binlog dump thread killed (KILL <id>), the writer going on.
	w.WriteMySQLFor(t, itest.FaultMariaDBAddr, e.DB, 2*time.Second)
	r, err := e.My.Execute(`SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'`)
	if err != nil || r.RowNumber() != 1 {
		t.Fatalf("find the binlog dump thread: %v (%d rows)", err, r.RowNumber())
	}
	id, _ := r.GetInt(0, 0)
	e.Exec(fmt.Sprintf("KILL %d", id))
	w.WriteMySQLFor(t, itest.FaultMariaDBAddr, e.DB, 2*time.Second)
	report = append(report, "binlog connection killed: recovered in "+itest.AwaitReconnect(t, p, 1))

	// 2. MariaDB restarted (clean shutdown, as a maintenance window does);
	// the writer commits while the publisher is reconnecting.
	e.My.Close()
	itest.Faults(t, "mariadb", "restart")
	w.WriteMySQLFor(t, itest.FaultMariaDBAddr, e.DB, 3*time.Second)
	report = append(report, "MariaDB restarted: recovered in "+itest.AwaitReconnect(t, p, 2))
	if e.My, err = client.Connect(itest.FaultMariaDBAddr, "root", "root", e.DB); err != nil {
		t.Fatal(err)
	}
	itest.AwaitCatchUp(t, topic, int64(200+len(w.Committed())))
	body := itest.Scrape(t, addr)
	for _, want := range []string{
		fmt.Sprintf(`tributary_source_connected{pipeline=%q} 1`, e.Name),
		fmt.Sprintf(`tributary_source_reconnects_total{pipeline=%q} `, e.Name),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, fmt.Sprintf(`tributary_source_reconnects_total{pipeline=%q} 0`, e.Name)) {
		t.Errorf("/metrics counts no reconnect")
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), `"class":"retriable"`) && !strings.Contains(p.Out.String(), "class=retriable") {
		t.Errorf("the log does not say the error was retriable:\n%s", p.Out)
	}

	// 3. An outage longer than the window: exit 1 naming the setting, then
	// a restart once the server is back resumes with no gap.
	cfg = e.FaultConfig("3s")
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 30*time.Second, "streaming", func() bool { return strings.Contains(p.Out.String(), "streaming binlog") })
	e.My.Close()
	itest.Faults(t, "mariadb", "stop")
	report = append(report, outageExit(t, p, time.Now()))
	itest.Faults(t, "mariadb", "up")
	w.WriteMySQLFor(t, itest.FaultMariaDBAddr, e.DB, 2*time.Second)
	p = e.Start("run", "--config", cfg)
	if e.My, err = client.Connect(itest.FaultMariaDBAddr, "root", "root", e.DB); err != nil {
		t.Fatal(err)
	}
	verifyFaultRun(t, p, topic, w, "mysql", report)
}

// verifyFaultRun ends a fault test: the publisher catches up and stops
// gracefully, the report is logged, and the topic must hold every
// committed change of w (duplicates allowed).
func verifyFaultRun(t *testing.T, p *itest.Proc, topic string, w *itest.LedgerWriter, label string, report []string) {
	t.Helper()
	itest.AwaitCatchUp(t, topic, int64(200+len(w.Committed())))
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	res := itest.VerifyLedger(t, topic, w)
	for _, l := range report {
		t.Log(l)
	}
	t.Logf("%s faults: %d committed changes, %s", label, len(w.Committed()), res)
	if res.Gaps > 0 {
		t.Fatalf("%d gaps", res.Gaps)
	}
}

// TestMySQLBackfillFault restarts MariaDB in the middle of a backfill: the
// publisher reconnects by itself, resumes the backfill and publishes
// every row (duplicates allowed, no gaps).
func TestMySQLBackfillFault(t *testing.T) {
	e := itest.FaultMyEnv(t, "mybffault")
	const rows = 150000
	e.Exec(`CREATE TABLE bulk (k INT PRIMARY KEY, pad VARCHAR(200))`)
	e.Exec(fmt.Sprintf(`INSERT INTO bulk SELECT seq, REPEAT('y', 100) FROM seq_1_to_%d`, rows))
	e.My.Close()
	topic := e.Prefix + "." + e.DB + ".bulk"
	p := e.Start("run", "--config", e.FaultConfig("60s"))
	itest.WaitFor(t, 60*time.Second, "the backfill to start", func() bool { return itest.TopicEnd(topic) > 0 })
	at := itest.TopicEnd(topic)
	itest.Faults(t, "mariadb", "restart")
	outage := awaitReconnectOrStream(t, p)
	verifyBackfillFault(t, p, topic, rows, fmt.Sprintf("MariaDB restarted mid-backfill (after %d of %d rows): %s", at, rows, outage))
}
