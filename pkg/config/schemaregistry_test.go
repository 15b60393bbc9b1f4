package config

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const avroYAML = shopYAML + `format:
  key: avro
  value: avro
  schema_registry:
    type: confluent
    url: https://registry.example.com:8081
    username: tributary
    password: ${env:SECRET}
`

func TestSchemaRegistryParse(t *testing.T) {
	cfg := mustParse(t, avroYAML)
	f := cfg.Format
	if !f.AvroKey() || !f.AvroValue() || f.SchemaRegistry.Type != "confluent" ||
		f.SchemaRegistry.URL != "https://registry.example.com:8081" || f.SchemaRegistry.Password != canary {
		t.Fatalf("parsed %+v %+v", f, f.SchemaRegistry)
	}
	// The password never shows: not in the redacted copy, and scrubbed
	// from text; the original keeps it.
	shown, _ := json.Marshal(cfg.Redacted())
	if strings.Contains(string(shown), canary) || !strings.Contains(string(shown), `"password":"REDACTED"`) {
		t.Fatalf("redacted config shows the registry password: %s", shown)
	}
	if cfg.Format.SchemaRegistry.Password != canary {
		t.Fatal("Redacted changed the original")
	}
	if got := cfg.Scrubber().String("registry said: bad password " + canary); strings.Contains(got, canary) {
		t.Fatalf("scrubber kept the password: %s", got)
	}
	glue := mustParse(t, strings.Replace(avroYAML, `    type: confluent
    url: https://registry.example.com:8081
    username: tributary
    password: ${env:SECRET}
`, `    type: glue
    registry_name: shop-schemas
    region: eu-west-1
    role_arn: arn:aws:iam::123456789012:role/glue-writer
`, 1))
	if r := glue.Format.SchemaRegistry; r.Type != "glue" || r.RegistryName != "shop-schemas" || r.Region != "eu-west-1" || r.RoleARN == "" {
		t.Fatalf("glue parsed %+v", r)
	}
}

// TestSchemaRegistryRules: every bad key of format.key, format.value and
// format.schema_registry is reported at once, naming the field.
func TestSchemaRegistryRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace []string
		want    []string
	}{
		{"bad encodings", []string{"key: avro", "key: protobuf", "value: avro", "value: xml"}, []string{"format.key", "format.value", "format.schema_registry"}},
		{"avro without a registry", []string{"  schema_registry:\n    type: confluent\n    url: https://registry.example.com:8081\n    username: tributary\n    password: ${env:SECRET}\n", ""}, []string{"format.schema_registry"}},
		{"avro without schemas", []string{"  key: avro\n", "  key: avro\n  schemas: false\n"}, []string{"format.schemas"}},
		{"confluent rules", []string{"url: https://registry.example.com:8081", "url: ftp://x", "username: tributary\n", "registry_name: x\n"},
			[]string{"format.schema_registry.url", "format.schema_registry.password", "format.schema_registry.registry_name"}},
		{"url with credentials", []string{"https://registry", "https://u:p@registry"}, []string{"format.schema_registry.url"}},
		{"type missing", []string{"type: confluent", "type: redpanda"}, []string{"format.schema_registry.type"}},
		{"glue rules", []string{"type: confluent", "type: glue", "    url: https://registry.example.com:8081\n", "    region: moon\n    role_arn: nope\n    compatibility: SOMETIMES\n"},
			[]string{"format.schema_registry.registry_name", "format.schema_registry.region", "format.schema_registry.role_arn", "format.schema_registry.compatibility",
				"format.schema_registry.username", "format.schema_registry.password"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.NewReplacer(tc.replace...).Replace(avroYAML)
			_, err := parse([]byte(doc), testEnv)
			got := fields(t, err)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("problems %v lack %s\n%v", got, w, err)
				}
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("a problem shows the password: %v", err)
			}
		})
	}
	// JSON, the default, needs no registry; a registry without avro is a
	// mistake.
	doc := strings.NewReplacer("key: avro", "key: json", "value: avro", "value: json").Replace(avroYAML)
	_, err := parse([]byte(doc), testEnv)
	if got := fields(t, err); !slices.Equal(got, []string{"format.schema_registry"}) {
		t.Errorf("registry with json: %v", err)
	}
}
