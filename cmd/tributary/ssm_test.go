package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestSSMConfigCanary plants a secret in SSM (the AWS emulator), points
// configs at it in every field that may hold one, and checks that no output
// of the CLI — happy path or failure — ever shows it.
func TestSSMConfigCanary(t *testing.T) {
	const canary = "s3cr3t-CANARY-91ZQ%@:/-long-enough-to-sign"
	client := ssm.NewFromConfig(awstest.Env(t))
	base := "/" + awstest.Name("tributary-cli-")
	put := func(name, value string, typ ssmtypes.ParameterType) {
		t.Helper()
		if _, err := client.PutParameter(context.Background(), &ssm.PutParameterInput{
			Name: aws.String(base + name), Value: aws.String(value), Type: typ, Overwrite: aws.Bool(true),
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("/secret", canary, ssmtypes.ParameterTypeSecureString)
	put("/url", "postgres://u:pw-CANARY-91ZQ@127.0.0.1:5432/shop", ssmtypes.ParameterTypeSecureString)
	good := `name: shop
source:
  type: postgres
  url: ${ssm:` + base + `/url}
destination:
  bootstrap_servers: 127.0.0.1:9092
  topic_prefix: shop
  authentication: SCRAM-SHA-512
  username: u
  password: ${ssm:` + base + `/secret}
checkpoint:
  path: ` + t.TempDir() + `
webhooks:
  row_skipped_url: https://hooks.example.com/x?token=${ssm:` + base + `/secret}
  signing_secret: ${ssm:` + base + `/secret}
`
	put("/pipelines/shop", good, ssmtypes.ParameterTypeString)
	put("/pipelines/missing-ref", strings.Replace(good, base+"/secret}", base+"/nope}", 1), ssmtypes.ParameterTypeString)
	put("/pipelines/bad", strings.NewReplacer(
		"topic_prefix: shop", "topic_prefix: ${ssm:"+base+"/secret}",
		"127.0.0.1:9092", "${ssm:"+base+"/secret}",
		"username: u", "colour: ${ssm:"+base+"/secret}",
	).Replace(good), ssmtypes.ParameterTypeString)

	var all bytes.Buffer
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", "--config", "ssm:" + base + "/pipelines/shop"}, 0, "configuration for pipeline shop is valid"},
		{[]string{"status", "--config", "ssm:" + base + "/pipelines/shop"}, 0, "no checkpoint yet"},
		{[]string{"validate", "--config", "ssm:" + base + "/pipelines/none"}, 2, "SSM parameter " + base + "/pipelines/none does not exist"},
		{[]string{"validate", "--config", "ssm:" + base + "/pipelines/missing-ref"}, 2, "SSM parameter " + base + "/nope does not exist"},
		{[]string{"validate", "--config", "ssm:" + base + "/pipelines/bad"}, 2, "destination.topic_prefix"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainExit(tc.args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		all.WriteString(out)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d (want %d), output lacks %q:\n%s", tc.args, code, tc.code, tc.want, redact(out, canary))
		}
	}
	if strings.Contains(all.String(), "CANARY-91ZQ") {
		t.Fatalf("the planted secret reached the output:\n%s", redact(all.String(), canary))
	}
}

// redact keeps a failing test's own report from spreading the canary.
func redact(s, secret string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, secret, "<CANARY>"), "CANARY-91ZQ", "<CANARY-PART>")
}
