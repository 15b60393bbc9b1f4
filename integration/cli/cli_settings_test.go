package cli_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestSlotAndSignalTableFromTheDocument: source.slot and
// source.signal_table, each a source type's own setting, reach their
// driver from the document as they always have: test-connection names
// the configured slot, and the configured signal table in the grant it
// asks for.
func TestSlotAndSignalTableFromTheDocument(t *testing.T) {
	e := itest.NewEnv(t, "clisetpg")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	slot := fmt.Sprintf("tributary_configured_%d", rand.IntN(1_000_000))
	cfg := e.WriteSourceConfig("  slot: "+slot+"\n", "")
	code, out := itest.TestConnection(t, e, cfg)
	if code != 0 || !strings.Contains(out, "slot "+slot+" does not exist yet") {
		t.Errorf("postgres: exit %d, no line naming slot %s:\n%s", code, slot, out)
	}

	m := itest.NewMyEnv(t, "clisetmy")
	m.Exec("CREATE TABLE t (id INT PRIMARY KEY)")
	user := fmt.Sprintf("cfgset%d", rand.IntN(1_000_000))
	m.Exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw-" + user + "'")
	t.Cleanup(func() { m.My.Execute("DROP USER IF EXISTS '" + user + "'@'%'") })
	m.Exec("GRANT SELECT ON " + m.DB + ".* TO '" + user + "'@'%'")
	cfg = m.WriteConfig("  signal_table: " + m.DB + ".configured_signal\n  server_id: 1234567\n")
	withSourceURL(t, cfg, "root:root@", user+":pw-"+user+"@")
	_, out = itest.TestConnection(t, m.Env, cfg)
	if want := "GRANT SELECT, INSERT, UPDATE ON `" + m.DB + "`.`configured_signal`"; !strings.Contains(out, want) {
		t.Errorf("mysql: no %q:\n%s", want, out)
	}
}
