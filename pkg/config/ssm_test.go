package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

func putParameter(t *testing.T, c *ssm.Client, name, value string, typ ssmtypes.ParameterType) {
	t.Helper()
	_, err := c.PutParameter(context.Background(), &ssm.PutParameterInput{
		Name: aws.String(name), Value: aws.String(value), Type: typ, Overwrite: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
}

// TestLoadFromSSM runs against the AWS emulator: a pipeline document kept
// in a parameter, its ${ssm:…} SecureStrings decrypted, ${env:…} resolved,
// and every failure naming the parameter without the planted secret.
func TestLoadFromSSM(t *testing.T) {
	awsCfg := awstest.Env(t)
	client := ssm.NewFromConfig(awsCfg)
	base := "/" + awstest.Name("tributary-test-")
	t.Setenv("TEST_PGPASSWORD", "pg")

	putParameter(t, client, base+"/shop/kafka-password", "kafka-"+canary, ssmtypes.ParameterTypeSecureString)
	putParameter(t, client, base+"/shop/webhook-secret", "whsec-"+canary, ssmtypes.ParameterTypeSecureString)
	doc := strings.NewReplacer(
		"${env:TEST_KAFKA_PASSWORD}", "${ssm:"+base+"/shop/kafka-password}",
		"signing_secret: whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3", "signing_secret: ${ssm:"+base+"/shop/webhook-secret}",
	).Replace(validYAML)
	putParameter(t, client, base+"/pipelines/shop", doc, ssmtypes.ParameterTypeString)

	ctx := context.Background()
	var outputs []string
	check := func(label string, cfg *Config, err error) {
		if err != nil {
			outputs = append(outputs, label+": "+err.Error())
		}
		if cfg != nil {
			outputs = append(outputs, label+": "+fmt.Sprintf("%+v", cfg.Redacted()))
		}
	}

	// Happy path, with a client made from the environment and with one given.
	for _, opts := range [][]LoadOption{nil, {WithSSMClient(client)}} {
		cfg, err := Load(ctx, "ssm:"+base+"/pipelines/shop", opts...)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if cfg.Destination.Password != "kafka-"+canary || cfg.Webhooks.SigningSecret != "whsec-"+canary {
			t.Fatalf("SecureStrings not decrypted: %q %q", cfg.Destination.Password, cfg.Webhooks.SigningSecret)
		}
		if !strings.Contains(cfg.Source.URL, ":pg@") {
			t.Fatalf("${env:…} in an SSM document: %q", cfg.Source.URL)
		}
		check("happy", cfg, nil)
	}

	// A file document may reference SSM too.
	file := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(ctx, file)
	if err != nil || cfg.Destination.Password != "kafka-"+canary {
		t.Fatalf("file with ${ssm:…}: %v", err)
	}
	check("file", cfg, err)

	// The document's parameter is missing: a *ParameterError naming it.
	_, err = Load(ctx, "ssm:"+base+"/pipelines/nope")
	var pe *ParameterError
	if !errors.Is(err, ErrParameterNotFound) || !errors.As(err, &pe) || pe.Name != base+"/pipelines/nope" ||
		!strings.Contains(err.Error(), "SSM parameter "+base+"/pipelines/nope does not exist") {
		t.Fatalf("missing document: %v", err)
	}
	check("missing document", nil, err)

	// A referenced parameter is missing: the field and the parameter are named.
	missingRef := strings.Replace(doc, base+"/shop/webhook-secret", base+"/shop/gone", 1)
	putParameter(t, client, base+"/pipelines/missing-ref", missingRef, ssmtypes.ParameterTypeString)
	_, err = Load(ctx, "ssm:"+base+"/pipelines/missing-ref")
	if errors.Is(err, ErrParameterNotFound) || !contains(fields(t, err), "webhooks.signing_secret") ||
		!strings.Contains(err.Error(), "SSM parameter "+base+"/shop/gone does not exist (referenced as ${ssm:"+base+"/shop/gone})") {
		t.Fatalf("missing reference: %v", err)
	}
	check("missing reference", nil, err)

	// Secrets in places where validation fails: a URL that does not parse
	// and a bootstrap list that is wrong, both from SecureStrings.
	putParameter(t, client, base+"/shop/bad-url", "postgres://u:"+canary+"@h:port/db", ssmtypes.ParameterTypeSecureString)
	bad := strings.NewReplacer(
		"postgres://tributary:${env:TEST_PGPASSWORD}@db.internal:5432/shop?sslmode=verify-full", "${ssm:"+base+"/shop/bad-url}",
		"b-1.kafka.example.com:9096, b-2.kafka.example.com:9096", "${ssm:"+base+"/shop/kafka-password}",
		"topic_prefix: shop", "topic_prefix: ${ssm:"+base+"/shop/kafka-password}",
	).Replace(doc)
	putParameter(t, client, base+"/pipelines/bad", bad, ssmtypes.ParameterTypeString)
	_, err = Load(ctx, "ssm:"+base+"/pipelines/bad")
	if f := fields(t, err); !contains(f, "source.url") || !contains(f, "destination.topic_prefix") {
		t.Fatalf("bad values: %v", err)
	}
	check("bad values", nil, err)

	// Malformed names never reach AWS.
	_, err = Load(ctx, "ssm:"+base+"/pipelines/sh op")
	check("malformed", nil, err)
	if err == nil {
		t.Fatal("malformed name accepted")
	}

	for _, out := range outputs {
		if strings.Contains(out, "CANARY7Q") {
			t.Errorf("output leaks the planted secret:\n%s", out)
		}
	}
}

// TestLoadSSMUnreachable: with no emulator behind the endpoint the error
// names the parameter and comes back quickly.
func TestLoadSSMUnreachable(t *testing.T) {
	awstest.Env(t)
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	_, err := Load(context.Background(), "ssm:/tributary/pipelines/shop")
	var pe *ParameterError
	if !errors.As(err, &pe) || pe.Code != "" || !strings.Contains(err.Error(), "SSM parameter /tributary/pipelines/shop cannot be read") {
		t.Fatalf("unreachable: %v", err)
	}
}
