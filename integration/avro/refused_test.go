package avro_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestAvroRefusedSchemaStalls: a column retyped so that the new value
// schema breaks the subject's BACKWARD rule is refused by the registry. The
// pipeline then waits, logging the registry's reason and the fix, and
// publishes nothing past the change (no row skipped); stopped meanwhile, it
// stops cleanly, and once the subject's rule allows the schema the row goes
// out.
func TestAvroRefusedSchemaStalls(t *testing.T) {
	e := itest.NewEnv(t, "avrorefused")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY, v int)`)
	cfg := e.WritePipeline(itest.PipelineConfig{})
	itest.AppendConfig(t, cfg, "format:\n  value: avro\n  schema_registry:\n    type: confluent\n    url: "+registry+"\n")
	topic := e.Prefix + ".public.t"
	p := e.Start("run", "--config", cfg)
	e.Exec(`INSERT INTO t VALUES (1, 1)`)
	itest.WaitFor(t, 90*time.Second, "the first row", func() bool { return itest.TopicEnd(topic) >= 1 || p.Exited() })
	setCompat(t, topic+"-value", "BACKWARD")

	e.Exec(`ALTER TABLE t ALTER COLUMN v TYPE text`)
	e.Exec(`INSERT INTO t VALUES (2, 'two')`)
	itest.WaitFor(t, 60*time.Second, "the refusal logged", func() bool {
		return strings.Contains(p.Out.String(), "schema registry refused a schema") || p.Exited()
	})
	out := p.Out.String()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "schema registry refused") {
			t.Logf("logged: %s", l)
			break
		}
	}
	for _, want := range []string{"Incompatible", topic + "-value", "set the subject's compatibility"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	time.Sleep(3 * time.Second)
	if n := itest.TopicEnd(topic); n != 1 || p.Exited() {
		t.Fatalf("while refused: %d records on %s (want 1), exited %v", n, topic, p.Exited())
	}

	// Stopped while it waits, it stops cleanly; the row is still to come.
	if code := p.Stop(t); code != 0 {
		t.Fatalf("stopped while waiting: exit %d:\n%s", code, p.Out)
	}
	setCompat(t, topic+"-value", "NONE")
	p = e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the row after the fix", func() bool { return itest.TopicEnd(topic) >= 2 || p.Exited() })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	if s := e.SkippedLines(t); len(s) != 0 {
		t.Errorf("rows skipped: %v", s)
	}
}

func setCompat(t *testing.T, subject, level string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, registry+"/config/"+subject, strings.NewReader(`{"compatibility":"`+level+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("setting %s's compatibility: %v %v", subject, err, resp)
	}
	resp.Body.Close()
}
