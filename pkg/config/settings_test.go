package config_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

const destination = "destination: {bootstrap_servers: 'k:9092', topic_prefix: shop}\n"

func problems(t *testing.T, err error) []string {
	t.Helper()
	var errs *config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want *config.Errors, got %v", err)
	}
	var out []string
	for _, p := range errs.Problems {
		out = append(out, p.Field+": "+p.Message)
	}
	return out
}

func warnings(cfg *config.Config) []string {
	var out []string
	for _, w := range cfg.Warnings() {
		out = append(out, w.Field+": "+w.Message)
	}
	return out
}

// TestOldKeysLoadIntoDriverSettings: the keys documents have always had
// at the top of source land in their driver's own settings.
func TestOldKeysLoadIntoDriverSettings(t *testing.T) {
	cfg, err := config.Parse([]byte("name: shop\nsource: {type: postgres, url: 'postgres://h/db', slot: s1, publication: p1}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.SettingsOf[postgres.Settings](cfg.Source); got != (postgres.Settings{Slot: "s1", Publication: "p1"}) {
		t.Errorf("postgres settings %+v", got)
	}
	cfg, err = config.Parse([]byte("name: shop\nsource: {type: mariadb, url: 'mysql://h/db', server_id: 4242, signal_table: ops.sig}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.SettingsOf[mysql.Settings](cfg.Source); got != (mysql.Settings{ServerID: 4242, SignalTable: "ops.sig"}) {
		t.Errorf("mysql settings %+v", got)
	}
	// Defaults derived from the name, as before.
	cfg, err = config.Parse([]byte("name: shop-eu\nsource: {type: postgres, url: 'postgres://h/db'}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.SettingsOf[postgres.Settings](cfg.Source); got != (postgres.Settings{Slot: "tributary_shop_eu", Publication: "tributary_shop_eu"}) {
		t.Errorf("default postgres settings %+v", got)
	}
	cfg, err = config.Parse([]byte("name: shop\nsource: {type: mysql, url: 'mysql://h/db'}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.SettingsOf[mysql.Settings](cfg.Source).ServerID; got != mysql.DefaultServerID("shop") {
		t.Errorf("default server id %d", got)
	}
	// A Source built in code gets them from ApplyDefaults.
	c := config.Config{Name: "shop", Source: config.Source{Type: "postgres"}}
	c.ApplyDefaults()
	if got := config.SettingsOf[postgres.Settings](c.Source).Slot; got != "tributary_shop" {
		t.Errorf("built in code: slot %q", got)
	}
}

// TestSettingsKeyTypo: a misspelt setting is an unknown key, named, with
// the setting it resembles; every problem is listed.
func TestSettingsKeyTypo(t *testing.T) {
	_, err := config.Parse([]byte("name: shop\nsource: {type: postgres, url: 'postgres://h/db', slott: s1, publication: P}\n" + destination))
	got := problems(t, err)
	want := []string{
		"source.slott: unknown key; did you mean `slot`?",
		"source.publication: character 'P' is not allowed; use lower-case letters, digits and '_' (a Postgres identifier)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	_, err = config.Parse([]byte("name: shop\nsource: {type: mysql, url: 'mysql://h/db', serverid: 3}\n" + destination))
	if got := problems(t, err); !slices.Equal(got, []string{"source.serverid: unknown key; did you mean `server_id`?"}) {
		t.Errorf("got %q", got)
	}
}

// fakeSettings are a database's settings the configuration package has
// never heard of.
type fakeSettings struct {
	CaptureMode        string   `yaml:"capture_mode"`
	Collections        []string `yaml:"collections"`
	ExcludeCollections []string `yaml:"exclude_collections"`
	BatchSize          int      `yaml:"batch_size"`
}

// TestNewKindNeedsNoConfigChange: a source type registered with its own
// settings struct is parsed, defaulted, validated and warned about with
// nothing added to pkg/config: a new database brings its keys with it.
func TestNewKindNeedsNoConfigChange(t *testing.T) {
	config.RegisterSource(config.SourceKind{
		Type:     "fakedb",
		Database: "FakeDB",
		Settings: fakeSettings{},
		Refuses:  map[string]string{"slot": "FakeDB has no slots"},
		Defaults: func(s *config.Source, name string) {
			st := config.SettingsOf[fakeSettings](*s)
			if st.CaptureMode == "" {
				st.CaptureMode = "change_streams"
			}
			s.Settings = st
		},
		Validate: func(s *config.Source, _ string, r config.Report) {
			st := config.SettingsOf[fakeSettings](*s)
			if st.CaptureMode != "change_streams" && st.CaptureMode != "oplog" {
				r.Add("source.capture_mode", "must be change_streams or oplog, not %s", r.Quote("source.capture_mode", st.CaptureMode))
			}
			for i, c := range st.Collections {
				if field := fmt.Sprintf("source.collections[%d]", i); !strings.Contains(c, ".") {
					r.Add(field, "must be db.collection, not %s", r.Quote(field, c))
				}
			}
		},
	})
	t.Cleanup(func() { config.UnregisterSource("fakedb") })

	t.Setenv("FAKE_COLLECTION", "shop.orders")
	cfg, err := config.Parse([]byte("name: shop\nsource:\n  type: FakeDB\n  url: 'fakedb://h/db'\n  collections: [shop.users, '${env:FAKE_COLLECTION}']\n  exclude_collections: [shop.audit]\n  batch_size: 500\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	want := fakeSettings{CaptureMode: "change_streams", Collections: []string{"shop.users", "shop.orders"}, ExcludeCollections: []string{"shop.audit"}, BatchSize: 500}
	if got := config.SettingsOf[fakeSettings](cfg.Source); !slices.Equal(got.Collections, want.Collections) || got.CaptureMode != want.CaptureMode ||
		!slices.Equal(got.ExcludeCollections, want.ExcludeCollections) || got.BatchSize != want.BatchSize {
		t.Errorf("settings %+v, want %+v", got, want)
	}

	// Its rules, its typos, its types, another kind's key refused, all
	// reported at once; a value from a reference is never quoted.
	const secret = "S3cretCollection"
	t.Setenv("FAKE_SECRET", secret)
	_, err = config.Parse([]byte("name: shop\nsource:\n  type: fakedb\n  url: 'fakedb://h/db'\n  capture_mode: tail\n  collections: ['${env:FAKE_SECRET}']\n  colections: [a.b]\n  batch_size: many\n  slot: s\n" + destination))
	got := problems(t, err)
	wantProblems := []string{
		"source.colections: unknown key; did you mean `collections`?",
		"source.batch_size: must be a whole number",
		"source.slot: is for postgres sources only (FakeDB has no slots)",
		`source.capture_mode: must be change_streams or oplog, not "tail"`,
		"source.collections[0]: must be db.collection, not the value its ${…} reference resolved to (not shown)",
	}
	if !slices.Equal(got, wantProblems) {
		t.Errorf("got  %q\nwant %q", got, wantProblems)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("a secret in a setting reached the error:\n%v", err)
	}

	// Its keys on another type's source have no effect, and say so;
	// another type's keys on its source too.
	cfg, err = config.Parse([]byte("name: shop\nsource: {type: postgres, url: 'postgres://h/db', collections: [a.b], capture_mode: ''}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := warnings(cfg); !slices.Equal(got, []string{"source.collections: has no effect on a postgres source (FakeDB only)"}) {
		t.Errorf("warnings %q", got)
	}
	cfg, err = config.Parse([]byte("name: shop\nsource: {type: fakedb, url: 'fakedb://h/db', server_id: 7}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := warnings(cfg); !slices.Equal(got, []string{"source.server_id: has no effect on a fakedb source (MySQL only)"}) {
		t.Errorf("warnings %q", got)
	}
}

// TestRegisterSourceRefusesACommonKey: a kind cannot declare a setting
// every source has.
func TestRegisterSourceRefusesACommonKey(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
		config.UnregisterSource("clash")
	}()
	config.RegisterSource(config.SourceKind{Type: "clash", Settings: struct {
		Tables string `yaml:"tables"`
	}{}})
}

// TestMongoDBCaptureMode: source.capture_mode, Debezium's capture.mode, is
// the mongodb driver's own setting: it loads into its settings, and a mode
// Debezium does not have is refused naming the field.
func TestMongoDBCaptureMode(t *testing.T) {
	cfg, err := config.Parse([]byte("name: shop\nsource: {type: mongodb, url: 'mongodb://h/db', capture_mode: change_streams_update_full_with_pre_image}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.SettingsOf[mongodb.Settings](cfg.Source).CaptureMode; got != mongodb.ModeUpdateFullWithPreImage {
		t.Errorf("capture_mode = %q", got)
	}
	_, err = config.Parse([]byte("name: shop\nsource: {type: mongodb, url: 'mongodb://h/db', capture_mode: oplog}\n" + destination))
	if got := problems(t, err); len(got) != 1 || !strings.HasPrefix(got[0], "source.capture_mode: must be change_streams_update_full, ") {
		t.Errorf("problems = %q", got)
	}
}

// TestMongoDBUnwrap: format.unwrap, with the delete handling and added
// fields ExtractNewDocumentState shares with ExtractNewRecordState, is
// accepted for mongodb sources.
func TestMongoDBUnwrap(t *testing.T) {
	cfg, err := config.Parse([]byte("name: shop\nsource: {type: mongodb, url: 'mongodb://h/db'}\n" +
		"format: {unwrap: true, delete_handling: rewrite, add_fields: [op, source.ts_ms]}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if f := cfg.Format.Effective(cfg.Source.Type); !f.Unwrap || f.DeleteHandling != "rewrite" {
		t.Errorf("format = %+v", f)
	}
}

// TestMongoDBFieldSelection: source.exclude_columns is Debezium's
// field.exclude.list and source.rename_fields its field.renames for a
// mongodb source (database.collection.field paths, not regular
// expressions); a bad entry is refused naming it.
func TestMongoDBFieldSelection(t *testing.T) {
	cfg, err := config.Parse([]byte("name: shop\nsource: {type: mongodb, url: 'mongodb://h/db', exclude_columns: ['*.orders.secret'], rename_fields: ['shop.orders.name:title']}\n" + destination))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.SettingsOf[mongodb.Settings](cfg.Source).RenameFields; len(got) != 1 || got[0] != "shop.orders.name:title" {
		t.Errorf("rename_fields = %q", got)
	}
	_, err = config.Parse([]byte("name: shop\nsource: {type: mongodb, url: 'mongodb://h/db', exclude_columns: ['shop.orders'], rename_fields: ['shop.orders.name']}\n" + destination))
	got := problems(t, err)
	if len(got) != 2 || !strings.HasPrefix(got[0], `source.exclude_columns[0]: "shop.orders": must be <database>.<collection>.<field path>`) ||
		!strings.HasPrefix(got[1], `source.rename_fields[0]: "shop.orders.name": must be`) {
		t.Errorf("problems = %q", got)
	}
}

// TestMongoDBMalformedURLListedWithOthers: a URI the driver cannot parse
// (a "/" in the password) is listed with every other problem of the
// document, not only once they are fixed, and its password is not shown.
func TestMongoDBMalformedURLListedWithOthers(t *testing.T) {
	_, err := config.Parse([]byte("name: shop\nsource: {type: mongodb, url: 'mongodb://u:s3cr/et@h:27017/db', capture_mode: oplog}\n" + destination))
	got := problems(t, err)
	if len(got) != 2 || !strings.HasPrefix(got[0], "source.url: ") || !strings.Contains(got[0], "slash in password") ||
		!strings.HasPrefix(got[1], "source.capture_mode: ") {
		t.Errorf("problems = %q", got)
	}
	for _, p := range got {
		if strings.Contains(p, "s3cr") || strings.Contains(p, "et@") {
			t.Errorf("a problem shows the password: %q", p)
		}
	}
	_, err = config.Parse([]byte("name: shop\nsource: {type: mongodb, url: 'mongodb://h:27017/db?maxPoolSize=many'}\n" + destination))
	if got := problems(t, err); len(got) != 1 || !strings.HasPrefix(got[0], "source.url: ") {
		t.Errorf("problems = %q", got)
	}
}
