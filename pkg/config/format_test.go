package config

import (
	"slices"
	"strings"
	"testing"
)

const formatYAML = shopYAML + `format:
  schemas: false
  unwrap: true
  delete_handling: rewrite
  add_fields: [op, table, source.ts_ms]
  decimal_handling: string
  time_precision: connect
  binary_handling: hex
`

func TestFormatParse(t *testing.T) {
	f := mustParse(t, formatYAML).Format.Effective(SourcePostgres)
	if f.SchemasEnabled() || !f.Unwrap || f.DeleteHandling != "rewrite" || !slices.Equal(f.AddFields, []string{"op", "table", "source.ts_ms"}) ||
		f.DecimalHandling != "string" || f.TimePrecision != "connect" || f.BinaryHandling != "hex" {
		t.Fatalf("parsed %+v", f)
	}
}

// TestFormatDefaults: without a format section, Debezium's defaults, the
// time precision the source's connector defaults to.
func TestFormatDefaults(t *testing.T) {
	cfg := validConfig(t)
	f := cfg.Format.Effective(cfg.Source.Type)
	if !f.SchemasEnabled() || f.Unwrap || f.DeleteHandling != "" || f.DecimalHandling != "precise" || f.TimePrecision != "adaptive" || f.BinaryHandling != "bytes" {
		t.Fatalf("defaults %+v", f)
	}
	if got := (Format{Unwrap: true}).Effective(SourceMySQL); got.TimePrecision != "adaptive_time_microseconds" || got.DeleteHandling != "tombstone" {
		t.Fatalf("mysql with unwrap: %+v", got)
	}
}

// TestFormatRules: every bad format key is reported at once, naming the
// key and the values it takes.
func TestFormatRules(t *testing.T) {
	doc := strings.NewReplacer(
		"  unwrap: true\n", "",
		"[op, table, source.ts_ms]", "[op, lsn, op]",
		"decimal_handling: string", "decimal_handling: float",
		"time_precision: connect", "time_precision: micro",
		"binary_handling: hex", "binary_handling: base32",
	).Replace(formatYAML)
	wantProblems(t, doc, []string{"format.delete_handling", "format.add_fields", "format.decimal_handling", "format.time_precision", "format.binary_handling"}, []string{
		"applies only with format.unwrap: true",
		`entry 2, "lsn", must be op, table or source.ts_ms`,
		`entry 3, "op", is listed twice`,
		"must be precise, double or string",
		"must be adaptive, adaptive_time_microseconds or connect",
		"must be bytes, base64 or hex",
	})
}

func TestFormatRulesDebeziumNames(t *testing.T) {
	// Debezium 2's delete.handling.mode=none has a new name.
	_, err := parse([]byte(strings.Replace(formatYAML, "delete_handling: rewrite", "delete_handling: none", 1)), testEnv)
	if got := fields(t, err); !slices.Contains(got, "format.delete_handling") || !strings.Contains(err.Error(), "Debezium 3 calls it tombstone") {
		t.Fatalf("delete_handling none: %v", err)
	}
	// The binlog connectors have no adaptive mode.
	doc := strings.NewReplacer("type: postgres", "type: mysql", "postgres://u@db/shop", "mysql://u@db/shop", "time_precision: connect", "time_precision: adaptive").Replace(formatYAML)
	_, err = parse([]byte(doc), testEnv)
	if got := fields(t, err); !slices.Contains(got, "format.time_precision") || !strings.Contains(err.Error(), "adaptive is not a mode of Debezium's MySQL and MariaDB connectors; must be adaptive_time_microseconds or connect") {
		t.Fatalf("mysql adaptive: %v", err)
	}
}

// TestFormatUnwrapTombstoneMode: delete_mode tombstone with unwrap would
// publish nothing for a delete; it is refused with the settings that do
// what it asks.
func TestFormatUnwrapTombstoneMode(t *testing.T) {
	doc := strings.Replace(formatYAML, "  topic_prefix: shop\n", "  topic_prefix: shop\n  delete_mode: tombstone\n", 1)
	_, err := parse([]byte(doc), testEnv)
	if got := fields(t, err); !slices.Contains(got, "destination.delete_mode") || !strings.Contains(err.Error(), "format.delete_handling: delete-to-tombstone") {
		t.Fatalf("delete_mode tombstone with unwrap: %v", err)
	}
}

// format.provide_transaction_metadata: off by default, read as Debezium
// names it, and taken with Avro too (the transaction topic's records are
// recoded as the rows are).
func TestFormatTransactionMetadata(t *testing.T) {
	if validConfig(t).Format.ProvideTransactionMetadata {
		t.Fatal("on by default")
	}
	doc := strings.Replace(formatYAML, "format:\n", "format:\n  provide_transaction_metadata: true\n", 1)
	if !mustParse(t, doc).Format.ProvideTransactionMetadata {
		t.Fatal("provide_transaction_metadata: true not read")
	}
	doc = strings.Replace(doc, "format:\n", "format:\n  value: avro\n  schema_registry: {type: confluent, url: 'http://127.0.0.1:8080'}\n", 1)
	doc = strings.Replace(doc, "  schemas: false\n", "", 1) // Avro is written with its schema
	if c, err := parse([]byte(doc), testEnv); err != nil || !c.Format.ProvideTransactionMetadata || !c.Format.AvroValue() {
		t.Errorf("with avro: %v", err)
	}
}
