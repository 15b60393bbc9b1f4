package itest

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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

// FaultMyEnv is a MyEnv on the private MariaDB.
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

// FaultPgURL is the URL of e's database on the private PostgreSQL of
// integration/services/faults.sh.
func (e *Env) FaultPgURL() string { return "postgres://postgres:postgres@127.0.0.1:5442/" + e.DB }

// FaultPgSQL runs sql on the fault server's database, connecting anew (the
// server may just have restarted).
func (e *Env) FaultPgSQL(sql string) {
	e.T.Helper()
	var conn *pgx.Conn
	var err error
	WaitFor(e.T, 60*time.Second, "a connection to the fault PostgreSQL", func() bool {
		conn, err = pgx.Connect(context.Background(), e.FaultPgURL())
		return err == nil
	})
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		e.T.Fatalf("%s: %v", sql, err)
	}
}

// FaultPgConfig writes the pipeline's config, on the private PostgreSQL,
// with the given outage window.
func (e *Env) FaultPgConfig(window string) string {
	return e.WritePipeline(PipelineConfig{Typ: "postgres", URL: e.FaultPgURL(), Source: "  outage_window: " + window + "\n"})
}

// NeverReached starts a pipeline c whose source URL names addr, where
// nothing listens, with the password s3cret-pw: with no checkpoint this
// is a first start, which fails at once (exit 1, the address and the
// cause, never the password) instead of retrying for
// source.outage_window (5 minutes) as an outage (docs/operations.md,
// "A source never reached").
func NeverReached(t *testing.T, e *Env, c PipelineConfig, addr string) {
	t.Helper()
	cfg := e.WritePipeline(c)
	start := time.Now()
	p := e.Start("run", "--config", cfg)
	code := ExitWithin(t, p, 45*time.Second, "a source never reached")
	out := p.Out.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1; output:\n%s", code, out)
	}
	line := LineWith(out, "never reached")
	for _, want := range []string{addr, "refused", "source.url"} {
		if !strings.Contains(line, want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret-pw") {
		t.Error("the password appears in the output")
	}
	if strings.Contains(out, "reconnecting") {
		t.Errorf("a first start that never connected was retried:\n%s", out)
	}
	t.Logf("exit 1 after %s: %s", time.Since(start).Round(100*time.Millisecond), line)
}

// DownAtRestart runs the pipeline of cfg, whose source is reached through
// proxy: once to a checkpoint, then again with the port closed for down
// (the restart of a task with a checkpoint, which must wait for its
// database rather than exit), then through a 3 s cut after it connected.
// write(n) commits change n at the source, whose server stays up (only
// the port closes); await(p, n) waits until p published it. A reconnect
// is logged.
func DownAtRestart(t *testing.T, e *Env, proxy *CutProxy, cfg string, down time.Duration, write func(n int), await func(p *Proc, n int)) {
	t.Helper()
	p := e.Start("run", "--config", cfg)
	write(1)
	await(p, 1)
	time.Sleep(1500 * time.Millisecond) // a checkpoint
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	proxy.Cut()
	p = e.Start("run", "--config", cfg)
	time.Sleep(down)
	if p.Exited() {
		t.Fatalf("a restart with a checkpoint gave up while the database was unreachable for %s; output:\n%s", down, p.Out)
	}
	write(2)
	proxy.Mend()
	await(p, 2)

	// Down for a few seconds after this process connected: an outage too.
	proxy.Cut()
	time.Sleep(3 * time.Second)
	write(3)
	proxy.Mend()
	await(p, 3)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "reconnecting") {
		t.Errorf("no reconnect was logged:\n%s", p.Out)
	}
}
