package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/status"
)

// TestStatusWithoutSecrets: status reads the checkpoint store only, so it
// runs where the pipeline's secrets are not set, as docs/configuration.md
// says: a mask rule's salt and the source password from variables that are
// unset for status (they refused it with exit 2: "salt: required with
// hash"). validate, too, only warns. run without them is still refused.
func TestStatusWithoutSecrets(t *testing.T) {
	e := itest.NewEnv(t, "stsecret")
	e.Exec(`CREATE TABLE users (id int PRIMARY KEY, email text)`)
	e.Exec(`INSERT INTO users VALUES (1, 'a@x')`)
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  mask_columns: [{columns: ['public\\.users\\.email'], hash: SHA-256, salt: '${env:TRIB_STSECRET_SALT}'}]\n"})
	p := e.StartWith([]string{"TRIB_STSECRET_SALT=salt-canary-3141"}, "run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "row 1", func() bool { return itest.TopicEnd(e.Prefix+".public.users") >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d:\n%s", code, p.Out)
	}

	out, code := e.Run("status", "--config", cfg, "--json")
	var r status.Report
	if code != 0 || json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &r) != nil || r.State != status.StateStopped || r.Checkpoint == nil {
		t.Errorf("status without the salt's variable: exit %d, want 0 and the stopped pipeline's checkpoint:\n%s", code, out)
	}
	if out, code := e.Run("status", "--config", cfg); code != 0 || !strings.Contains(out, "stopped") {
		t.Errorf("status (text) without the salt's variable: exit %d, want 0:\n%s", code, out)
	}
	if out, code := e.Run("validate", "--config", cfg); code != 0 || !strings.Contains(out, "TRIB_STSECRET_SALT is not set") {
		t.Errorf("validate without the salt's variable: exit %d, want 0 with a warning naming it:\n%s", code, out)
	}
	if out, code := e.Run("run", "--config", cfg); code != 2 || !strings.Contains(out, "TRIB_STSECRET_SALT is not set") {
		t.Errorf("run without the salt's variable: exit %d, want 2 naming it:\n%s", code, out)
	}
}
