package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGMisspeltTableListFailsAtStart: source.tables names only a table
// that does not exist (public.order, where public.orders does). run used
// to create a slot and an empty publication and idle for ever; it now
// fails at start (exit 1, as on MariaDB) with the did-you-mean `tables`
// gives, leaving no slot. test-connection's failed check says the same.
func TestPGMisspeltTableListFailsAtStart(t *testing.T) {
	e := itest.NewEnv(t, "pgmisspelt")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	cfg := e.WriteTablesConfig("public.order")

	code, out := itest.TestConnection(t, e, cfg)
	if code == 0 || !strings.Contains(out, "did you mean public.orders?") {
		t.Errorf("test-connection: exit %d, want a failure with the did-you-mean\n%s", code, out)
	}

	p := e.Start("run", "--config", cfg)
	code = itest.ExitWithin(t, p, 60*time.Second, "run with a misspelt table list")
	if code != 1 || !strings.Contains(p.Out.String(), "nothing to capture") || !strings.Contains(p.Out.String(), "did you mean public.orders?") {
		t.Errorf("run: exit %d, want 1 saying nothing to capture, with the did-you-mean\n%s", code, p.Out)
	}
	if n := e.PGCount(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, "tributary_"+e.Name); n != 0 {
		t.Errorf("run with nothing to capture left a slot")
	}
}
