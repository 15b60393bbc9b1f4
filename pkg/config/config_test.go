package config

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// canary is a planted secret: no error may ever contain it. It holds
// characters that break URLs so it reaches the error paths.
const canary = "hunter2%zz@CANARY7Q:x/y"

// shopYAML is the least a configuration holds, up to the destination's
// topic prefix: the rules tests add their section after it.
const shopYAML = `
name: shop
source:
  type: postgres
  url: postgres://u@db/shop
destination:
  bootstrap_servers: 127.0.0.1:9092
  topic_prefix: shop
`

const validYAML = `
name: shop-eu
source:
  type: postgres
  url: postgres://tributary:${env:TEST_PGPASSWORD}@db.internal:5432/shop?sslmode=verify-full
  tables: [public.orders, public.customers]
destination:
  bootstrap_servers: b-1.kafka.example.com:9096, b-2.kafka.example.com:9096
  topic_prefix: shop
  authentication: SCRAM-SHA-512
  username: tributary
  password: ${env:TEST_KAFKA_PASSWORD}
webhooks:
  row_skipped_url: https://hooks.example.com/tributary
  signing_secret: whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3
`

func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

var testEnv = env(map[string]string{
	"TEST_PGPASSWORD":     "pgCANARY7Q", // URL-safe: env values are not escaped
	"TEST_KAFKA_PASSWORD": "kafka-" + canary,
	"SECRET":              canary,
})

// wantProblems fails unless doc's problems name each of want's fields
// and their text holds each of rules.
func wantProblems(t *testing.T, doc string, want, rules []string) {
	t.Helper()
	_, err := parse([]byte(doc), testEnv)
	got := fields(t, err)
	for _, w := range want {
		if !contains(got, w) {
			t.Errorf("no problem for %s; got %v\n%v", w, got, err)
		}
	}
	for _, rule := range rules {
		if !strings.Contains(err.Error(), rule) {
			t.Errorf("no %q in\n%v", rule, err)
		}
	}
}

// fields returns the field of every problem in err, failing unless err is
// an *Errors.
func fields(t *testing.T, err error) []string {
	t.Helper()
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v (%T) is not *Errors", err, err)
	}
	var out []string
	for _, p := range errs.Problems {
		out = append(out, p.Field)
	}
	return out
}

func noCanary(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "CANARY7Q") {
		t.Fatalf("error leaks a secret:\n%v", err)
	}
}

func mustParse(t *testing.T, doc string) *Config {
	t.Helper()
	cfg, err := parse([]byte(doc), testEnv)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return cfg
}

func TestParseValid(t *testing.T) {
	cfg := mustParse(t, validYAML)
	want := Config{
		Name: "shop-eu",
		Source: Source{
			Type:     "postgres",
			URL:      "postgres://tributary:pgCANARY7Q@db.internal:5432/shop?sslmode=verify-full",
			Tables:   []string{"public.orders", "public.customers"},
			Backfill: cfg.Source.Backfill,
			Settings: cfg.Source.Settings,
		},
		Destination: Destination{
			BootstrapServers:   "b-1.kafka.example.com:9096, b-2.kafka.example.com:9096",
			TopicPrefix:        "shop",
			Authentication:     "SCRAM-SHA-512",
			Username:           "tributary",
			Password:           "kafka-" + canary,
			MessageCompression: "none",
			MaxMessageBytes:    1048576,
			DeleteMode:         "record",
		},
		Checkpoint:   Checkpoint{Store: "file", Path: ".tributary", Table: "tributary-checkpoints"},
		Webhooks:     Webhooks{RowSkippedURL: "https://hooks.example.com/tributary", SigningSecret: "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3"},
		Delivery:     DeliveryAtLeastOnce,
		Transactions: Transactions{MaxRecords: DefaultTransactionMaxRecords, MaxInterval: DefaultTransactionMaxInterval},
	}
	want.positions = cfg.positions // where keys are is tested by TestProblemsCarryLineAndColumn
	want.references = cfg.references
	if !reflect.DeepEqual(*cfg, want) {
		t.Fatalf("got  %+v\nwant %+v", *cfg, want)
	}
	if setting(cfg, "slot") != "tributary_shop_eu" || setting(cfg, "publication") != "tributary_shop_eu" {
		t.Fatalf("settings %+v", cfg.Source.Settings)
	}
	if !cfg.Source.BackfillEnabled() {
		t.Error("backfill should default to true")
	}
}

func TestDefaults(t *testing.T) {
	cfg := mustParse(t, `
name: a
source: {type: postgres, url: "postgres://h/db", backfill: false}
destination: {bootstrap_servers: "k:9092", topic_prefix: a}
`)
	d := cfg.Destination
	for _, c := range []struct{ got, want any }{
		{d.Authentication, "NONE"},
		{d.MessageCompression, "none"},
		{d.MaxMessageBytes, 1048576},
		{d.DeleteMode, "record"},
		{cfg.Checkpoint.Store, "file"},
		{cfg.Checkpoint.Path, ".tributary"},
		{cfg.Checkpoint.Table, "tributary-checkpoints"},
		{setting(cfg, "slot"), "tributary_a"},
		{setting(cfg, "publication"), "tributary_a"},
		{cfg.Source.BackfillEnabled(), false},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}

	// Slot and publication defaults are Postgres-only; explicit values stay.
	cfg = mustParse(t, `
name: b
source: {type: mysql, url: "mysql://h/db"}
destination: {bootstrap_servers: "k:9092", topic_prefix: b}
`)
	if setting(cfg, "slot") != nil || setting(cfg, "publication") != nil {
		t.Errorf("mysql got slot %q publication %q", setting(cfg, "slot"), setting(cfg, "publication"))
	}
	cfg = mustParse(t, `
name: c
source: {type: postgres, url: "postgres://h/db", slot: s1, publication: p1}
destination: {bootstrap_servers: "k:9092", topic_prefix: c, max_message_bytes: 2048, delete_mode: tombstone}
checkpoint: {store: dynamodb, table: my-table}
`)
	if setting(cfg, "slot") != "s1" || setting(cfg, "publication") != "p1" || cfg.Destination.MaxMessageBytes != 2048 ||
		cfg.Destination.DeleteMode != "tombstone" || cfg.Checkpoint.Table != "my-table" {
		t.Errorf("explicit values overridden: %+v", cfg)
	}
}

func TestJSONInput(t *testing.T) {
	doc := "{\n\t\"name\": \"shop\",\n" +
		"\t\"source\": {\"type\": \"postgres\", \"url\": \"postgresql:\\/\\/h\\/db\", \"tables\": [\"public.t\\u00e9\"]},\n" +
		"\t\"destination\": {\"bootstrap_servers\": \"k:9092\", \"topic_prefix\": \"shop\", \"max_message_bytes\": 4096,\n" +
		"\t\t\"username\": \"\\ud83d\\ude00\"},\n" +
		"\t\"webhooks\": {\"row_skipped_url\": null}\n}"
	cfg := mustParse(t, doc)
	if cfg.Source.URL != "postgresql://h/db" || cfg.Source.Tables[0] != "public.té" ||
		cfg.Destination.MaxMessageBytes != 4096 || cfg.Destination.Username != "😀" {
		t.Fatalf("got %+v", cfg)
	}

	_, err := parse([]byte(`{"name": "shop", "destination": {"topic_prefx": "x"}}`), testEnv)
	if f := fields(t, err); !contains(f, "destination.topic_prefx") {
		t.Fatalf("unknown JSON key not reported by path: %v", err)
	}
}

func TestUnknownKeys(t *testing.T) {
	doc := validYAML + "extra: 1\ncheckpoint:\n  stor: file\n"
	doc = strings.Replace(doc, "topic_prefix: shop", "topic_prefx: shop", 1)
	_, err := parse([]byte(doc), testEnv)
	want := []string{
		"destination.topic_prefx: unknown key",
		"extra: unknown key",
		"checkpoint.stor: unknown key",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	// The misspelt key also leaves topic_prefix unset.
	if !contains(fields(t, err), "destination.topic_prefix") {
		t.Errorf("missing topic_prefix required in:\n%v", err)
	}
}

func TestDecodeProblems(t *testing.T) {
	for _, tc := range []struct {
		doc, field, message string
	}{
		{"name: [a]", "name", "must be a string"},
		{"source: {backfill: maybe}", "source.backfill", "must be true or false"},
		{"destination: {max_message_bytes: lots}", "destination.max_message_bytes", "must be a whole number"},
		{"source: {server_id: -1}", "source.server_id", "must be a whole number"},
		{"source: {tables: public.t}", "source.tables", "must be a list"},
		{"source: {tables: [public.t, [x]]}", "source.tables[1]", "must be a string"},
		{"destination: [a]", "destination", "must be a mapping"},
		{"[1, 2]", "config", "must be a mapping"},
		{"name: a\nname: b", "name", "is set more than once"},
		{"name: a\n  bad: [", "config", "not valid YAML or JSON"},
		{"name: a\n---\nname: b", "config", "holds more than one YAML document"},
		{"? [a]\n: b", "config", "keys must be plain names"},
		{"\"we:ird\": 1", `"we…"`, "unknown key"}, // an odd key by its name part only
	} {
		_, err := parse([]byte(tc.doc), testEnv)
		if err == nil {
			t.Errorf("%q: no error", tc.doc)
			continue
		}
		if !strings.Contains(err.Error(), tc.field+": "+tc.message) {
			t.Errorf("%q: want %q in:\n%v", tc.doc, tc.field+": "+tc.message, err)
		}
	}
}

func TestMergeKeys(t *testing.T) {
	cfg := mustParse(t, `
name: m
source: {type: postgres, url: "postgres://h/db"}
destination:
  <<: &common {bootstrap_servers: "k:9092", topic_prefix: base}
  topic_prefix: override
checkpoint:
  <<: [{store: file}, {path: /tmp/x}]
`)
	if cfg.Destination.BootstrapServers != "k:9092" || cfg.Destination.TopicPrefix != "override" || cfg.Checkpoint.Path != "/tmp/x" {
		t.Fatalf("merge: %+v", cfg)
	}
	_, err := parse([]byte("name: m\ndestination:\n  <<: {topic_prefx: a}\n"), testEnv)
	if !contains(fields(t, err), "destination.topic_prefx") {
		t.Fatalf("unknown merged key not reported: %v", err)
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 {name: x}\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "a%d: &a%d {<<: [*a%d, *a%d]}\n", i, i, i-1, i-1)
	}
	b.WriteString("destination: {<<: *a39}\n")
	done := make(chan error, 1)
	go func() { _, err := parse([]byte(b.String()), testEnv); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("alias bomb parsed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("alias bomb not bounded")
	}
}

func TestEnvReferences(t *testing.T) {
	cfg := mustParse(t, validYAML)
	if cfg.Destination.Password != "kafka-"+canary {
		t.Fatalf("whole-value reference: %q", cfg.Destination.Password)
	}
	if !strings.Contains(cfg.Source.URL, ":pgCANARY7Q@") {
		t.Fatalf("embedded reference: %q", cfg.Source.URL)
	}

	got, err := parse([]byte(strings.Replace(validYAML, "topic_prefix: shop",
		"topic_prefix: ${env:PREFIX}.${env:REGION}", 1)), env(map[string]string{
		"TEST_PGPASSWORD": "p", "TEST_KAFKA_PASSWORD": "k", "PREFIX": "shop", "REGION": "eu",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Destination.TopicPrefix != "shop.eu" {
		t.Fatalf("two references: %q", got.Destination.TopicPrefix)
	}

	// A resolved value is not expanded again; other ${ text is kept.
	got, err = parse([]byte(strings.Replace(validYAML, "signing_secret: whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3", "signing_secret: a${b}c${env:NESTED}", 1)),
		env(map[string]string{"TEST_PGPASSWORD": "p", "TEST_KAFKA_PASSWORD": "k", "NESTED": "${env:TEST_PGPASSWORD}"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Webhooks.SigningSecret != "a${b}c${env:TEST_PGPASSWORD}" {
		t.Fatalf("re-expanded: %q", got.Webhooks.SigningSecret)
	}

	for _, tc := range []struct{ value, field, message string }{
		{"${env:MISSING_ONE}", "destination.password", "environment variable MISSING_ONE is not set"},
		{"${env:}", "destination.password", "malformed ${env:…} reference"},
		{"${env:1BAD}", "destination.password", "malformed ${env:…} reference"},
		{"${env:OPEN", "destination.password", "unterminated ${env:…} reference"},
		{"${ssm:/tributary/shop/kafka-password}", "destination.password",
			"${ssm:/tributary/shop/kafka-password} cannot be resolved: ${ssm:…} references are read from SSM by Load (--config), not by Parse"},
		{"${ssm:bad name}", "destination.password", "malformed ${ssm:…} reference"},
	} {
		doc := strings.Replace(validYAML, "${env:TEST_KAFKA_PASSWORD}", `"`+tc.value+`"`, 1)
		_, err := parse([]byte(doc), testEnv)
		if err == nil || !strings.Contains(err.Error(), tc.field+": "+tc.message) {
			t.Errorf("%s: want %q in:\n%v", tc.value, tc.field+": "+tc.message, err)
		}
		// The unresolved field is reported once, not again by the rules.
		if n := strings.Count(err.Error(), tc.field+":"); n != 1 {
			t.Errorf("%s: %s reported %d times:\n%v", tc.value, tc.field, n, err)
		}
	}

	// Lists are resolved element by element.
	doc := strings.Replace(validYAML, "[public.orders, public.customers]", `[public.orders, "${env:NOPE}"]`, 1)
	_, err = parse([]byte(doc), testEnv)
	if !contains(fields(t, err), "source.tables[1]") {
		t.Errorf("list element reference: %v", err)
	}
}

func TestParseUsesEnvironment(t *testing.T) {
	t.Setenv("TEST_PGPASSWORD", "p")
	t.Setenv("TEST_KAFKA_PASSWORD", "from-env")
	cfg, err := Parse([]byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Destination.Password != "from-env" {
		t.Fatalf("password %q", cfg.Destination.Password)
	}
}

// validConfig is a parsed valid config for the rule table to break.
func validConfig(t *testing.T) Config {
	return *mustParse(t, validYAML)
}

func TestValidateRules(t *testing.T) {
	ca, cert, key, otherKey := testPKI(t)
	for _, tc := range []struct {
		name   string
		change func(c *Config)
		field  string
		rule   string // substring of the message
	}{
		{"name required", func(c *Config) { c.Name = "" }, "name", "required"},
		{"name chars", func(c *Config) { c.Name = "Shop" }, "name", `character 'S' is not allowed`},
		{"name pipelines", func(c *Config) { c.Name = "pipelines" }, "name", "pipelines is reserved"},
		{"source type required", func(c *Config) { c.Source.Type = "" }, "source.type", "required"},
		{"mongodb unwrap add table", func(c *Config) {
			c.Source.Type, c.Source.URL, c.Format.Unwrap, c.Format.AddFields = "mongodb", "mongodb://h/db", true, []string{"op", "table"}
		}, "format.add_fields", `entry 2, "table", has no field to add for mongodb sources`},
		{"mongodb url", func(c *Config) { c.Source.Type, c.Source.URL = "mongodb", "mongodb://h/db?tlsInsecure=true" }, "source.url", "tlsinsecure=true turns TLS verification off"},
		{"mongodb srv url", func(c *Config) { c.Source.Type, c.Source.URL = "mongodb", "mongodb+srv://h:27017/db" }, "source.url", "names one host name, without a port"},
		{"source type", func(c *Config) { c.Source.Type = "oracle" }, "source.type", "must be postgres, mysql or mongodb"},
		{"source type not built", func(c *Config) { c.Source.Type = "sqlserver"; c.Source.URL = "sqlserver://h/db" }, "source.type", "sqlserver is not built in this release; use postgres, mysql or mongodb"},
		{"whsec not base64", func(c *Config) { c.Webhooks.SigningSecret = "whsec_%%%" }, "webhooks.signing_secret", "a whsec_ secret must be followed by base64"},
		{"row_skipped_url unsigned", func(c *Config) { c.Webhooks.SigningSecret = "" }, "webhooks.signing_secret", "required with row_skipped_url"},
		{"log level", func(c *Config) { c.LogLevel = "verbose" }, "log_level", "must be debug, info, warn or error"},
		{"log format", func(c *Config) { c.LogFormat = "xml" }, "log_format", "must be text or json"},
		{"url required", func(c *Config) { c.Source.URL = "" }, "source.url", "required"},
		{"outage window unit", func(c *Config) { c.Source.OutageWindow = "5 minutes" }, "source.outage_window", "duration from 1s to 24h"},
		{"outage window zero", func(c *Config) { c.Source.OutageWindow = "0s" }, "source.outage_window", "duration from 1s to 24h"},
		{"url parse", func(c *Config) { c.Source.URL = "postgres://u:p@h:port/db" }, "source.url", "not a valid URL"},
		{"url scheme", func(c *Config) { c.Source.URL = "mysql://h/db" }, "source.url", "postgres:// or postgresql://"},
		{"url no scheme", func(c *Config) { c.Source.URL = "host=db user=x" }, "source.url", "must be a URL"},
		{"table form", func(c *Config) { c.Source.Tables = []string{"public.a", "orders"} }, "source.tables[1]", "schema.table"},
		{"table without schema", func(c *Config) { c.Source.Tables = []string{"orders"} }, "source.tables[0]", "schema.table"},
		{"table bad regexp", func(c *Config) { c.Source.Tables = []string{"public.(orders"} }, "source.tables[0]", "valid regular expression"},
		{"exclude bad regexp", func(c *Config) { c.Source.ExcludeTables = []string{"public.[x"} }, "source.exclude_tables[0]", "missing closing ]"},
		{"exclude column not qualified", func(c *Config) { c.Source.ExcludeColumns = []string{"email"} }, "source.exclude_columns[0]", "schema.table.column"},
		{"mask without method", func(c *Config) { c.Source.MaskColumns = []MaskColumns{{Columns: []string{"public.c.email"}}} }, "source.mask_columns[0]", "neither how to mask"},
		{"mask hash unknown", func(c *Config) {
			c.Source.MaskColumns = []MaskColumns{{Columns: []string{"public.c.email"}, Hash: "SHA256", Salt: "s"}}
		}, "source.mask_columns[0].hash", "SHA-256"},
		{"mask hash without salt", func(c *Config) {
			c.Source.MaskColumns = []MaskColumns{{Columns: []string{"public.c.email"}, Hash: "SHA-256"}}
		}, "source.mask_columns[0].salt", "required"},
		{"mask both", func(c *Config) {
			c.Source.MaskColumns = []MaskColumns{{Columns: []string{"public.c.email"}, Hash: "SHA-256", Salt: "s", Chars: 3}}
		}, "source.mask_columns[0]", "choose one"},
		{"mask no columns", func(c *Config) { c.Source.MaskColumns = []MaskColumns{{Chars: 3}} }, "source.mask_columns[0].columns", "at least one"},
		{"table duplicate", func(c *Config) { c.Source.Tables = []string{"a.b", "a.b"} }, "source.tables[1]", "repeats source.tables[0]"},
		{"slot chars", func(c *Config) { setSetting(c, "slot", "Slot") }, "source.slot", `character 'S'`},
		{"slot length", func(c *Config) { setSetting(c, "slot", strings.Repeat("s", 64)) }, "source.slot", "longer than 63"},
		{"publication chars", func(c *Config) { setSetting(c, "publication", "pub-1") }, "source.publication", `character '-'`},
		{"bootstrap required", func(c *Config) { c.Destination.BootstrapServers = " " }, "destination.bootstrap_servers", "required"},
		{"bootstrap no port", func(c *Config) { c.Destination.BootstrapServers = "k:9092,broker" }, "destination.bootstrap_servers", "entry 2 of 2 must be host:port"},
		{"bootstrap port", func(c *Config) { c.Destination.BootstrapServers = "k:x" }, "destination.bootstrap_servers", "numeric port"},
		{"bootstrap port range", func(c *Config) { c.Destination.BootstrapServers = "k:70000" }, "destination.bootstrap_servers", "numeric port"},
		{"bootstrap empty entry", func(c *Config) { c.Destination.BootstrapServers = "k:1," }, "destination.bootstrap_servers", "entry 2 of 2 is empty"},
		{"bootstrap no host", func(c *Config) { c.Destination.BootstrapServers = ":9092" }, "destination.bootstrap_servers", "no host"},
		{"prefix required", func(c *Config) { c.Destination.TopicPrefix = "" }, "destination.topic_prefix", "required"},
		{"prefix char", func(c *Config) { c.Destination.TopicPrefix = "shop/eu" }, "destination.topic_prefix", `character '/' is not allowed`},
		{"authentication", func(c *Config) { c.Destination.Authentication = "scram" }, "destination.authentication", "must be NONE, PLAIN"},
		{"plain username", func(c *Config) { c.Destination.Authentication = "PLAIN"; c.Destination.Username = "" }, "destination.username", "required with authentication PLAIN"},
		{"scram password", func(c *Config) { c.Destination.Authentication = "SCRAM-SHA-256"; c.Destination.Password = "" }, "destination.password", "required with authentication SCRAM-SHA-256"},
		{"iam region", func(c *Config) { c.Destination.Authentication = "AWS_MSK_IAM" }, "destination.aws_region", "required with authentication AWS_MSK_IAM"},
		{"iam tls", func(c *Config) {
			c.Destination.Authentication = "AWS_MSK_IAM"
			c.Destination.AWSRegion = "eu-west-1"
			c.Destination.DisableTLS = true
		}, "destination.disable_tls", "not allowed with authentication AWS_MSK_IAM"},
		{"role arn", func(c *Config) { c.Destination.AWSRoleARN = "role/x" }, "destination.aws_role_arn", "IAM role ARN"},
		{"external id without role", func(c *Config) { c.Destination.ExternalID = "ext" }, "destination.external_id", "needs aws_role_arn"},
		{"cert without key", func(c *Config) { c.Destination.ClientCertificate = cert }, "destination.client_key", "required with client_certificate"},
		{"key without cert", func(c *Config) { c.Destination.ClientKey = key }, "destination.client_certificate", "required with client_key"},
		{"key mismatch", func(c *Config) { c.Destination.ClientCertificate = cert; c.Destination.ClientKey = otherKey }, "destination.client_key", "does not match"},
		{"ca not pem", func(c *Config) { c.Destination.CACertificate = "/etc/ssl/ca.pem" }, "destination.ca_certificate", "must be PEM text"},
		{"ca bad pem", func(c *Config) {
			c.Destination.CACertificate = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
		}, "destination.ca_certificate", "does not parse"},
		{"cert is a key", func(c *Config) { c.Destination.ClientCertificate = key; c.Destination.ClientKey = key }, "destination.client_certificate", "no PEM CERTIFICATE block"},
		{"key is a cert", func(c *Config) { c.Destination.ClientCertificate = cert; c.Destination.ClientKey = ca }, "destination.client_key", "no PEM PRIVATE KEY block"},
		{"tls settings without tls", func(c *Config) { c.Destination.DisableTLS = true; c.Destination.CACertificate = ca }, "destination.ca_certificate", "disable_tls is true"},
		{"compression", func(c *Config) { c.Destination.MessageCompression = "lz4" }, "destination.message_compression", "none or gzip"},
		{"max bytes negative", func(c *Config) { c.Destination.MaxMessageBytes = -1 }, "destination.max_message_bytes", "from 1 to"},
		{"max bytes too big", func(c *Config) { c.Destination.MaxMessageBytes = 100<<20 + 1 }, "destination.max_message_bytes", "100 MiB"},
		{"delete mode", func(c *Config) { c.Destination.DeleteMode = "drop" }, "destination.delete_mode", "record, tombstone or record_and_tombstone"},
		{"ssh tunnel", func(c *Config) { c.Destination.SSHTunnel = map[string]any{"host": "bastion"} }, "destination.ssh_tunnel", "only direct connections"},
		{"private link", func(c *Config) { c.Destination.PrivateLink = true }, "destination.private_link", "only direct connections"},
		{"checkpoint store", func(c *Config) { c.Checkpoint.Store = "s3" }, "checkpoint.store", "file or dynamodb"},
		{"checkpoint path", func(c *Config) { c.Checkpoint.Path = "" }, "checkpoint.path", "required"},
		{"dynamodb table", func(c *Config) { c.Checkpoint.Store = "dynamodb"; c.Checkpoint.Table = "a b" }, "checkpoint.table", "DynamoDB table name"},
		{"webhook scheme", func(c *Config) { c.Webhooks.RowSkippedURL = "ftp://x/y" }, "webhooks.row_skipped_url", "http:// or https://"},
		{"webhook parse", func(c *Config) { c.Webhooks.RowSkippedURL = "https://x:y:z@%zz" }, "webhooks.row_skipped_url", "not a valid URL"},
		{"queue url", func(c *Config) { c.Webhooks.QueueURL = "sqs" }, "webhooks.queue_url", "http:// or https://"},
		{"signing secret of one byte", func(c *Config) { c.Webhooks.SigningSecret = "x" }, "webhooks.signing_secret", "shorter than 24 bytes"},
		{"signing secret of 23 bytes", func(c *Config) { c.Webhooks.SigningSecret = strings.Repeat("k", 23) }, "webhooks.signing_secret", "shorter than 24 bytes"},
		// 32 characters, but a whsec_ key of 23 bytes once decoded.
		{"whsec key of 23 bytes", func(c *Config) { c.Webhooks.SigningSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY=" }, "webhooks.signing_secret", "shorter than 24 bytes"},
		{"http webhook", func(c *Config) { c.Webhooks.RowSkippedURL = "http://hooks.example.com/tributary" }, "webhooks.row_skipped_url", "must be https://"},
		{"http webhook to a private address", func(c *Config) { c.Webhooks.RowSkippedURL = "http://10.0.0.5:8080/x" }, "webhooks.row_skipped_url", "must be https://"},
		{"http webhook to a name like localhost", func(c *Config) { c.Webhooks.RowSkippedURL = "http://localhost.example.com/x" }, "webhooks.row_skipped_url", "must be https://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_REGION", "")
			t.Setenv("AWS_DEFAULT_REGION", "")
			c := validConfig(t)
			tc.change(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("valid")
			}
			var errs *Errors
			if !errors.As(err, &errs) || len(errs.Problems) != 1 {
				t.Fatalf("want one problem, got:\n%v", err)
			}
			if p := errs.Problems[0]; p.Field != tc.field || !strings.Contains(p.Message, tc.rule) {
				t.Fatalf("got %q, want field %s with %q", p, tc.field, tc.rule)
			}
			noCanary(t, err)
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	ca, cert, key, _ := testPKI(t)
	for _, tc := range []struct {
		name   string
		change func(c *Config)
	}{
		{"postgresql scheme", func(c *Config) { c.Source.URL = "postgresql://h/db" }},
		{"outage window", func(c *Config) { c.Source.OutageWindow = "90s" }},
		{"ipv6 broker", func(c *Config) { c.Destination.BootstrapServers = "[::1]:9092" }},
		{"prefix chars", func(c *Config) { c.Destination.TopicPrefix = "Shop.eu_1-a" }},
		{"iam with region", func(c *Config) {
			c.Destination.Authentication = "AWS_MSK_IAM"
			c.Destination.AWSRegion = "eu-west-1"
			c.Destination.AWSRoleARN = "arn:aws:iam::123456789012:role/tributary-writer"
			c.Destination.ExternalID = "ext-123"
		}},
		{"mutual tls", func(c *Config) {
			c.Destination.CACertificate = ca
			c.Destination.ClientCertificate = cert
			c.Destination.ClientKey = key
		}},
		{"tunnel switched off", func(c *Config) { c.Destination.SSHTunnel = false }},
		{"gzip and tombstones", func(c *Config) {
			c.Destination.MessageCompression = "gzip"
			c.Destination.DeleteMode = "record_and_tombstone"
			c.Destination.MaxMessageBytes = 100 << 20
		}},
		{"dynamodb", func(c *Config) { c.Checkpoint.Store = "dynamodb" }},
		{"http webhook on loopback", func(c *Config) { c.Webhooks.RowSkippedURL = "http://127.0.0.1:8080/hook" }},
		{"http webhook on localhost", func(c *Config) { c.Webhooks.RowSkippedURL = "http://localhost:8080/hook" }},
		{"http webhook on ipv6 loopback", func(c *Config) { c.Webhooks.RowSkippedURL = "http://[::1]:8080/hook" }},
		{"signing secret of 24 bytes", func(c *Config) { c.Webhooks.SigningSecret = strings.Repeat("k", 24) }},
		{"private receiver", func(c *Config) {
			c.Webhooks.RowSkippedURL = "https://hooks.internal/x"
			c.Webhooks.AllowPrivateNetwork = true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig(t)
			tc.change(&c)
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("iam region from environment", func(t *testing.T) {
		t.Setenv("AWS_REGION", "eu-west-1")
		c := validConfig(t)
		c.Destination.Authentication = "AWS_MSK_IAM"
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDerivedSlotTooLong(t *testing.T) {
	doc := strings.Replace(validYAML, "name: shop-eu", "name: "+strings.Repeat("n", 60), 1)
	_, err := parse([]byte(doc), testEnv)
	f := fields(t, err)
	if !reflect.DeepEqual(f, []string{"source.slot", "source.publication"}) ||
		!strings.Contains(err.Error(), "default tributary_<name> is longer than 63") {
		t.Fatalf("got:\n%v", err)
	}
}

func TestDirectConnectionsOnly(t *testing.T) {
	doc := validYAML + `
  ssh_tunnel:
    host: bastion.example.com
    private_key: ` + canary + `
  private_link: {endpoint_service: com.amazonaws.vpce.x}
`
	doc = strings.Replace(doc, "webhooks:\n  row_skipped_url: https://hooks.example.com/tributary\n  signing_secret: whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3\n", "", 1)
	doc = strings.Replace(doc, "destination:\n", "webhooks: {}\ndestination:\n", 1)
	_, err := parse([]byte(doc), testEnv)
	if !reflect.DeepEqual(fields(t, err), []string{"destination.ssh_tunnel", "destination.private_link"}) {
		t.Fatalf("got:\n%v", err)
	}
	if !strings.Contains(err.Error(), "only direct connections") || strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("not a clear rejection:\n%v", err)
	}
	noCanary(t, err)
}

func TestAllProblemsReported(t *testing.T) {
	doc := `
name: Shop
source:
  type: postgres
  url: mysql://h/db
destination:
  bootstrap_servers: broker
  topic_prefix: shop/eu
  delete_mode: drop
`
	_, err := parse([]byte(doc), testEnv)
	want := []string{"name", "source.url", "destination.bootstrap_servers", "destination.topic_prefix", "destination.delete_mode"}
	if got := fields(t, err); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v:\n%v", got, want, err)
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 5 {
		t.Fatalf("want one line per problem:\n%v", err)
	}
	// Decode problems and rule problems are reported together.
	_, err = parse([]byte(doc+"  max_message_bytes: big\nwebhooks: {row_skiped_url: x}\n"), testEnv)
	if got := fields(t, err); len(got) != 7 {
		t.Fatalf("got %v:\n%v", got, err)
	}
}

func TestErrorsNeverHoldSecrets(t *testing.T) {
	for _, doc := range []string{
		// A bad port: url.Parse's own error would quote the password.
		"source: {type: postgres, url: 'postgres://u:" + canary + "@h:port/db'}",
		"source: {type: postgres, url: 'postgres://u:${env:SECRET}@h:port/db'}",
		"source: {type: postgres, url: 'mysql://u:${env:SECRET}@h/db'}",
		"source: {type: postgres, url: '${env:SECRET}'}",
		"destination: {bootstrap_servers: '${env:SECRET}', topic_prefix: '${env:SECRET}'}",
		"destination: {client_key: '${env:SECRET}', ca_certificate: '-----BEGIN CERTIFICATE-----\n${env:SECRET}\n-----END CERTIFICATE-----'}",
		"name: '${env:SECRET}'\nsource: {tables: ['${env:SECRET}'], slot: '${env:SECRET}'}",
		"webhooks: {row_skipped_url: 'https://x/${env:SECRET}%zz', signing_secret: '${env:SECRET}'}",
		"destination: {authentication: '${env:SECRET}', aws_role_arn: '${env:SECRET}', external_id: '${env:SECRET}'}",
		"checkpoint: {store: '${env:SECRET}'}",
	} {
		_, err := parse([]byte(doc), testEnv)
		if err == nil {
			t.Fatalf("%s: no error", doc)
		}
		noCanary(t, err)
	}
}

func TestRedacted(t *testing.T) {
	c := validConfig(t)
	c.Destination.ExternalID = "ext-" + canary
	c.Destination.ClientKey = "key-" + canary
	c.Destination.SSHTunnel = map[string]any{"key": canary}
	c.Source.URL = "postgres://u:" + "pw@h:5432/db?sslmode=require&password=" + "pw2&sslpassword=pw3"
	r := c.Redacted()
	if r.Destination.Password != "REDACTED" || r.Destination.ExternalID != "REDACTED" ||
		r.Destination.ClientKey != "REDACTED" || r.Webhooks.SigningSecret != "REDACTED" || r.Destination.SSHTunnel != "REDACTED" {
		t.Fatalf("secrets kept: %+v", r)
	}
	if want := "postgres://u:REDACTED@h:5432/db?sslmode=require&password=REDACTED&sslpassword=REDACTED"; r.Source.URL != want {
		t.Fatalf("url %q, want %q", r.Source.URL, want)
	}
	if r.Destination.Username != "tributary" || r.Name != "shop-eu" || r.Destination.AWSRegion != "" {
		t.Fatalf("non-secrets changed: %+v", r)
	}
	// The copy is independent, and the original keeps its secrets.
	r.Source.Tables[0] = "x.y"
	*r.Source.Backfill = false
	if c.Source.Tables[0] != "public.orders" || !*c.Source.Backfill || c.Destination.Password != "kafka-"+canary {
		t.Fatal("Redacted changed the original")
	}
	// Empty secrets stay empty.
	if (Config{}).Redacted().Destination.Password != "" {
		t.Fatal("empty secret became REDACTED")
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      "",
		"postgres://u:p@h/db":                   "postgres://u:REDACTED@h/db",
		"postgres://u@h/db":                     "postgres://u@h/db",
		"postgres://h/db?user=u&password=p&x=1": "postgres://h/db?user=u&password=REDACTED&x=1",
		"https://h/hook?token=abc":              "https://h/hook?token=REDACTED",
		"postgres://u:" + canary + "@h:x/db":    "REDACTED",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Setenv("TEST_PGPASSWORD", "p")
	t.Setenv("TEST_KAFKA_PASSWORD", "k")
	dir := t.TempDir()
	good := filepath.Join(dir, "shop.yaml")
	if err := os.WriteFile(good, []byte(validYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(context.Background(), good)
	if err != nil || cfg.Name != "shop-eu" {
		t.Fatalf("Load: %v %v", cfg, err)
	}

	missing := filepath.Join(dir, "nope.yaml")
	if _, err := Load(context.Background(), missing); err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: Bad\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), bad)
	var errs *Errors
	if !errors.As(err, &errs) || !strings.Contains(err.Error(), bad) || !contains(fields(t, err), "name") {
		t.Fatalf("bad file: %v", err)
	}

	if _, err := Load(context.Background(), "ssm:bad name"); err == nil || !strings.Contains(err.Error(), "malformed SSM parameter name") {
		t.Fatalf("ssm: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, good); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestErrorsFormat(t *testing.T) {
	e := &Errors{Problems: []Problem{{Field: "name", Message: "required"}, {Field: "destination.topic_prefix", Message: "required"}}}
	if got := e.Error(); got != "name: required\ndestination.topic_prefix: required" {
		t.Fatalf("%q", got)
	}
	if err := (&Errors{}).errOrNil(); err != nil {
		t.Fatal("empty Errors is not nil")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// testPKI returns a CA certificate, a client certificate and its key, and
// an unrelated key, all PEM.
func testPKI(t *testing.T) (ca, cert, key, otherKey string) {
	t.Helper()
	newKey := func() (*ecdsa.PrivateKey, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return k, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	}
	selfSigned := func(k *ecdsa.PrivateKey, name string, isCA bool) string {
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: name},
			NotBefore:             time.Now().Add(-time.Hour),
			NotAfter:              time.Now().Add(time.Hour),
			IsCA:                  isCA,
			BasicConstraintsValid: true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	caKey, _ := newKey()
	clientKey, key := newKey()
	_, otherKey = newKey()
	return selfSigned(caKey, "test-ca", true), selfSigned(clientKey, "client", false), key, otherKey
}

func TestProblemsCarryLineAndColumn(t *testing.T) {
	doc := "name: shop\nsource:\n  type: postgres\n  url: postgres://h/db\ndestination:\n  bootstrap_servers: 127.0.0.1:9092\n  topic-prefix: shop\n  delete_mode: sometimes\n"
	_, err := parse([]byte(doc), testEnv)
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v, want *Errors", err)
	}
	want := map[string]string{
		"destination.topic-prefix": "unknown key; did you mean `topic_prefix`? (line 7, column 3)",
		"destination.delete_mode":  "must be record, tombstone or record_and_tombstone (line 8, column 3)",
	}
	for _, p := range errs.Problems {
		if w, ok := want[p.Field]; ok {
			if got := strings.TrimPrefix(p.String(), p.Field+": "); got != w {
				t.Errorf("%s: %q, want %q", p.Field, got, w)
			}
			delete(want, p.Field)
		}
	}
	for f := range want {
		t.Errorf("no problem for %s in:\n%v", f, err)
	}
}

func TestDidYouMean(t *testing.T) {
	for key, want := range map[string]string{
		"bootstrap_server":  "; did you mean `bootstrap_servers`?",
		"Bootstrap-Servers": "; did you mean `bootstrap_servers`?",
		"colour":            "",
		"slot":              "; `slot` belongs under source",
	} {
		if got := didYouMean(reflect.TypeOf(Destination{}), key); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}

func TestWarnings(t *testing.T) {
	doc := strings.Replace(validYAML, "authentication: SCRAM-SHA-512", "authentication: NONE", 1) +
		"checkpoint:\n  table: t-x\n  create_table: true\n"
	cfg := mustParse(t, doc)
	var got []string
	for _, w := range cfg.Warnings() {
		got = append(got, w.Field)
	}
	want := []string{"destination.username", "destination.password", "checkpoint.table", "checkpoint.create_table"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings on %v, want %v", got, want)
	}
	if w := mustParse(t, validYAML).Warnings(); len(w) != 0 {
		t.Errorf("a config with no idle settings warns: %v", w)
	}
}
