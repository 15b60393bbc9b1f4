package config

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// keyPaths lists every key of the document, dotted, from the Config type.
func keyPaths(t reflect.Type, prefix string) []string {
	var out []string
	for _, key := range keysOf(t) {
		f, _ := keyField(t, key)
		path := prefix + key
		out = append(out, path)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, keyPaths(f.Type, path+".")...)
		}
	}
	return out
}

// documentedDefaults are the defaults the reference must state, from the
// constants ApplyDefaults uses.
var documentedDefaults = map[string]string{
	"destination.authentication":      DefaultAuthentication,
	"destination.message_compression": DefaultMessageCompression,
	"destination.max_message_bytes":   strconv.Itoa(DefaultMaxMessageBytes),
	"destination.delete_mode":         DefaultDeleteMode,
	"destination.publish_timeout":     DefaultPublishTimeout,
	"destination.max_in_flight":       strconv.Itoa(DefaultMaxInFlight),
	"destination.max_in_flight_bytes": strconv.Itoa(DefaultMaxInFlightBytes),
	"checkpoint.store":                DefaultCheckpointStore,
	"checkpoint.path":                 DefaultCheckpointPath,
	"checkpoint.table":                DefaultCheckpointTable,
	"delivery":                        DefaultDelivery,
	"transactions.max_records":        strconv.Itoa(DefaultTransactionMaxRecords),
	"transactions.max_interval":       DefaultTransactionMaxInterval,
	"format.delete_handling":          DefaultDeleteHandling,
	"format.decimal_handling":         DefaultDecimalHandling,
	"format.binary_handling":          DefaultBinaryHandling,
}

var referenceRow = regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\| ([^|]*) \\|")

// TestConfigurationReference keeps docs/configuration.md and the JSON
// Schema in step with the code: every key documented with its default,
// no key documented that the code does not have, the schema's keys the
// same, and the complete example valid.
func TestConfigurationReference(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range referenceRow.FindAllStringSubmatch(string(doc), -1) {
		rows[m[1]] = m[2]
	}
	var sections []string
	for _, k := range keyPaths(reflect.TypeOf(Config{}), "") {
		if f, _ := fieldAt(k); f.Type.Kind() == reflect.Struct {
			sections = append(sections, k)
			continue // a section has its own heading
		}
		def, ok := rows[k]
		if !ok {
			t.Errorf("docs/configuration.md does not document %s (add a row: | `%s` | default | rule | example |)", k, k)
			continue
		}
		if want, has := documentedDefaults[k]; has && !strings.Contains(def, "`"+want+"`") {
			t.Errorf("docs/configuration.md gives %s the default %q; the code's is %s", k, strings.TrimSpace(def), want)
		}
		delete(rows, k)
	}
	for k := range rows {
		t.Errorf("docs/configuration.md documents %s, which the configuration does not have", k)
	}
	for _, s := range sections {
		if !strings.Contains(string(doc), "## `"+s+"`") {
			t.Errorf("docs/configuration.md has no section for %s", s)
		}
	}

	// The schema: the same keys, closed objects, the code's defaults.
	raw, err := os.ReadFile("../../docs/tributary.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	compareSchema(t, schema, reflect.TypeOf(Config{}), "")

	// The complete example is a valid configuration.
	_, example, ok := strings.Cut(string(doc), "## A complete example\n\n```yaml\n")
	example, _, _ = strings.Cut(example, "```")
	if !ok {
		t.Fatal("no complete example")
	}
	if _, err := parse([]byte(example), env(map[string]string{"PGPASSWORD": "p", "KAFKA_PASSWORD": "k", "WEBHOOK_SECRET": "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3"})); err != nil {
		t.Errorf("the complete example does not parse:\n%v", err)
	}
}

func fieldAt(path string) (reflect.StructField, bool) {
	t := reflect.TypeOf(Config{})
	var f reflect.StructField
	for _, key := range strings.Split(path, ".") {
		var ok bool
		if f, ok = keyField(t, key); !ok {
			return f, false
		}
		t = f.Type
	}
	return f, true
}

func compareSchema(t *testing.T, node map[string]any, typ reflect.Type, prefix string) {
	t.Helper()
	if node["additionalProperties"] != false {
		t.Errorf("schema %s: additionalProperties must be false (unknown keys are errors)", strings.TrimSuffix(prefix, "."))
	}
	props, _ := node["properties"].(map[string]any)
	var got []string
	want := keysOf(typ)
	for k := range props {
		got = append(got, k)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("schema %s: keys %v, the code has %v", strings.TrimSuffix(prefix, "."), got, want)
	}
	for _, key := range want {
		f, _ := keyField(typ, key)
		p, _ := props[key].(map[string]any)
		if f.Type.Kind() == reflect.Struct {
			compareSchema(t, p, f.Type, prefix+key+".")
			continue
		}
		if d, has := documentedDefaults[prefix+key]; has && p != nil && p["default"] != nil && strconv.Quote(d) != mustJSON(p["default"]) && d != mustJSON(p["default"]) {
			t.Errorf("schema %s: default %v, the code's is %s", prefix+key, p["default"], d)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// keyField is the field a key of a mapping read into t decodes to: t's
// own or, in the source section, a registered kind's setting.
func keyField(t reflect.Type, key string) (reflect.StructField, bool) {
	if f, ok := fieldByKey(t, key); ok || t != sourceType {
		return f, ok
	}
	for _, sk := range settingsKeys("") {
		if sk.key == key {
			return sk.field, true
		}
	}
	return reflect.StructField{}, false
}
