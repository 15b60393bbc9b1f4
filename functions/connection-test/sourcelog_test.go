package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
)

// TestSourceLogsScrubbed: what the source logs while it is tested (the
// MySQL source warns of listed tables that do not exist, naming them)
// goes to the function's log, scrubbed like its answer, and nowhere
// else: a table name read through a reference shows as REDACTED, also in
// CloudWatch.
func TestSourceLogsScrubbed(t *testing.T) {
	client, root, prefix, put := ssmRoot(t, "ct-srclog-")
	put(root+"maria/table", "tblCANARY78", ssmtypes.ParameterTypeSecureString)
	put(root+"maria/db", "root", ssmtypes.ParameterTypeSecureString)
	put(prefix+"maria", "name: maria\nsource: {type: mysql, url: \"mysql://root:${ssm:"+root+"maria/db}@127.0.0.1:3306\", "+
		"tables: [\"mysql.${ssm:"+root+"maria/table}\", \"mysql\\\\.x${ssm:"+root+"maria/table}.*\"]}\n"+
		"destination: {topic_prefix: maria, bootstrap_servers: \"127.0.0.1:9092\", disable_tls: true}\n", ssmtypes.ParameterTypeString)

	// The Lambda runtime's default logger writes to CloudWatch too.
	var def, logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&def, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	h := NewHandler(pipelines.New(client, prefix, root, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	h.dial = dialguard.Dialer(dialTimeout, true)
	h.targets.plaintextLoopback = true
	req := sampleRequest(t)
	req.RawPath = "/pipelines/maria/connection-test"
	req.RequestContext.HTTP.Path = req.RawPath
	req.PathParameters = map[string]string{"name": "maria"}
	res, err := h.Handle(context.Background(), req)
	if err != nil || res.StatusCode != 200 || strings.Contains(res.Body, "CANARY") {
		t.Fatalf("%v %d %s", err, res.StatusCode, res.Body)
	}
	if def.Len() > 0 {
		t.Errorf("the source logged past the function's logger:\n%s", def.String())
	}
	if !strings.Contains(logs.String(), "source.tables lists tables that do not exist") || !strings.Contains(logs.String(), "mysql.REDACTED") {
		t.Errorf("the function's log lacks the source's warning, scrubbed:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "CANARY") || strings.Contains(def.String(), "CANARY") {
		t.Errorf("a log shows a table name read through a reference:\n%s\n%s", logs.String(), def.String())
	}
}

// TestWholeURLReferenceHidesDatabase: a source URL read whole through a
// reference leaves the report without its user, its host and its
// database name, which the servers' errors quote ("database \"…\" does
// not exist"), for PostgreSQL and MySQL alike.
func TestWholeURLReferenceHidesDatabase(t *testing.T) {
	client, root, prefix, put := ssmRoot(t, "ct-wholeurl-")
	urls := map[string]string{
		"pg": "postgres://postgres:postgres@127.0.0.1:5432/dbCANARY55",
		"my": "mysql://root:root@127.0.0.1:3306/dbCANARY56",
	}
	for name, u := range urls {
		put(root+name+"/url", u, ssmtypes.ParameterTypeSecureString)
		put(prefix+name, "name: "+name+"\nsource: {type: "+map[string]string{"pg": "postgres", "my": "mysql"}[name]+", url: \"${ssm:"+root+name+"/url}\"}\n"+
			"destination: {topic_prefix: "+name+", bootstrap_servers: \"127.0.0.1:9092\", disable_tls: true}\n", ssmtypes.ParameterTypeString)
	}
	var logs bytes.Buffer
	h := NewHandler(pipelines.New(client, prefix, root, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	h.dial = dialguard.Dialer(dialTimeout, true)
	h.targets.plaintextLoopback = true
	for name := range urls {
		req := sampleRequest(t)
		req.RawPath = "/pipelines/" + name + "/connection-test"
		req.RequestContext.HTTP.Path = req.RawPath
		req.PathParameters = map[string]string{"name": name}
		res, err := h.Handle(context.Background(), req)
		if err != nil || res.StatusCode != 200 || !strings.Contains(res.Body, `does not exist`) {
			t.Fatalf("%s: want a report on a database that does not exist: %v %d %s", name, err, res.StatusCode, res.Body)
		}
		if strings.Contains(res.Body, "CANARY") {
			t.Errorf("%s: the report shows a part of the URL read through a reference: %s", name, res.Body)
		}
	}
}
