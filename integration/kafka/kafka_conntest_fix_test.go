package kafka_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestKafkaErrorsSayTheFix: test-connection (and run, for the first two)
// against the real listeners words each common mistake as what it is and
// names the key that fixes it: TLS against the plaintext listener, a
// refused port (a connection failure, not a sign-in one), a wrong
// password, SASL where the listener takes none and none where it
// requires it, no client certificate on the mutual-TLS listener, and a
// prefix the ACLs do not cover (with the kafka-acls.sh line).
func TestKafkaErrorsSayTheFix(t *testing.T) {
	itest.SkipShort(t)
	dir := t.TempDir()
	ca := "  ca_certificate: |\n" + itest.Indent(itest.TLSFile(t, "ca.pem"), "    ")
	write := func(name, dest string) string {
		path := filepath.Join(dir, name+".yaml")
		cfg := fmt.Sprintf("name: kfix\nsource:\n  type: postgres\n  url: %s\ndestination:\n%scheckpoint:\n  path: %s\n", itest.PGAdminURL, dest, dir)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := []struct {
		name, dest string
		run        bool     // run says it too
		want       []string // in the failing line
		not        string
	}{
		{"tls-on-plaintext", "  bootstrap_servers: " + itest.KafkaAddr + "\n  topic_prefix: kfix\n", true,
			[]string{"could not connect", "set `destination.disable_tls: true` if the listener is plaintext"}, ""},
		{"refused", "  bootstrap_servers: 127.0.0.1:1\n  topic_prefix: kfix\n  disable_tls: true\n", false,
			[]string{"could not connect to any bootstrap server", "connection refused", "destination.bootstrap_servers"}, "accepted the sign-in"},
		{"wrong-password", "  bootstrap_servers: " + itest.KafkaSASLAddr + "\n  topic_prefix: " + itest.SecPrefix("fix") + "\n  authentication: SCRAM-SHA-512\n  username: writer\n  password: not-it\n" + ca, true,
			[]string{"SASL_AUTHENTICATION_FAILED", "check destination.username and destination.password"}, "TLS handshake"},
		{"sasl-on-plaintext", "  bootstrap_servers: " + itest.KafkaAddr + "\n  topic_prefix: kfix\n  disable_tls: true\n  authentication: SCRAM-SHA-256\n  username: writer\n  password: writer-secret\n", false,
			[]string{"the listener does not take SASL", "destination.authentication: NONE"}, ""},
		{"no-sasl", "  bootstrap_servers: " + itest.KafkaSASLAddr + "\n  topic_prefix: kfix\n" + ca, false,
			[]string{"the listener requires SASL", "destination.authentication"}, ""},
		{"no-client-certificate", "  bootstrap_servers: " + itest.KafkaMTLSAddr + "\n  topic_prefix: kfix\n" + ca, false,
			[]string{"requires a client certificate", "destination.client_certificate"}, ""},
		{"acl", "  bootstrap_servers: " + itest.KafkaSASLAddr + "\n  topic_prefix: outside-acls\n  authentication: SCRAM-SHA-512\n  username: writer\n  password: writer-secret\n" + ca, false,
			[]string{"TOPIC_AUTHORIZATION_FAILED", "kafka-acls.sh --bootstrap-server " + itest.KafkaSASLAddr, "--allow-principal User:writer --operation Describe --operation Write --topic outside-acls. --resource-pattern-type prefixed"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := write(c.name, c.dest)
			cmds := [][]string{{"test-connection", "--config", cfg}}
			if c.run {
				cmds = append(cmds, []string{"run", "--config", cfg})
			}
			for _, args := range cmds {
				out, _ := exec.Command(itest.Binary, args...).CombinedOutput()
				line := ""
				for _, l := range strings.Split(string(out), "\n") {
					// Kafka's first failing line: the source's database has no
					// table, so its "listed tables" line fails too.
					if (strings.Contains(l, "FAIL") && !strings.Contains(l, "listed tables")) || strings.Contains(l, `"level":"ERROR"`) {
						line = l
						break
					}
				}
				for _, w := range c.want {
					if !strings.Contains(line, w) {
						t.Errorf("%s: the first failing line does not say %q:\n%s\n(all output:\n%s)", args[0], w, line, out)
					}
				}
				if c.not != "" && strings.Contains(line, c.not) {
					t.Errorf("%s: the first failing line says %q:\n%s", args[0], c.not, line)
				}
			}
		})
	}
}

// TestMySQLMissingDatabaseIsNotASignalTableProblem: a URL naming a
// database that does not exist is answered with the database, in every
// check, never with "create the signal table".
func TestMySQLMissingDatabaseIsNotASignalTableProblem(t *testing.T) {
	e := itest.NewMyEnv(t, "mynodb")
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: "mysql://root:root@" + itest.MariadbAddr + "/" + e.DB + "_missing"})
	code, out := itest.TestConnection(t, e.Env, cfg)
	if code != 1 || strings.Contains(out, "CREATE TABLE") || !strings.Contains(out, "database "+e.DB+"_missing does not exist") {
		t.Errorf("exit %d, want 1 naming the missing database and no CREATE TABLE for the signal table:\n%s", code, out)
	}
}
