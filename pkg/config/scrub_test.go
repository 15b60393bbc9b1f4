package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// secretURL is what a wrong reference would put in a field: the pipeline's
// own source URL, password and all.
const secretURL = "postgres://tributary:s3cretCANARYpw0rd@db.internal:5432/shop"

// TestReferencedValuesNotQuoted: a reference put where an enumerated or
// checked value belongs (delivery: ${ssm:/…/source-url}) is refused by
// field and rule; the value it resolved to never appears in the problem.
// The same values typed in the document are still quoted.
func TestReferencedValuesNotQuoted(t *testing.T) {
	// Each case: the field, then extra source keys, destination keys and
	// top-level lines.
	cases := [][4]string{
		{"delivery", "", "", "delivery: ${env:CANARY}\n"},
		{"source.snapshot_mode", "snapshot_mode: '${env:CANARY}'", "", ""},
		{"source.signal_table", "signal_table: '${env:CANARY}'", "", ""},
		{"transactions.max_interval", "", "", "transactions: {max_interval: '${env:CANARY}'}\n"},
		{"transactions.offsets_topic", "", "", "transactions: {offsets_topic: '${env:CANARY}'}\n"},
		{"format.add_fields", "", "", "format: {unwrap: true, add_fields: ['${env:CANARY}']}\n"},
		{"format.delete_handling", "", "", "format: {unwrap: true, delete_handling: '${env:CANARY}'}\n"},
		{"format.decimal_handling", "", "", "format: {decimal_handling: '${env:CANARY}'}\n"},
		{"format.binary_handling", "", "", "format: {binary_handling: '${env:CANARY}'}\n"},
		{"format.time_precision", "", "", "format: {time_precision: '${env:CANARY}'}\n"},
		{"destination.delete_mode", "", "delete_mode: '${env:CANARY}'", ""},
		{"destination.authentication", "", "authentication: '${env:CANARY}'", ""},
		{"destination.message_compression", "", "message_compression: '${env:CANARY}'", ""},
		{"log_level", "", "", "log_level: '${env:CANARY}'\n"},
		{"checkpoint.store", "", "", "checkpoint: {store: '${env:CANARY}'}\n"},
	}
	for _, c := range cases {
		field := c[0]
		doc := "name: shop\nsource: {type: mysql, url: 'mysql://u@db:3306/shop', " + c[1] + "}\n" +
			"destination: {bootstrap_servers: 'k:9092', topic_prefix: shop, " + c[2] + "}\n" + c[3]
		for _, secret := range []string{secretURL, "x\"CANARY\\q\n<&>"} {
			_, err := parse([]byte(doc), env(map[string]string{"CANARY": secret}))
			var errs *Errors
			if err == nil && field == "source.signal_table" {
				continue // the URL reads as db.table: nothing to report
			}
			if !errors.As(err, &errs) {
				t.Fatalf("%s: %v", field, err)
			}
			if !contains(fields(t, err), field) {
				t.Errorf("%s: not named in %v", field, err)
			}
			for _, leak := range []string{"CANARY", "s3cret", fmt.Sprintf("%q", secret)} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("%s: the problem quotes the referenced value:\n%v", field, err)
				}
			}
		}
	}

	// Typed in the document, the value is quoted: that is the user's own
	// text, and the quickest way to see the typo.
	base := "name: shop\nsource: {type: postgres, url: 'postgres://u@db/shop'}\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: shop}\n"
	_, err := parse([]byte(base+"delivery: exactly-once\n"), testEnv)
	if err == nil || !strings.Contains(err.Error(), `delivery: must be at_least_once or exactly_once, not "exactly-once"`) {
		t.Errorf("literal value not quoted: %v", err)
	}
	_, err = parse([]byte(base+"delivery: ${env:CANARY}\n"), env(map[string]string{"CANARY": secretURL}))
	if err == nil || !strings.Contains(err.Error(), "delivery: must be at_least_once or exactly_once, not the value its ${…} reference resolved to (not shown)") {
		t.Errorf("referenced value: %v", err)
	}
}

// TestScrubber: the second line of defence takes every secret out, in the
// forms messages and log lines carry it (as is, %q-quoted, JSON-escaped).
func TestScrubber(t *testing.T) {
	secret := "pa\"ss<CANARY>\n\\word"
	s := NewScrubber(secret, "ab", "")
	for _, text := range []string{
		"plain " + secret,
		fmt.Sprintf("quoted %q", secret),
		`{"msg":"` + strings.NewReplacer(`"`, `\"`, `\`, `\\`, "\n", `\n`, "<", `\u003c`, ">", `\u003e`).Replace(secret) + `"}`,
	} {
		if got := s.String(text); strings.Contains(got, "CANARY") || !strings.Contains(got, RedactedValue) {
			t.Errorf("not scrubbed: %q -> %q", text, got)
		}
	}
	if got := s.String("ab stays: too short to be told from words"); got != "ab stays: too short to be told from words" {
		t.Errorf("short value replaced: %q", got)
	}
	// A long secret cut by a server that echoes it (PostgreSQL: 63 bytes)
	// goes too; 16 bytes or more of its start are enough.
	long := "hex" + strings.Repeat("0123456789abCANARY", 4)
	cut := NewScrubber(long)
	for _, text := range []string{
		`FATAL: role "` + long[:63] + `" does not exist`,
		"user '" + long[:32] + "'@'10.0.0.1' and " + long[:16],
	} {
		if got := cut.String(text); strings.Contains(got, "CANARY") || strings.Contains(got, "0123") {
			t.Errorf("a cut secret not scrubbed: %q -> %q", text, got)
		}
	}
	// Quoted twice: an error's %q, then a JSON log line.
	twice, _ := json.Marshal(fmt.Sprintf("database %q does not exist", `dq"CANARYdb`))
	if got := NewScrubber(`dq"CANARYdb`).String(string(twice)); strings.Contains(got, "CANARY") {
		t.Errorf("a secret quoted twice not scrubbed: %s -> %s", twice, got)
	}
	// Percent-decoded, as a driver decodes a URL's user name before the
	// server echoes it.
	if got := NewScrubber("pct%43ANARY%2Duser").String(`role "pctCANARY-user" does not exist`); strings.Contains(got, "CANARY") {
		t.Errorf("a decoded secret not scrubbed: %q", got)
	}
	if got := cut.String(long[:15] + " stays"); got != long[:15]+" stays" {
		t.Errorf("a start shorter than 16 bytes replaced: %q", got)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(s.Writer(&buf), nil))
	log.Error("failed", "err", errors.New("dial "+secret))
	slog.New(slog.NewTextHandler(s.Writer(&buf), nil)).Warn("x", "v", secret)
	if strings.Contains(buf.String(), "CANARY") || strings.Count(buf.String(), RedactedValue) != 2 {
		t.Errorf("log lines not scrubbed:\n%s", buf.String())
	}
}

// TestSecrets: a Config's secrets are what its references read and its
// secret fields hold, URL passwords typed in the document included.
func TestSecrets(t *testing.T) {
	cfg, err := parse([]byte(strings.Replace(validYAML, "url: https://hooks.example.com/tributary",
		"url: 'https://hook:hookCANARYpw@hooks.example.com/x?token=tokCANARY9'", 1)), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Scrubber()
	text := fmt.Sprintf("%s %s %s hookCANARYpw tokCANARY9 pgCANARY7Q", cfg.Source.URL, cfg.Destination.Password, cfg.Webhooks.SigningSecret)
	if got := s.String(text); strings.Contains(got, "CANARY") {
		t.Errorf("secrets left: %q", got)
	}
	if r := fmt.Sprintf("%+v", cfg.Redacted()); strings.Contains(r, "CANARY") {
		t.Errorf("Redacted keeps the values references read: %s", r)
	}
}

// TestReferencedCharacterNotQuoted: a field that names its first refused
// character ("character 'K' is not allowed") names none when the value
// came through a reference; typed in the document, it still does.
func TestReferencedCharacterNotQuoted(t *testing.T) {
	const secret = "Kq!CANARY#x"
	for _, c := range [][2]string{
		{"name", "name: '${env:CANARY}'\nsource: {type: postgres, url: 'postgres://u@db/shop'}\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: shop}\n"},
		{"source.slot", "name: shop\nsource: {type: postgres, url: 'postgres://u@db/shop', slot: '${env:CANARY}'}\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: shop}\n"},
		{"source.publication", "name: shop\nsource: {type: postgres, url: 'postgres://u@db/shop', publication: '${env:CANARY}'}\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: shop}\n"},
		{"destination.topic_prefix", "name: shop\nsource: {type: postgres, url: 'postgres://u@db/shop'}\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: '${env:CANARY}'}\n"},
		{"destination.topic", "name: shop\nsource: {type: postgres, url: 'postgres://u@db/shop'}\ndestination: {bootstrap_servers: 'k:9092', topic: '${env:CANARY}'}\n"},
		{"destination.client_id", "name: shop\nsource: {type: postgres, url: 'postgres://u@db/shop'}\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: shop, client_id: '${env:CANARY}'}\n"},
	} {
		_, err := parse([]byte(c[1]), env(map[string]string{"CANARY": secret}))
		if err == nil || !contains(fields(t, err), c[0]) {
			t.Fatalf("%s: not refused: %v", c[0], err)
		}
		for _, r := range secret {
			if strings.Contains(err.Error(), fmt.Sprintf("%q", r)) {
				t.Errorf("%s: the problem quotes a character of the referenced value:\n%v", c[0], err)
			}
		}
		typed := strings.Replace(c[1], "${env:CANARY}", "Shop!", 1)
		if _, err := parse([]byte(typed), testEnv); err == nil || !strings.Contains(err.Error(), "character") || !strings.Contains(err.Error(), c[0]+": ") {
			t.Errorf("%s typed in the document: want its first refused character named: %v", c[0], err)
		}
	}
}
