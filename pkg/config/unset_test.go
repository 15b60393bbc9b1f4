package config

import (
	"strings"
	"testing"
)

// TestUnsetVariableNotJudged: for a command that accepts unset variables
// (status, backfill, validate), a field whose variable is unset is not
// judged by the rules as "" (a hash mask's salt is required): it is
// reported to the command once, and the document loads. Without that
// acceptance it is one problem naming the variable. With a placeholder
// the field holds it.
func TestUnsetVariableNotJudged(t *testing.T) {
	doc := strings.Replace(validYAML, "  tables: [public.orders, public.customers]\n",
		"  tables: [public.orders, public.customers]\n  mask_columns: [{columns: ['.*\\.email'], hash: SHA-256, salt: '${env:UNSET_SALT}'}]\n", 1)
	var unset []string
	l := lookups{env: testEnv, unset: func(field, problem string) { unset = append(unset, field+": "+problem) }}
	cfg, err := parseWith([]byte(doc), l)
	if err != nil || len(unset) != 1 || !strings.Contains(unset[0], "source.mask_columns[0].salt: environment variable UNSET_SALT is not set") {
		t.Fatalf("unset salt accepted: err %v, told %q", err, unset)
	}
	if cfg.Source.MaskColumns[0].Salt != "" {
		t.Fatalf("salt %q, want empty", cfg.Source.MaskColumns[0].Salt)
	}
	l.placeholder = "unset"
	if cfg, err = parseWith([]byte(doc), l); err != nil || cfg.Source.MaskColumns[0].Salt != "unset" {
		t.Fatalf("with a placeholder: err %v", err)
	}
	_, err = parse([]byte(doc), testEnv)
	if got := fields(t, err); len(got) != 1 || got[0] != "source.mask_columns[0].salt" || !strings.Contains(err.Error(), "UNSET_SALT is not set") {
		t.Fatalf("without acceptance: %v", err)
	}
}

// TestEnumsAnyCase: enumerated values are taken in any case, as Debezium
// takes its modes, and source.type mariadb is mysql; a value that is no
// spelling of an accepted one is still refused with the accepted values.
func TestEnumsAnyCase(t *testing.T) {
	doc := strings.Replace(validYAML, "  type: postgres\n", "  type: MariaDB\n  server_id: 7\n", 1)
	doc = strings.Replace(doc, "postgres://tributary:${env:TEST_PGPASSWORD}@db.internal:5432/shop?sslmode=verify-full", "mysql://tributary:${env:TEST_PGPASSWORD}@db.internal:3306/shop", 1)
	doc = strings.Replace(doc, "  tables: [public.orders, public.customers]\n", "  tables: [shop.orders]\n  snapshot_mode: When_Needed\n", 1)
	doc = strings.Replace(doc, "authentication: SCRAM-SHA-512", "authentication: scram-sha-512\n  delete_mode: RECORD_AND_TOMBSTONE", 1)
	doc += "format:\n  decimal_handling: STRING\n  binary_handling: Hex\n  time_precision: CONNECT\nlog_level: INFO\n"
	cfg := mustParse(t, doc)
	if cfg.Source.Type != SourceMySQL || cfg.Source.SnapshotMode != SnapshotWhenNeeded || cfg.Destination.Authentication != AuthSCRAMSHA512 ||
		cfg.Destination.DeleteMode != DeleteRecordAndTombstone || cfg.Format.DecimalHandling != DecimalString ||
		cfg.Format.BinaryHandling != BinaryHex || cfg.Format.TimePrecision != TimeConnect || cfg.LogLevel != "info" {
		t.Fatalf("canonical values: %+v %+v %+v", cfg.Source, cfg.Destination, cfg.Format)
	}
	_, err := parse([]byte(strings.Replace(doc, "decimal_handling: STRING", "decimal_handling: strings", 1)), testEnv)
	if err == nil || !strings.Contains(err.Error(), "format.decimal_handling") || !strings.Contains(err.Error(), "precise, double or string") {
		t.Fatalf("a value of no accepted spelling: %v", err)
	}
}
