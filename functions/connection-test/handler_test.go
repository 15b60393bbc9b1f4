package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

const canary = "kafkaCANARY5150pw"

// TestReplaySampleRequests replays events/apigw-connection-test.json
// against the AWS emulator (SSM) and the local Kafka (127.0.0.1:9092):
// a good pipeline, an unknown one, a bad request, a pipeline whose
// brokers sit on instance-metadata addresses, and one whose secret is
// wrong. No response or log line shows the planted secret.
func TestReplaySampleRequests(t *testing.T) {
	client := ssm.NewFromConfig(awstest.Env(t))
	prefix := "/" + awstest.Name("ct-") + "/pipelines/"
	put := func(name, value string, typ ssmtypes.ParameterType) {
		t.Helper()
		if _, err := client.PutParameter(context.Background(), &ssm.PutParameterInput{Name: aws.String(name),
			Value: aws.String(value), Type: typ, Overwrite: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	put(prefix+"secret", canary, ssmtypes.ParameterTypeSecureString)
	doc := func(name, dest string) string {
		return "name: " + name + "\nsource: {type: postgres, url: \"postgres://u:${ssm:" + prefix + "secret}@127.0.0.1:5432/db\"}\n" +
			"destination: {topic_prefix: " + name + ", " + dest + "}\n"
	}
	put(prefix+"shop", doc("shop", `bootstrap_servers: "127.0.0.1:9092", disable_tls: true`), ssmtypes.ParameterTypeString)
	put(prefix+"imds", doc("imds", `bootstrap_servers: "169.254.169.254:9092,[fd00:ec2::254]:9092", disable_tls: true`), ssmtypes.ParameterTypeString)
	put(prefix+"scram", doc("scram", `bootstrap_servers: "127.0.0.1:9092", disable_tls: true, authentication: SCRAM-SHA-512, username: u, password: "${ssm:`+prefix+`secret}"`), ssmtypes.ParameterTypeString)
	put(prefix+"broken", doc("broken", `bootstrap_servers: "127.0.0.1:9092", password: "${ssm:`+prefix+`gone}"`), ssmtypes.ParameterTypeString)

	var logs bytes.Buffer
	h := NewHandler(pipelines.New(client, prefix, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	call := func(name string, edit func(*events.APIGatewayV2HTTPRequest)) (int, string) {
		t.Helper()
		req := sampleRequest(t)
		req.RawPath = "/pipelines/" + name + "/connection-test"
		req.RequestContext.HTTP.Path = req.RawPath
		req.PathParameters = map[string]string{"name": name}
		if edit != nil {
			edit(&req)
		}
		res, err := h.Handle(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Headers["Content-Type"] != "application/json" || !json.Valid([]byte(res.Body)) {
			t.Fatalf("%s: not a JSON response: %+v", name, res)
		}
		if strings.Contains(res.Body, "CANARY") {
			t.Fatalf("%s: the response leaks the planted secret: %s", name, res.Body)
		}
		return res.StatusCode, res.Body
	}
	report := func(body string) kafka.Report {
		var r kafka.Report
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	// The sample itself, unchanged, names pipeline "shop".
	code, body := call("shop", nil)
	if r := report(body); code != 200 || !r.OK || len(r.Brokers) == 0 || !r.Brokers[0].Reachable {
		t.Fatalf("shop: %d %s", code, body)
	}
	for _, key := range []string{`"ok":true`, `"brokers":[{"id":`, `"host":"`, `"port":`, `"reachable":true`, `"checks":[`} {
		if !strings.Contains(body, key) {
			t.Errorf("shop: response lacks %s: %s", key, body)
		}
	}

	if code, body := call("nope", nil); code != 404 || !strings.Contains(body, "pipeline nope not found") {
		t.Errorf("unknown pipeline: %d %s", code, body)
	}
	if code, body := call("shop", func(r *events.APIGatewayV2HTTPRequest) { r.Body = `{"x":1}` }); code != 400 {
		t.Errorf("bad body: %d %s", code, body)
	}
	if code, body := call("Shop!", nil); code != 400 {
		t.Errorf("bad name: %d %s", code, body)
	}
	if code, body := call("broken", nil); code != 400 || !strings.Contains(body, "destination.password: SSM parameter "+prefix+"gone does not exist") {
		t.Errorf("broken: %d %s", code, body)
	}

	start := time.Now()
	code, body = call("imds", nil)
	if r := report(body); code != 200 || r.OK || !strings.Contains(body, "169.254.169.254") ||
		!strings.Contains(body, "address refused") || time.Since(start) > 10*time.Second {
		t.Errorf("imds: %d in %v: %s", code, time.Since(start), body)
	}

	code, body = call("scram", nil)
	if r := report(body); code != 200 || r.OK {
		t.Errorf("scram against a plaintext listener: %d %s", code, body)
	}
	if strings.Contains(logs.String(), "CANARY") {
		t.Fatalf("logs leak the planted secret:\n%s", logs.String())
	}
}
