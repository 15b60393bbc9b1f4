package capture

import (
	"context"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
)

// TestDriversAnswerTheCommands: every driver built in answers what the
// commands ask (test-connection, tables, status, drop).
func TestDriversAnswerTheCommands(t *testing.T) {
	urls := map[string]string{config.SourcePostgres: "postgres://u@127.0.0.1:5432/db", config.SourceMySQL: "mysql://u@127.0.0.1:3306/db", config.SourceMongoDB: "mongodb://u@127.0.0.1:27017/db"}
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
			if typ == config.SourceMongoDB && what == "lagger" {
				continue // a change stream has no byte offset to measure lag in
			}
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

// TestKindsDeclareTheirRules: each driver built in registers one Kind
// with every hook the configuration, the commands and the functions ask
// of it, and mariadb reads as mysql.
func TestKindsDeclareTheirRules(t *testing.T) {
	if got := Types(); len(got) != 3 || got[0] != "mongodb" || got[1] != "mysql" || got[2] != "postgres" {
		t.Fatalf("types %v", got)
	}
	for _, typ := range Types() {
		k, ok := KindOf(typ)
		if !ok || k.Type != typ {
			t.Fatalf("%s: kind %+v", typ, k)
		}
		if k.Defaults == nil || k.ValidateURL == nil || k.Validate == nil || k.Settings == nil || k.Database == "" || k.URLTLS == nil || k.CheckTLS == nil || k.Endpoint == nil || k.Summary == nil {
			t.Errorf("%s: a hook is missing: %+v", typ, k)
		}
	}
	cfg, err := config.Parse([]byte("name: shop\nsource: {type: MariaDB, url: 'mysql://u@db/shop'}\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: shop}\n"))
	if err != nil || cfg.Source.Type != "mysql" || config.SettingsOf[mysql.Settings](cfg.Source).ServerID == 0 {
		t.Fatalf("mariadb: %+v, %v", cfg, err)
	}
}
