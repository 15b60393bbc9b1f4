package cli_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestConfigErrorsHideReferencedSecrets: a reference put in the wrong field
// (delivery: ${ssm:/tributary/shop/source-url}, here ${env:CANARY}) makes
// validate and run exit 2 naming the field and its rule; neither prints
// the value the reference resolved to, on stdout or stderr, whatever
// field took it.
func TestConfigErrorsHideReferencedSecrets(t *testing.T) {
	itest.SkipShort(t)
	const canary = "postgres://tributary:s3cretCANARYpw0rd@db.internal:5432/shop"
	dir := t.TempDir()
	// Each case: the field refused, extra source keys, extra destination
	// keys, extra top-level lines.
	cases := [][4]string{
		{"delivery", "", "", "delivery: ${env:CANARY}\n"},
		{"source.snapshot_mode", "snapshot_mode: '${env:CANARY}'", "", ""},
		{"format.decimal_handling", "", "", "format: {decimal_handling: '${env:CANARY}'}\n"},
		{"format.time_precision", "", "", "format: {time_precision: '${env:CANARY}'}\n"},
		{"format.binary_handling", "", "", "format: {binary_handling: '${env:CANARY}'}\n"},
		{"format.add_fields", "", "", "format: {unwrap: true, add_fields: ['${env:CANARY}']}\n"},
		{"format.delete_handling", "", "", "format: {unwrap: true, delete_handling: '${env:CANARY}'}\n"},
		{"transactions.max_interval", "", "", "transactions: {max_interval: '${env:CANARY}'}\n"},
		{"transactions.offsets_topic", "", "", "transactions: {offsets_topic: '${env:CANARY}'}\n"},
		{"destination.delete_mode", "", "delete_mode: '${env:CANARY}'", ""},
		{"destination.authentication", "", "authentication: '${env:CANARY}'", ""},
		{"log_format", "", "", "log_format: '${env:CANARY}'\n"},
		{"checkpoint.store", "", "", "checkpoint: {store: '${env:CANARY}'}\n"},
	}
	for i, c := range cases {
		field := c[0]
		doc := "name: secrets-cli\nsource: {type: postgres, url: 'postgres://u@127.0.0.1:5432/db', " + c[1] + "}\n" +
			"destination: {bootstrap_servers: '127.0.0.1:9092', topic_prefix: secrets_cli, disable_tls: true, " + c[2] + "}\n" + c[3]
		path := filepath.Join(dir, strings.ReplaceAll(field, ".", "-")+".yaml")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, command := range []string{"validate", "run"} {
			if command == "run" && i%3 != 0 {
				continue // run loads the document as validate does; a few cases show it
			}
			cmd := exec.Command(itest.Binary, command, "--config", path)
			cmd.Env = append(os.Environ(), "CANARY="+canary, "TRIBUTARY_METRICS=none")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			out := stdout.String() + stderr.String()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("%s %s: exit %d, want 2:\n%s", command, field, code, out)
			}
			if !strings.Contains(stderr.String(), field+": ") {
				t.Errorf("%s %s: the field is not named:\n%s", command, field, out)
			}
			for _, leak := range []string{"CANARY", "s3cret"} {
				if strings.Contains(out, leak) {
					t.Errorf("%s %s: the output shows the referenced secret:\n%s", command, field, out)
				}
			}
		}
	}
}

// TestRunLogsHideReferencedValues: what run logs passes a scrubber of the
// values the document's references read. A source host read through a
// reference, which the driver's connection error names, shows as REDACTED.
func TestRunLogsHideReferencedValues(t *testing.T) {
	itest.SkipShort(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.yaml")
	doc := "name: secrets-run\nsource: {type: postgres, url: 'postgres://u@${env:CANARY_HOST}:5432/db', outage_window: 1s}\n" +
		"destination: {bootstrap_servers: '127.0.0.1:9092', topic_prefix: secrets_run, disable_tls: true}\n" +
		"checkpoint: {path: '" + filepath.Join(dir, "state") + "'}\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(itest.Binary, "run", "--config", path)
	cmd.Env = append(os.Environ(), "CANARY_HOST=db-CANARY-4417.invalid", "TRIBUTARY_METRICS=none")
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "lookup "+"REDACTED") {
		t.Fatalf("exit %d, want 1 with the failed lookup of the host, scrubbed:\n%s", code, out)
	}
	if strings.Contains(string(out), "CANARY") {
		t.Fatalf("the log shows the value a reference read:\n%s", out)
	}
}

// TestServerTruncatedEchoHidden: a database server echoes a user or
// database name cut to its own limit (PostgreSQL to 63 bytes, MariaDB's
// user names to 128 characters). A long value read through a reference
// (here 64 and 200 bytes, as `openssl rand -hex 32` makes) put in the URL
// comes back cut, and the cut value, nearly all of the secret, shows as
// REDACTED too, in test-connection's report and in tables' log line.
func TestServerTruncatedEchoHidden(t *testing.T) {
	itest.SkipShort(t)
	dir := t.TempDir()
	long := "trunc" + strings.Repeat("9CANARY3", 24) // 197 bytes
	for _, c := range []struct{ name, url, canary string }{
		{"pg-user", "postgres://${env:CANARY}:pw@127.0.0.1:5432/postgres?sslmode=disable", long[:64]},
		{"pg-database", "postgres://postgres:postgres@127.0.0.1:5432/${env:CANARY}?sslmode=disable", long[:64]},
		{"mysql-user", "mysql://${env:CANARY}:pw@127.0.0.1:3306/db", long},
	} {
		path := filepath.Join(dir, c.name+".yaml")
		doc := "name: secrets-trunc\nsource: {type: " + map[bool]string{true: "postgres", false: "mysql"}[strings.HasPrefix(c.url, "postgres")] + ", url: '" + c.url + "'}\n" +
			"destination: {bootstrap_servers: '127.0.0.1:9092', topic_prefix: secrets_trunc, disable_tls: true}\n"
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"test-connection", "--json"}, {"tables"}} {
			cmd := exec.Command(itest.Binary, append(args, "--config", path)...)
			cmd.Env = append(os.Environ(), "CANARY="+c.canary, "TRIBUTARY_METRICS=none")
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("%s %s: exit %d, want 1 (the server refuses the sign-in):\n%s", c.name, args[0], code, out)
			}
			if strings.Contains(string(out), "CANARY") {
				t.Errorf("%s %s: the output shows the referenced value, cut by the server:\n%s", c.name, args[0], out)
			}
		}
	}
}

// TestStatusJSONHidesReferencedValues: run's /status.json shows the
// source's last error while it reconnects; an error that names a value
// read through a reference (here the database name, which the driver's
// connection error quotes) shows it as REDACTED there too, as on stderr.
func TestStatusJSONHidesReferencedValues(t *testing.T) {
	e := itest.NewEnv(t, "clistatusref")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	proxy := itest.NewCutProxy(t, "127.0.0.1:5432")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "postgres",
		URL: "postgres://postgres:postgres@" + proxy.Addr + "/${env:STATUS_REF_DB}", Source: "  outage_window: 120s\n"})
	addr := itest.FreeAddr(t)
	p := e.StartWith([]string{"STATUS_REF_DB=" + e.DB}, "run", "--config", cfg, "--http-addr", addr)
	get := func() string {
		resp, err := http.Get("http://" + addr + "/status.json")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	itest.WaitFor(t, 60*time.Second, "run to stream", func() bool {
		if p.Exited() {
			t.Fatalf("run exited:\n%s", p.Out)
		}
		return strings.Contains(get(), `"state":"running"`) && strings.Contains(p.Out.String(), "streaming from the replication slot")
	})
	proxy.Cut()
	var body string
	itest.WaitFor(t, 60*time.Second, "/status.json to show the source's connection error", func() bool {
		body = get()
		return strings.Contains(body, `"last_error":"`) && strings.Contains(body, "failed to connect")
	})
	if strings.Contains(body, e.DB) {
		t.Errorf("/status.json shows the database name read through a reference:\n%s", body)
	}
	if !strings.Contains(body, "REDACTED") {
		t.Errorf("/status.json: want the database name as REDACTED:\n%s", body)
	}
	p.Stop(t)
	// The snapshot the file store keeps for `tributary status`.
	stored, err := os.ReadFile(filepath.Join(e.Dir, "checkpoints", e.Name+".status.json"))
	if err != nil || !strings.Contains(string(stored), "REDACTED") || strings.Contains(string(stored), e.DB) {
		t.Errorf("the stored status snapshot (%v), want the database name as REDACTED:\n%s", err, stored)
	}
	if strings.Contains(p.Out.String(), e.DB) {
		t.Errorf("run's log shows the database name read through a reference:\n%s", p.Out)
	}
}

// TestServerEchoOfDecodedValueHidden: a value read through a reference
// into a URL's user name or database name is percent-decoded by the
// driver, and the server echoes the decoded name ("password
// authentication failed for user …"); that form shows as REDACTED too.
func TestServerEchoOfDecodedValueHidden(t *testing.T) {
	itest.SkipShort(t)
	dir := t.TempDir()
	const canary = "pct%43ANARY%2Duser" // decoded: pctCANARY-user
	for _, c := range []struct{ name, typ, url string }{
		{"pg-user", "postgres", "postgres://${env:CANARY}:pw@127.0.0.1:5432/postgres?sslmode=disable"},
		{"pg-database", "postgres", "postgres://postgres:postgres@127.0.0.1:5432/${env:CANARY}?sslmode=disable"},
		{"mysql-user", "mysql", "mysql://${env:CANARY}:pw@127.0.0.1:3306/db"},
	} {
		path := filepath.Join(dir, c.name+".yaml")
		doc := "name: secrets-pct\nsource: {type: " + c.typ + ", url: '" + c.url + "'}\n" +
			"destination: {bootstrap_servers: '127.0.0.1:9092', topic_prefix: secrets_pct, disable_tls: true}\n"
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(itest.Binary, "test-connection", "--json", "--config", path)
		cmd.Env = append(os.Environ(), "CANARY="+canary, "TRIBUTARY_METRICS=none")
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("%s: exit %d, want 1 (the server refuses the sign-in):\n%s", c.name, code, out)
		}
		if strings.Contains(string(out), "CANARY") {
			t.Errorf("%s: the output shows the referenced value, percent-decoded:\n%s", c.name, out)
		}
	}
}

// TestValueQuotedTwiceHidden: an error that quotes a name (%q: database
// "dq\"…") and is then written as JSON (a log line, test-connection
// --json) escapes a quote in a value read through a reference twice; that
// form shows as REDACTED too.
func TestValueQuotedTwiceHidden(t *testing.T) {
	itest.SkipShort(t)
	path := filepath.Join(t.TempDir(), "quoted.yaml")
	doc := "name: secrets-quoted\nsource: {type: mysql, url: 'mysql://root:root@127.0.0.1:3306/${env:CANARY}'}\n" +
		"destination: {bootstrap_servers: '127.0.0.1:9092', topic_prefix: secrets_quoted, disable_tls: true}\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tables"}, {"test-connection", "--json"}} {
		cmd := exec.Command(itest.Binary, append(args, "--config", path)...)
		cmd.Env = append(os.Environ(), `CANARY=dq"CANARYdb`, "TRIBUTARY_METRICS=none")
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "does not exist") {
			t.Errorf("%s: want the missing database reported:\n%s", args[0], out)
		}
		if strings.Contains(string(out), "CANARY") {
			t.Errorf("%s: the output shows the referenced value, escaped twice:\n%s", args[0], out)
		}
	}
}
