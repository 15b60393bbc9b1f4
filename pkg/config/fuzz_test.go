package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary documents (configuration comes from
// outside). Parse must not panic, must report problems as *Errors, must
// return only configs that validate, and must never put a secret, planted
// here through ${env:…}, into an error.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		validYAML,
		`{"name":"a","source":{"type":"postgres","url":"postgres://u:${env:SECRET}@h:x/db"},"destination":{"bootstrap_servers":"k:1","topic_prefix":"${env:SECRET}"}}`,
		"name: a\nsource: {type: postgres, url: '${env:SECRET}', tables: ['${env:SECRET}']}\n",
		"destination: {password: '${env:SECRET}', client_key: '${env:SECRET}', bootstrap_servers: '${env:SECRET}'}\n",
		"webhooks: {row_skipped_url: '${env:SECRET}', signing_secret: '${ssm:/x}'}\n",
		"destination: {ssh_tunnel: {key: '${env:SECRET}'}, <<: {private_link: true}}\n",
		"name: a\nsource: {type: mysql, url: 'mysql://h/d', slot: '${env:SECRET}', server_id: 3, signal_table: '${env:SECRET}'}\n",
		"name: a\nsource: {<<: [{type: postgres, server_id: x}], url: 'postgres://h/d', slot: '${env:SECRET}'}\n",
		"a: &a {name: x}\nname: *a\n",
		"name: a\nname: b\n---\n",
		"{\"name\": \"\\ud83d\\ude00\\/\"}",
		"",
	} {
		f.Add([]byte(seed))
	}
	secrets := env(map[string]string{
		"SECRET":              canary,
		"TEST_PGPASSWORD":     "pgCANARY7Q",
		"TEST_KAFKA_PASSWORD": canary,
	})
	f.Fuzz(func(t *testing.T, doc []byte) {
		cfg, err := parse(doc, secrets)
		if err == nil {
			if cfg == nil {
				t.Fatal("nil config without error")
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Parse accepted a config that does not validate: %v", err)
			}
			r := cfg.Redacted()
			for _, s := range []string{r.Destination.Password, r.Destination.ClientKey, r.Webhooks.SigningSecret, r.Destination.ExternalID} {
				if strings.Contains(s, "CANARY7Q") {
					t.Fatalf("Redacted kept a secret: %q", s)
				}
			}
			return
		}
		var errs *Errors
		if !errors.As(err, &errs) || len(errs.Problems) == 0 {
			t.Fatalf("error is not a non-empty *Errors: %v", err)
		}
		// A value written literally in the document may be echoed (a key
		// name, say); one that only came from the environment may not.
		if !strings.Contains(string(doc), "CANARY7Q") && strings.Contains(err.Error(), "CANARY7Q") {
			t.Fatalf("error leaks a secret:\n%v", err)
		}
	})
}
