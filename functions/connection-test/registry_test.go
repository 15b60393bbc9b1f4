package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// apicurio is the Confluent API of the tests' schema registry.
const apicurio = "http://127.0.0.1:8081/apis/ccompat/v7"

// TestRegistryCheck: a pipeline writing Avro gets the "schema registry"
// line of `tributary test-connection` in the function's answer, for a
// Confluent-compatible registry (the tests' Apicurio, asked to register
// with the pipeline's credentials) and for Glue (moto; without role_arn
// the function would ask Glue as its own role, so it does not ask to
// register), with ok false when the registry does not answer or does not
// exist; the
// registry is dialled through the function's dialer (the guarded one
// refuses it on loopback); its host must be one the stack allows, its
// password goes only over TLS (or, in tests, to loopback) and never into
// the answer or the logs, and Glue signs in with no role but the one the
// stack binds.
func TestRegistryCheck(t *testing.T) {
	if resp, err := http.Get(apicurio + "/subjects"); err != nil {
		t.Fatalf("the tests' schema registry does not answer at %s: %v", apicurio, err)
	} else {
		resp.Body.Close()
	}
	client, root, prefix, put := ssmRoot(t, "ct-reg-")
	ctx := context.Background()
	gc := glue.NewFromConfig(awstest.Env(t))
	registry := awstest.Name("ctreg")
	if _, err := gc.CreateRegistry(ctx, &glue.CreateRegistryInput{RegistryName: aws.String(registry)}); err != nil {
		t.Fatalf("creating a Glue registry on moto (127.0.0.1:5000): %v", err)
	}
	t.Cleanup(func() {
		gc.DeleteRegistry(context.Background(), &glue.DeleteRegistryInput{RegistryId: &gluetypes.RegistryId{RegistryName: aws.String(registry)}})
	})
	db := shopDatabase(t)
	const writer = "arn:aws:iam::111122223333:role/tributary-writer-reg"
	for name, reg := range map[string]string{
		"reg":         `{type: confluent, url: "` + apicurio + `", username: u, password: "${ssm:%s}"}`,
		"regmissing":  `{type: confluent, url: "http://127.0.0.1:8081/nothing-here", username: u, password: "${ssm:%s}"}`,
		"glue":        `{type: glue, registry_name: ` + registry + `, region: us-east-1}`,
		"gluemissing": `{type: glue, registry_name: ` + registry + `-gone, region: us-east-1}`,
		"fenced":      `{type: confluent, url: "https://registry.example.com/apis/ccompat/v7"}`,
		"cleartext":   `{type: confluent, url: "http://registry.example.com:8081", username: u, password: "${ssm:%s}"}`,
		"glueother":   `{type: glue, registry_name: ` + registry + `, region: us-east-1, role_arn: "arn:aws:iam::111122223333:role/other", external_id: "${ssm:%s}"}`,
	} {
		secret := root + name + "/secret"
		put(root+name+"/pg", "postgres", ssmtypes.ParameterTypeSecureString)
		put(secret, canary, ssmtypes.ParameterTypeSecureString)
		put(prefix+name, "name: "+name+"\n"+
			"source: {type: postgres, url: \"postgres://postgres:${ssm:"+root+name+"/pg}@127.0.0.1:5432/"+db+"\"}\n"+
			"destination: {topic_prefix: "+name+", bootstrap_servers: \"127.0.0.1:9092\", disable_tls: true}\n"+
			"format: {key: avro, value: avro, schema_registry: "+strings.Replace(reg, "%s", secret, 1)+"}\n", ssmtypes.ParameterTypeString)
	}

	var logs bytes.Buffer
	configs := pipelines.New(client, prefix, root, 0)
	// The tests' services are on loopback: this handler may reach it.
	h := NewHandler(configs, slog.New(slog.NewJSONHandler(&logs, nil)))
	h.dial = dialguard.Dialer(dialTimeout, true)
	h.targets = targets{
		writers:           map[string]string{"glueother": writer},
		hosts:             map[string][]string{"fenced": {"127.0.0.1"}},
		plaintextLoopback: true,
	}
	call := func(h *Handler, name string) (int, response, string) {
		t.Helper()
		req := sampleRequest(t)
		req.RawPath = "/pipelines/" + name + "/connection-test"
		req.RequestContext.HTTP.Path = req.RawPath
		req.PathParameters = map[string]string{"name": name}
		res, err := h.Handle(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(res.Body, "CANARY") {
			t.Fatalf("%s: the answer holds the registry's secret: %s", name, res.Body)
		}
		var r response
		if err := json.Unmarshal([]byte(res.Body), &r); err != nil {
			t.Fatalf("%s: %v: %s", name, err, res.Body)
		}
		return res.StatusCode, r, res.Body
	}
	line := func(name string, r response, body string) source.Check {
		t.Helper()
		if len(r.Registry) != 1 || r.Registry[0].Name != "schema registry" {
			t.Fatalf("%s: want one schema registry line: %s", name, body)
		}
		return r.Registry[0]
	}

	for name, want := range map[string]struct {
		ok          bool
		detail, fix string
	}{
		"reg":         {true, "subjects readable; may register under reg.", ""},
		"regmissing":  {false, "HTTP 404", "check format.schema_registry.url"},
		"glue":        {true, "; the permission to register is not asked here: Glue would answer for this function's role", ""},
		"gluemissing": {false, "Glue schema registry " + registry + "-gone does not exist", "aws glue create-registry"},
	} {
		code, r, body := call(h, name)
		c := line(name, r, body)
		if code != 200 || c.OK != want.ok || !strings.Contains(c.Detail, want.detail) || !strings.Contains(c.Fix, want.fix) {
			t.Errorf("%s: %d %s, want ok %v, detail with %q, fix with %q", name, code, body, want.ok, want.detail, want.fix)
		}
		// ok is every line's: Kafka and the source pass here.
		if r.OK != want.ok || len(r.Brokers) == 0 || !r.Brokers[0].Reachable {
			t.Errorf("%s: ok %v with the registry's ok %v: %s", name, r.OK, c.OK, body)
		}
	}

	for name, want := range map[string]struct {
		status int
		field  string
	}{
		"fenced":    {403, "format.schema_registry.url: the registry host is not among the hosts this stack allows pipeline fenced"},
		"cleartext": {400, "format.schema_registry.url: the connection test sends the registry's username and password only over TLS"},
		"glueother": {403, "format.schema_registry.role_arn: not the writer role this stack gives pipeline glueother"},
	} {
		if code, _, body := call(h, name); code != want.status || !strings.Contains(body, want.field) {
			t.Errorf("%s: %d %s, want %d naming %q", name, code, body, want.status, want.field)
		}
	}

	// The functions' own dialer refuses the registry on loopback.
	guarded := NewHandler(configs, slog.New(slog.NewJSONHandler(&logs, nil)))
	guarded.targets.plaintextLoopback = true
	for _, name := range []string{"reg", "glue"} {
		_, r, body := call(guarded, name)
		if c := line(name, r, body); c.OK || r.OK || !strings.Contains(c.Detail, "address refused") || !strings.Contains(c.Detail, "loopback") {
			t.Errorf("%s: the registry on loopback reached through the guarded dialer: %s", name, body)
		}
	}
	if strings.Contains(logs.String(), "CANARY") {
		t.Errorf("logs hold the registry's secret:\n%s", logs.String())
	}
}
