package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
)

// mongoCollection creates a database of the test's own on the tests'
// mongo-java-server (127.0.0.1:27017) with one collection, dropped at the
// end; it returns the database's name.
func mongoCollection(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:27017/?directConnection=true"))
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("ct_mongo_%d", time.Now().UnixNano()%1_000_000_000)
	t.Cleanup(func() {
		_ = c.Database(name).Drop(context.Background())
		_ = c.Disconnect(context.Background())
	})
	if _, err := c.Database(name).Collection("orders").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("the tests' mongo-java-server: %v", err)
	}
	return name
}

// The function runs a mongodb source's checks as `tributary
// test-connection` does (the same lines: deployment, privileges, change
// streams, oplog window, pre-images, listed tables), every connection
// through its dialer: the guarded one refuses the loopback server in one
// line. The URL comes from SSM and appears in no response or log line.
func TestMongoDBSourceChecks(t *testing.T) {
	client, root, prefix, put := ssmRoot(t, "ctm-")
	db := mongoCollection(t)
	put(root+"mongo/url", "mongodb://127.0.0.1:27017/?directConnection=true&appName=mongoCANARY", ssmtypes.ParameterTypeSecureString)
	put(prefix+"mongo", "name: mongo\nsource:\n  type: mongodb\n  url: \"${ssm:"+root+"mongo/url}\"\n"+
		"  tables: ['"+db+`\.orders']`+"\n  capture_mode: change_streams_update_full_with_pre_image\n"+
		"destination: {topic_prefix: mongo, bootstrap_servers: \"127.0.0.1:9092\", disable_tls: true}\n", ssmtypes.ParameterTypeString)

	var logs bytes.Buffer
	configs := pipelines.New(client, prefix, root, 0)
	call := func(h *Handler) response {
		t.Helper()
		req := sampleRequest(t)
		req.RawPath = "/pipelines/mongo/connection-test"
		req.RequestContext.HTTP.Path = req.RawPath
		req.PathParameters = map[string]string{"name": "mongo"}
		res, err := h.Handle(context.Background(), req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%d %v: %s", res.StatusCode, err, res.Body)
		}
		if strings.Contains(res.Body, "CANARY") {
			t.Fatalf("the response shows the source URL: %s", res.Body)
		}
		t.Logf("%s", res.Body)
		var r response
		if err := json.Unmarshal([]byte(res.Body), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	lines := func(r response) map[string]int {
		m := map[string]int{}
		for i, c := range r.Source {
			m[c.Name] = i
		}
		return m
	}

	// Loopback allowed (the tests' servers listen there), never metadata.
	h := NewHandler(configs, slog.New(slog.NewJSONHandler(&logs, nil)))
	h.dial = dialguard.Dialer(dialTimeout, true)
	r := call(h)
	at := lines(r)
	for _, name := range []string{"source connection", "collections", "privileges", "change streams", "oplog window", "listed tables"} {
		i, ok := at[name]
		if !ok || !r.Source[i].OK {
			t.Errorf("check %s: %+v", name, r.Source)
		}
	}
	// mongo-java-server is a standalone server and keeps no pre-images:
	// both lines fail, each with its fix, and so does the report.
	if i, ok := at["deployment"]; !ok || r.Source[i].OK || !strings.Contains(r.Source[i].Fix, "rs.initiate()") {
		t.Errorf("deployment: %+v", r.Source)
	}
	if i, ok := at["pre-images"]; !ok || r.Source[i].OK ||
		!strings.Contains(r.Source[i].Fix, `db.getSiblingDB("`+db+`").runCommand({collMod: "orders", changeStreamPreAndPostImages: {enabled: true}})`) {
		t.Errorf("pre-images: %+v", r.Source)
	}
	if r.OK {
		t.Error("ok with failed source checks")
	}

	// The function's own dialer refuses loopback: one line says so.
	r = call(NewHandler(configs, slog.New(slog.NewJSONHandler(&logs, nil))))
	if len(r.Source) != 1 || r.Source[0].OK || !strings.Contains(r.Source[0].Detail, "address refused") || !strings.Contains(r.Source[0].Detail, "loopback") {
		t.Errorf("mongo-java-server on loopback reached through the guarded dialer: %+v", r.Source)
	}
	if strings.Contains(logs.String(), "CANARY") {
		t.Fatalf("logs show the source URL:\n%s", logs.String())
	}
}
