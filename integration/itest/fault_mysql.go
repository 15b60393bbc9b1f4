package itest

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// FaultMariaDBAddr is the private MariaDB of integration/services/faults.sh:
// the fault tests restart and kill it, never the shared one.
const FaultMariaDBAddr = "127.0.0.1:3316"

// Faults runs integration/services/faults.sh with args.
func Faults(t *testing.T, args ...string) {
	t.Helper()
	// Other test packages run at the same time and use these servers too.
	Exclusive(t, "faults")
	out, err := exec.Command("services/faults.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("faults.sh %v: %v\n%s", args, err, out)
	}
}

// FaultMyEnv is a myEnv on the private MariaDB.
func FaultMyEnv(t *testing.T, label string) *MyEnv {
	SkipShort(t)
	Faults(t, "mariadb", "up")
	return NewMyEnvAt(t, label, FaultMariaDBAddr)
}

// FaultConfig writes the pipeline's config, on the private MariaDB, with
// the given outage window.
func (e *MyEnv) FaultConfig(window string) string {
	return e.WritePipeline(PipelineConfig{Typ: "mysql", URL: "mysql://root:root@" + FaultMariaDBAddr + "/" + e.DB, Source: "  outage_window: " + window + "\n"})
}

// WriteMySQLFor commits random transactions (writer.tx) on addr for
// d, connecting again while the server is coming back. It is never
// running while the server goes away, so no commit is in doubt.
func (w *Writer) WriteMySQLFor(t *testing.T, addr, db string, d time.Duration) {
	t.Helper()
	var conn *client.Conn
	var err error
	WaitFor(t, 60*time.Second, "the writer's connection", func() bool {
		conn, err = client.Connect(addr, "root", "root", db)
		return err == nil
	})
	defer conn.Close()
	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	for end := time.Now().Add(d); time.Now().Before(end); {
		if err := w.Tx(MysqlExec(conn), rng); err != nil {
			t.Fatalf("writer: %v", err)
		}
		time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
	}
}

// ReconnectedLine matches the text and the JSON form of the line (the pipeline logs
// JSON when its output is not a terminal).
var ReconnectedLine = regexp.MustCompile(`source reconnected.*?outage"?[=:]"?([^",\s}]+)`)

// AwaitReconnect waits for the n-th "source reconnected" log line and
// returns the outage it reports.
func AwaitReconnect(t *testing.T, p *Proc, n int) string {
	t.Helper()
	var outage string
	WaitFor(t, 90*time.Second, fmt.Sprintf("reconnect %d", n), func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited instead of reconnecting: %v\n%s", p.Err, p.Out)
		}
		m := ReconnectedLine.FindAllStringSubmatch(p.Out.String(), -1)
		if len(m) >= n {
			outage = m[n-1][1]
			return true
		}
		return false
	})
	return strings.Trim(outage, `"`)
}

// MysqlExec runs the writer's statements on a MySQL connection.
func MysqlExec(conn *client.Conn) func(string) error {
	return func(q string) error { _, err := conn.Execute(q); return err }
}
