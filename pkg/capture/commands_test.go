package capture

import (
	"context"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// TestDriversAnswerTheCommands: every driver built in answers what the
// commands ask (test-connection, tables, status, drop).
func TestDriversAnswerTheCommands(t *testing.T) {
	urls := map[string]string{config.SourcePostgres: "postgres://u@127.0.0.1:5432/db", config.SourceMySQL: "mysql://u@127.0.0.1:3306/db"}
	for _, typ := range Types() {
		c, err := New(context.Background(), source.Options{Pipeline: "commands", Config: config.Source{Type: typ, URL: urls[typ]}})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		for what, ask := range map[string]func() error{
			"checker":   func() error { _, err := c.Checker(); return err },
			"describer": func() error { _, err := c.Describer(); return err },
			"lister":    func() error { _, err := c.Lister(); return err },
			"lagger":    func() error { _, err := c.Lagger(); return err },
			"dropper":   func() error { _, err := c.Dropper(); return err },
		} {
			if err := ask(); err != nil {
				t.Errorf("%s %s: %v", typ, what, err)
			}
		}
		c.Close()
	}
}

// TestMissingCapabilityNamesTheSourceType: a driver without a command's
// capability answers an error naming its source type and the command.
func TestMissingCapabilityNamesTheSourceType(t *testing.T) {
	type bare struct{ Database } // the loop's methods only
	c := &Capture{db: bare{}, opts: source.Options{Config: config.Source{Type: "oracle"}}}
	_, err := c.Dropper()
	if err == nil || err.Error() != "source type oracle does not support drop" {
		t.Fatalf("Dropper: %v", err)
	}
	if _, err := c.Lister(); err == nil {
		t.Fatal("Lister of a driver without Tables")
	}
}
