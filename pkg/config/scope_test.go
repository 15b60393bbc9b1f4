package config

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestReferenceScope runs against the AWS emulator: a document confined to
// /…/shop/ cannot read another pipeline's parameter (not even to learn
// whether it exists) nor the environment, and the caller learns every
// value that was resolved, so it can keep them out of what it shows.
func TestReferenceScope(t *testing.T) {
	client := ssm.NewFromConfig(awstest.Env(t))
	base := "/" + awstest.Name("tributary-scope-")
	putParameter(t, client, base+"/shop/kafka-password", "shop-"+canary, ssmtypes.ParameterTypeSecureString)
	putParameter(t, client, base+"/billing/kafka-password", "billing-"+canary, ssmtypes.ParameterTypeSecureString)
	t.Setenv("TEST_SCOPE_SECRET", "env-"+canary)
	doc := func(password string) string {
		d := strings.Replace(validYAML, "${env:TEST_KAFKA_PASSWORD}", password, 1)
		if d == validYAML {
			t.Fatal("validYAML has no ${env:TEST_KAFKA_PASSWORD} to replace")
		}
		return d
	}
	load := func(name, password string, opts ...LoadOption) (*Config, error) {
		putParameter(t, client, base+"/pipelines/"+name, doc(password), ssmtypes.ParameterTypeString)
		t.Setenv("TEST_PGPASSWORD", "pg")
		return Load(context.Background(), "ssm:"+base+"/pipelines/"+name,
			append([]LoadOption{WithSSMClient(client), WithReferenceScope(base + "/shop/"), WithoutEnvironment()}, opts...)...)
	}

	var seen []string
	cfg, err := load("own", "${ssm:"+base+"/shop/kafka-password}", WithResolvedValues(func(v string) { seen = append(seen, v) }))
	if err != nil && !strings.Contains(err.Error(), "TEST_PGPASSWORD") {
		t.Fatalf("own secret: %v", err)
	}
	if cfg != nil && cfg.Destination.Password != "shop-"+canary {
		t.Errorf("password %q", cfg.Destination.Password)
	}
	if !slices.Contains(seen, "shop-"+canary) {
		t.Errorf("resolved values %q lack the password", seen)
	}

	for _, tc := range []struct{ ref, want string }{
		{"${ssm:" + base + "/billing/kafka-password}", "destination.password: parameter " + base + "/billing/kafka-password is outside " + base + "/shop/"},
		{"${ssm:" + base + "/shop/../billing/kafka-password}", "is outside " + base + "/shop/"},
		{"${ssm:" + base + "/shopping/x}", "is outside " + base + "/shop/"},
		{"${env:TEST_SCOPE_SECRET}", "destination.password: ${env:TEST_SCOPE_SECRET}: environment references are not allowed here"},
	} {
		_, err := load("other", tc.ref)
		var problems *Errors
		if !errors.As(err, &problems) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.ref, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), canary) {
			t.Errorf("%s: the error leaks a secret: %v", tc.ref, err)
		}
	}
}

// TestUnknownKeyShowsItsNameOnly: a key that is not a plain name (a value
// typed in the wrong place, a pasted URL) is shown by its leading name
// part only.
func TestUnknownKeyShowsItsNameOnly(t *testing.T) {
	for doc, want := range map[string]string{
		"name: a\ndestination:\n  password hunter2" + canary + ": x\n":                   `destination."password…": unknown key`,
		"name: a\nwebhooks:\n  https://hooks.slack.com/services/T/B/" + canary + ": 1\n": `webhooks."https…": unknown key`,
		"name: a\ndestination:\n  pasword: x\n":                                          "destination.pasword: unknown key",
	} {
		_, err := parse([]byte(doc), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), canary) {
			t.Errorf("%q: %v, want %q and no value", doc, err, want)
		}
	}
}
