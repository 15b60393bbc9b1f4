package mongodb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// A first start whose source.url names a port nothing listens on exits 1
// at once with the "never reached" error, the address and the cause,
// never the password, as the relational sources' do
// (docs/operations.md, "A source never reached"); before, it waited out
// the driver's 30 s of server selection and ended as "fatal".
func TestCLINeverReachedFailsStart(t *testing.T) {
	itest.SkipShort(t)
	e := itest.BareEnv(t, "mongounreach")
	addr := itest.FreeAddr(t)
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: "mongodb://rv:s3cret-pw@" + addr + "/?directConnection=true",
		Source: "  tables: ['shop\\.orders']\n"})
	start := time.Now()
	p := e.Start("run", "--config", cfg)
	code := itest.ExitWithin(t, p, 20*time.Second, "a source never reached")
	out := p.Out.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1; output:\n%s", code, out)
	}
	line := itest.LineWith(out, "never reached")
	for _, want := range []string{addr, "refused", "source.url"} {
		if !strings.Contains(line, want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret-pw") {
		t.Error("the password appears in the output")
	}
	t.Logf("exit 1 after %s: %s", time.Since(start).Round(100*time.Millisecond), line)
}

// A pipeline with a checkpoint whose MongoDB is unreachable at its start
// (an ECS task replaced while the database restarts) retries for
// source.outage_window and publishes what changed meanwhile once the
// port answers; so does one that loses its server for a few seconds
// after it connected. The server is reached through a proxy whose port
// the test closes and opens again. Before, the restart exited 1 as
// "fatal" after the driver's 30 s of server selection.
func TestCLIDownAtRestartRecovers(t *testing.T) {
	c := client(t)
	db := newDB(t, c)
	coll := db.Collection("sentinel")
	ctx := context.Background()
	proxy := itest.NewCutProxy(t, "127.0.0.1:27017")
	if realServer() {
		t.Skip("the proxy forwards to the local mongo-java-server")
	}
	e := itest.BareEnv(t, "mongodownstart")
	ns := db.Name() + ".sentinel"
	cfg := e.WritePipeline(itest.PipelineConfig{Typ: "mongodb", URL: "mongodb://" + proxy.Addr + "/?directConnection=true",
		Source: "  tables: ['" + regexpQuote(ns) + "']\n  outage_window: 2m\n"})
	itest.AppendConfig(t, cfg, "format:\n  schemas: false\n")
	topic := e.Prefix + "." + ns
	insert := func(id int32) {
		t.Helper()
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			t.Fatal(err)
		}
	}
	insert(1)
	p := e.Start("run", "--config", cfg)
	p.WaitFor(t, 60*time.Second, "document 1", func() bool { return itest.TopicEnd(topic) >= 1 })
	time.Sleep(1500 * time.Millisecond) // a checkpoint
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}

	proxy.Cut()
	p = e.Start("run", "--config", cfg)
	// Longer than the driver's server selection (30 s), after which the
	// restart used to end.
	time.Sleep(33 * time.Second)
	if p.Exited() {
		t.Fatalf("a restart with a checkpoint gave up while the server was unreachable for 33 s; output:\n%s", p.Out)
	}
	insert(2) // the server itself is up: only the port is closed
	proxy.Mend()
	p.WaitFor(t, 60*time.Second, "document 2", func() bool { return itest.TopicEnd(topic) >= 2 })

	proxy.Cut()
	time.Sleep(3 * time.Second)
	insert(3)
	proxy.Mend()
	p.WaitFor(t, 60*time.Second, "document 3", func() bool { return itest.TopicEnd(topic) >= 3 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; output:\n%s", code, p.Out)
	}
	out := p.Out.String()
	if !strings.Contains(out, "reconnecting") {
		t.Errorf("no reconnect was logged:\n%s", out)
	}
	seen := map[string]bool{}
	for _, r := range readRecords(t, topic) {
		seen[string(r.key)] = true
	}
	for _, id := range []string{"1", "2", "3"} {
		if key := `{"id":"` + id + `"}`; !seen[key] {
			t.Errorf("document %s never published (keys %v)", id, seen)
		}
	}
}
