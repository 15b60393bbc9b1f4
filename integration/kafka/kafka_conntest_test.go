package kafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestKafkaConnTestUnreachableBroker: a cluster that advertises a second
// broker whose address does not listen fails the test naming that broker.
// kfake stands in for the cluster because the real one has one broker and
// cannot advertise a dead second one on demand.
func TestKafkaConnTestUnreachableBroker(t *testing.T) {
	itest.SkipShort(t)
	var mu sync.Mutex
	var lns []net.Listener
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.ListenFn(func(network, addr string) (net.Listener, error) {
		ln, err := net.Listen(network, addr)
		mu.Lock()
		lns = append(lns, ln)
		mu.Unlock()
		return ln, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	mu.Lock()
	dead := lns[1].Addr().String()
	lns[1].Close() // broker 1 is still advertised, but nothing listens there
	mu.Unlock()
	if addrs[1] != dead {
		t.Fatalf("listen addrs %v, closed %s", addrs, dead)
	}

	d := kafka.Options{BootstrapServers: addrs[0], DisableTLS: true, Authentication: config.AuthNone}
	r := kafka.TestConnection(context.Background(), d, "shop")
	if r.OK {
		t.Fatalf("report OK with a dead broker: %s", dump(r))
	}
	host, port, _ := net.SplitHostPort(dead)
	want := fmt.Sprintf("broker 1 at %s:%s is unreachable", host, port)
	var found bool
	for _, b := range r.Brokers {
		if b.ID == 1 {
			found = b.Error == want && !b.Reachable
		} else if !b.Reachable {
			t.Errorf("live broker %d reported unreachable: %+v", b.ID, b)
		}
	}
	if !found || !strings.Contains(check(r, kafka.CheckBrokers).Detail, want) {
		t.Fatalf("want %q in the report: %s", want, dump(r))
	}
}

// TestKafkaConnTestCLI runs `tributary test-connection` against the real
// secured broker: exit 0 and a JSON report when every check passes, 1 with
// a wrong password (which never appears in the output), 2 for a bad config.
func TestKafkaConnTestCLI(t *testing.T) {
	e := itest.NewEnv(t, "kconncli") // a database with a table: one that captures nothing fails the source's checks
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	dir := t.TempDir()
	const canary = "canary-S3cret-91ab"
	write := func(name, extra string) string {
		path := filepath.Join(dir, name)
		cfg := fmt.Sprintf(`name: conntest
source:
  type: postgres
  url: %s
destination:
  bootstrap_servers: %s
  topic_prefix: %s
  authentication: SCRAM-SHA-256
  username: writer
  password: ${env:IT_KAFKA_PASSWORD}
  ca_certificate: |
%s%s`, e.PGURL(), itest.KafkaSASLAddr, itest.SecPrefix("cli"), itest.Indent(itest.TLSFile(t, "ca.pem"), "    "), extra)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(password string, args ...string) (int, string) {
		cmd := exec.Command(itest.Binary, args...)
		cmd.Env = append(os.Environ(), "IT_KAFKA_PASSWORD="+password)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}

	ok := write("ok.yaml", "")
	code, out := run("writer-secret", "test-connection", "--config", ok, "--json")
	var r kafka.Report
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.OK || len(r.Brokers) != 1 {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}

	code, out = run(canary, "test-connection", "--config", ok)
	if code != 1 || !strings.Contains(out, "FAIL sign-in") {
		t.Fatalf("wrong password: exit %d, output:\n%s", code, out)
	}
	if strings.Contains(out, canary) {
		t.Fatalf("the password appears in the output:\n%s", out)
	}

	bad := write("bad.yaml", "  ssh_tunnel: {host: bastion}\n")
	code, out = run("writer-secret", "test-connection", "--config", bad)
	if code != 2 || !strings.Contains(out, "destination.ssh_tunnel") {
		t.Fatalf("ssh tunnel config: exit %d, output:\n%s", code, out)
	}
}
