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
