package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

func sampleEvent(t *testing.T) events.APIGatewayV2HTTPRequest {
	t.Helper()
	data, err := os.ReadFile("../../events/apigw-backfill.json")
	if err != nil {
		t.Fatal(err)
	}
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

// TestReplaySampleRequest replays events/apigw-backfill.json against the
// checkpoint table on the AWS emulator, while a task holds the
// pipeline's lease: the request lands in the item (the lease untouched,
// so the holder keeps it), merges with a later one, and bad requests get
// a 400 naming the field.
func TestReplaySampleRequest(t *testing.T) {
	client := dynamodb.NewFromConfig(awstest.Env(t))
	table := awstest.Name("tributary-bf-")
	ctx := context.Background()
	store, err := checkpoint.OpenDynamoDB(ctx, client, checkpoint.DynamoDBOptions{Table: table, Pipeline: "shop", CreateTable: true, LeaseDuration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var logs bytes.Buffer
	h := NewHandler(client, table, slog.New(slog.NewJSONHandler(&logs, nil)))
	call := func(edit func(*events.APIGatewayV2HTTPRequest)) (int, string) {
		t.Helper()
		req := sampleEvent(t)
		if edit != nil {
			edit(&req)
		}
		resp, err := h.Handle(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Body
	}

	if code, body := call(nil); code != 202 || !strings.Contains(body, `"tables":["public.orders","public.refunds"]`) {
		t.Fatalf("sample request: %d %s", code, body)
	}
	if code, body := call(func(r *events.APIGatewayV2HTTPRequest) { r.Body = `{"all": true}` }); code != 202 || !strings.Contains(body, `"all":true`) {
		t.Fatalf("all: %d %s", code, body)
	}
	req, err := store.PendingBackfill(ctx)
	if err != nil || !req.All || strings.Join(req.Tables, ",") != "public.orders,public.refunds" {
		t.Fatalf("pending after two requests: %+v, %v", req, err)
	}
	// The holder still owns the pipeline and can checkpoint.
	if err := store.Save(ctx, checkpoint.Checkpoint{Position: []byte(`{"lsn":"0/1"}`)}); err != nil {
		t.Fatalf("checkpoint after the requests: %v", err)
	}

	never := func(r *events.APIGatewayV2HTTPRequest) {
		r.RawPath, r.RequestContext.HTTP.Path, r.PathParameters = "/pipelines/billing/backfill", "/pipelines/billing/backfill", map[string]string{"name": "billing"}
	}
	if code, body := call(never); code != 409 || !strings.Contains(body, "pipeline billing has never run") {
		t.Errorf("pipeline without an item: %d %s", code, body)
	}

	for _, tc := range []struct{ body, want string }{
		{``, "body must be a JSON object"},
		{`[]`, "body must be a JSON object"},
		{`{}`, `give tables`},
		{`{"tables": []}`, "tables must not be empty"},
		{`{"tables": ["orders"]}`, "tables[0] must be schema.table"},
		{`{"tables": ["public.a", "x.y.z"]}`, "tables[1] must be schema.table"},
		{`{"tables": ["public.a"], "all": true}`, "tables and all exclude each other"},
		{`{"all": false}`, "all must be true"},
		{`{"all": true, "password": "hunter2CANARY"}`, "body takes only the fields tables and all"},
		{`{"all": true} {"all": true}`, "one JSON object"},
		{`{"tables": "public.a"}`, "body must be a JSON object"},
	} {
		code, body := call(func(r *events.APIGatewayV2HTTPRequest) { r.Body = tc.body })
		if code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("body %s: %d %s, want 400 with %q", tc.body, code, body, tc.want)
		}
	}
	for name, edit := range map[string]func(*events.APIGatewayV2HTTPRequest){
		"GET":        func(r *events.APIGatewayV2HTTPRequest) { r.RequestContext.HTTP.Method = "GET" },
		"bad name":   func(r *events.APIGatewayV2HTTPRequest) { r.RawPath = "/pipelines/Sh op/backfill" },
		"other path": func(r *events.APIGatewayV2HTTPRequest) { r.RawPath = "/pipelines/shop/connection-test" },
		"mismatch":   func(r *events.APIGatewayV2HTTPRequest) { r.PathParameters = map[string]string{"name": "other"} },
	} {
		if code, _ := call(edit); code != 400 {
			t.Errorf("%s: %d, want 400", name, code)
		}
	}
	if strings.Contains(logs.String(), "hunter2CANARY") {
		t.Errorf("a request value reached the logs:\n%s", logs.String())
	}
}

// FuzzParseBody: the body comes from outside; parsing never panics, and
// what it accepts is a non-empty request of schema.table names.
func FuzzParseBody(f *testing.F) {
	f.Add(`{"tables":["public.orders"]}`, false)
	f.Add(`{"all":true}`, false)
	f.Add(`eyJhbGwiOnRydWV9`, true)
	f.Fuzz(func(t *testing.T, raw string, b64 bool) {
		r, err := parseBody(raw, b64)
		if err != nil {
			return
		}
		if r.Empty() {
			t.Fatal("accepted an empty request")
		}
		for _, tb := range r.Tables {
			if !tableName.MatchString(tb) {
				t.Fatalf("accepted table %q", tb)
			}
		}
	})
}
