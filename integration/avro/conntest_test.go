package avro_test

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestAvroTestConnection: with Avro, test-connection checks the schema
// registry: the test registry and a Glue registry on moto pass, each saying
// it may register under the pipeline's prefix (asked without registering);
// a URL where no registry answers, and a Glue registry that does not
// exist, fail with the fix, and the command exits 1.
func TestAvroTestConnection(t *testing.T) {
	e := itest.NewEnv(t, "avroconn")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	motoRegistry(t, e.DB)
	for _, tc := range []struct {
		name, registry string
		env            []string
		code           int
		want           []string
	}{
		{"confluent", "    type: confluent\n    url: " + registry + "\n", nil, 0,
			[]string{"ok   schema registry", "Confluent API at 127.0.0.1:8081 answers", "may register under " + e.Prefix + "."}},
		{"confluent unreachable", "    type: confluent\n    url: http://127.0.0.1:1/apis/ccompat/v7\n    username: u\n    password: p4ssw0rd-never-shown\n", nil, 1,
			[]string{"FAIL schema registry", "connection refused", "fix: check format.schema_registry.url", "and its username and password"}},
		{"glue", "    type: glue\n    registry_name: " + e.DB + "\n", motoEnv, 0,
			[]string{"ok   schema registry", "Glue schema registry " + e.DB + " readable", "may look up schemas and register versions"}},
		{"glue missing", "    type: glue\n    registry_name: no-such-registry-" + e.DB + "\n", motoEnv, 1,
			[]string{"FAIL schema registry", "does not exist", "aws glue create-registry --registry-name no-such-registry-" + e.DB}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.WritePipeline(itest.PipelineConfig{File: strings.ReplaceAll(tc.name, " ", "-") + ".yaml"})
			itest.AppendConfig(t, cfg, "format:\n  value: avro\n  schema_registry:\n"+tc.registry)
			p := e.StartWith(tc.env, "test-connection", "--config", cfg)
			<-p.Done
			out, code := p.Out.String(), p.Cmd.ProcessState.ExitCode()
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "p4ssw0rd-never-shown") {
				t.Errorf("the output shows the registry password:\n%s", out)
			}
		})
	}
}
