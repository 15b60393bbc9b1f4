package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestValidateListsEverySourceProblem: the rules of each source type are
// its driver's (source.Kind), and validate still lists every problem at
// once, by field, with the messages users know, and exits 2.
func TestValidateListsEverySourceProblem(t *testing.T) {
	for _, c := range []struct {
		source string
		want   []string
	}{
		{"  type: MariaDB\n  url: 'mysql://u:secret@db/shop?tls=skip-verify'\n  signal_table: signals\n  outage_window: forever\n",
			[]string{
				"source.url: asks for tls=skip-verify: certificate verification is never switched off",
				`source.signal_table: must be db.table, not "signals"`,
				"source.outage_window: must be a duration",
				"destination.delete_mode: must be record",
			}},
		{"  type: postgres\n  url: 'mysql://db/shop'\n  slot: Slot\n  signal_table: shop.signals\n",
			[]string{
				"source.url: must start with postgres:// or postgresql:// for a postgres source",
				`source.slot: character 'S' is not allowed; use lower-case letters, digits and '_' (a Postgres identifier)`,
				"source.signal_table: is for mysql sources only",
				"destination.delete_mode: must be record",
			}},
		{"  type: oracle\n  url: 'oracle://db/shop'\n",
			[]string{"source.type: must be postgres, mysql or mongodb", "destination.delete_mode: must be record"}},
	} {
		cfg := writeFile(t, "name: shop\nsource:\n"+c.source+"destination:\n  bootstrap_servers: 127.0.0.1:9092\n  topic_prefix: shop\n  delete_mode: sometimes\n")
		var stdout, stderr bytes.Buffer
		if code := mainExit([]string{"validate", "--config", cfg}, &stdout, &stderr); code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("stderr does not say %q:\n%s", w, stderr.String())
			}
		}
		if strings.Contains(stderr.String(), "secret") {
			t.Errorf("stderr shows the password:\n%s", stderr.String())
		}
	}
}
