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

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/source"
)

const canary = "kafkaCANARY5150pw"

// shopDatabase creates a database of the test's own on the tests'
// PostgreSQL with one keyed table, so that the connection test has a
// table to capture ("listed tables"), and drops it at the end.
func shopDatabase(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, "postgres://postgres:postgres@127.0.0.1:5432/postgres")
	if err != nil {
		t.Fatalf("connect to the tests' PostgreSQL: %v", err)
	}
	defer admin.Close(ctx)
	name := fmt.Sprintf("ct_shop_%d", time.Now().UnixNano()%1_000_000_000)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(ctx, "postgres://postgres:postgres@127.0.0.1:5432/postgres"); err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	db, err := pgx.Connect(ctx, "postgres://postgres:postgres@127.0.0.1:5432/"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, "CREATE TABLE orders (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestReplaySampleRequests replays events/apigw-connection-test.json
// against the AWS emulator (SSM) and the local Kafka (127.0.0.1:9092):
// a good pipeline, an unknown one, a bad request, a pipeline whose
// brokers sit on instance-metadata addresses, and one whose secret is
// wrong; and the ways one document could read secrets out: another
// pipeline's parameter, the function's environment, its own secret put
// where the report shows brokers, and loopback (the Lambda runtime API).
// No response or log line shows a planted secret.
func TestReplaySampleRequests(t *testing.T) {
	client, root, prefix, put := ssmRoot(t, "ct-")
	secret := func(name string) string { return root + name + "/secret" }
	doc := func(name, dest string) string {
		put(secret(name), canary, ssmtypes.ParameterTypeSecureString)
		return "name: " + name + "\nsource: {type: postgres, url: \"postgres://u:${ssm:" + secret(name) + "}@127.0.0.1:5432/db\"}\n" +
			"destination: {topic_prefix: " + name + ", " + dest + "}\n"
	}
	// shop signs in to the tests' PostgreSQL for real (its password from
	// SSM), to a database of its own with a table to capture; every other
	// pipeline's source password is the canary, which the server refuses.
	shopDB := shopDatabase(t)
	put(root+"shop/pg", "postgres", ssmtypes.ParameterTypeSecureString)
	put(prefix+"shop", strings.Replace(doc("shop", `bootstrap_servers: "127.0.0.1:9092", disable_tls: true`),
		"postgres://u:${ssm:"+secret("shop")+"}@127.0.0.1:5432/db", "postgres://postgres:${ssm:"+root+"shop/pg}@127.0.0.1:5432/"+shopDB, 1), ssmtypes.ParameterTypeString)
	put(prefix+"imds", doc("imds", `bootstrap_servers: "169.254.169.254:9092,[fd00:ec2::254]:9092", disable_tls: true`), ssmtypes.ParameterTypeString)
	put(prefix+"scram", doc("scram", `bootstrap_servers: "127.0.0.1:9092", disable_tls: true, authentication: SCRAM-SHA-512, username: u, password: "${ssm:`+secret("scram")+`}"`), ssmtypes.ParameterTypeString)
	put(prefix+"broken", doc("broken", `bootstrap_servers: "127.0.0.1:9092", password: "${ssm:`+root+`broken/gone}"`), ssmtypes.ParameterTypeString)
	// maria's source is the tests' MariaDB (root's password from SSM).
	put(root+"maria/db", "root", ssmtypes.ParameterTypeSecureString)
	put(prefix+"maria", "name: maria\nsource: {type: mysql, url: \"mysql://root:${ssm:"+root+"maria/db}@127.0.0.1:3306\"}\n"+
		"destination: {topic_prefix: maria, bootstrap_servers: \"127.0.0.1:9092\", disable_tls: true}\n", ssmtypes.ParameterTypeString)
	// Reads shop's secret, then the function's environment.
	put(prefix+"thief", doc("thief", `bootstrap_servers: "${ssm:`+secret("shop")+`}:9092", disable_tls: true`), ssmtypes.ParameterTypeString)
	t.Setenv("CT_TEST_ENV_SECRET", "envCANARY77")
	put(prefix+"envy", doc("envy", `bootstrap_servers: "${env:CT_TEST_ENV_SECRET}:9092", disable_tls: true`), ssmtypes.ParameterTypeString)
	// Its own secret as the broker host: the report would show it.
	put(prefix+"echo", doc("echo", `bootstrap_servers: "${ssm:`+secret("echo")+`}.invalid:9092", disable_tls: true`), ssmtypes.ParameterTypeString)
	put(root+"lister/brokers", "kafkaCANARY-list.invalid:9092", ssmtypes.ParameterTypeSecureString)
	put(prefix+"lister", doc("lister", `bootstrap_servers: "${ssm:`+root+`lister/brokers}", disable_tls: true`), ssmtypes.ParameterTypeString)

	var logs bytes.Buffer
	configs := pipelines.New(client, prefix, root, 0)
	guarded := NewHandler(configs, slog.New(slog.NewJSONHandler(&logs, nil)))
	// The tests' databases listen on 127.0.0.1 without TLS: a password
	// may go there in plaintext (targets_test.go shows it goes nowhere else).
	guarded.targets.plaintextLoopback = true
	// The tests' Kafka listens on 127.0.0.1, which the functions' dialer
	// refuses; this handler may reach loopback (never metadata).
	h := NewHandler(configs, slog.New(slog.NewJSONHandler(&logs, nil)))
	h.dial = dialguard.Dialer(dialTimeout, true)
	h.targets.plaintextLoopback = true
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
	report := func(body string) response {
		var r response
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	// sourceCheck is the source check called name in body's report.
	sourceCheck := func(body, name string) source.Check {
		t.Helper()
		for _, c := range report(body).Source {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("no source check %q: %s", name, body)
		return source.Check{}
	}

	// The sample itself, unchanged, names pipeline "shop".
	code, body := call("shop", nil)
	if r := report(body); code != 200 || !r.OK || len(r.Brokers) == 0 || !r.Brokers[0].Reachable {
		t.Fatalf("shop: %d %s", code, body)
	}
	// The same source lines as `tributary test-connection` (pkg/conntest).
	if c := sourceCheck(body, "listed tables"); !c.OK || !strings.Contains(c.Detail, "1 tables would be captured") {
		t.Errorf("shop: listed tables: %+v", c)
	}
	for _, key := range []string{`"ok":true`, `"brokers":[{"id":`, `"host":"`, `"port":`, `"reachable":true`, `"checks":[`, `"source":[{"name":"source connection","ok":true`} {
		if !strings.Contains(body, key) {
			t.Errorf("shop: response lacks %s: %s", key, body)
		}
	}
	t.Logf("shop: %s", body)
	mcode, mbody := call("maria", nil)
	t.Logf("maria: %s", mbody)
	for _, name := range []string{"source connection", "log_bin", "binlog_format", "replication grants"} {
		if c := sourceCheck(mbody, name); mcode != 200 || !c.OK {
			t.Errorf("maria: source check %s failed: %+v", name, c)
		}
	}
	// The source's checks, as `tributary test-connection --json` gives
	// them; the password's value ("postgres", also the user name here) is
	// scrubbed like any resolved value.
	for _, name := range []string{"source connection", "wal_level", "replication grant", "publication", "replication slot"} {
		if c := sourceCheck(body, name); !c.OK {
			t.Errorf("shop: source check %s failed: %+v", name, c)
		}
	}
	if d := sourceCheck(body, "source connection").Detail; !strings.Contains(d, "signed in to PostgreSQL at 127.0.0.1:5432") || strings.Contains(d, "as postgres") {
		t.Errorf("shop: source connection detail %q", d)
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
	if code, body := call("broken", nil); code != 400 || !strings.Contains(body, "destination.password: SSM parameter "+root+"broken/gone does not exist") {
		t.Errorf("broken: %d %s", code, body)
	}

	start := time.Now()
	code, body = call("imds", nil)
	if r := report(body); code != 200 || r.OK || !strings.Contains(body, "169.254.169.254") ||
		!strings.Contains(body, "address refused") || time.Since(start) > 10*time.Second {
		t.Errorf("imds: %d in %v: %s", code, time.Since(start), body)
	}

	// A SASL password is not sent to a listener without TLS.
	code, body = call("scram", nil)
	if code != 400 || !strings.Contains(body, "destination.disable_tls: the connection test sends a SASL password only over TLS") {
		t.Errorf("scram against a plaintext listener: %d %s", code, body)
	}
	// The source refuses the canary as a password: ok is false even
	// where Kafka passed, and the failed line does not show the password
	// (call checks that).
	code, body = call("echo", nil)
	if c := sourceCheck(body, "source connection"); code != 200 || report(body).OK || c.OK || c.Fix == "" {
		t.Errorf("echo: a source that refuses the sign-in: %d %s", code, body)
	}
	if code, body := call("thief", nil); code != 400 || !strings.Contains(body, "parameter "+secret("shop")+" is outside "+root+"thief/") {
		t.Errorf("thief read another pipeline's secret: %d %s", code, body)
	}
	if code, body := call("envy", nil); code != 400 || !strings.Contains(body, "${env:CT_TEST_ENV_SECRET}: environment references are not allowed here") {
		t.Errorf("envy read the function's environment: %d %s", code, body)
	}
	for _, name := range []string{"echo", "lister"} {
		if code, body := call(name, nil); code != 200 { // call fails the test on CANARY in the body
			t.Errorf("%s: %d %s", name, code, body)
		}
	}

	// The functions' own dialer refuses loopback, where the runtime API is.
	h = guarded
	code, body = call("shop", nil)
	if r := report(body); code != 200 || r.OK || !strings.Contains(body, "loopback") {
		t.Errorf("loopback reached through the guarded dialer: %d %s", code, body)
	}
	t.Logf("shop through the guarded dialer: %s", body)
	// go-mysql dials through the guard as pgx does.
	_, mbody = call("maria", nil)
	if c := sourceCheck(mbody, "source connection"); c.OK || !strings.Contains(c.Detail, "address refused") || !strings.Contains(c.Detail, "loopback") {
		t.Errorf("MariaDB on loopback reached through the guarded dialer: %+v", c)
	}
	// The source's database too: refused, in one clear line.
	if c := sourceCheck(body, "source connection"); c.OK || len(report(body).Source) != 1 ||
		!strings.Contains(c.Detail, "address refused") || !strings.Contains(c.Detail, "loopback") {
		t.Errorf("source database on loopback reached through the guarded dialer: %+v", c)
	}

	if strings.Contains(logs.String(), "CANARY") {
		t.Fatalf("logs leak the planted secret:\n%s", logs.String())
	}
}

// TestInvalidDocumentAnswerHoldsNoSecret: someone who may edit a
// pipeline's document and call the API, but not read its SecureStrings,
// puts a reference to its source URL where an enumerated value belongs
// (delivery, snapshot_mode, format keys, …). The API answers 400 naming
// each field and rule; neither the answer nor a log line holds the URL,
// its password or any part the reference read.
func TestInvalidDocumentAnswerHoldsNoSecret(t *testing.T) {
	client, root, prefix, put := ssmRoot(t, "ct-")
	const password = "s3cretDBpassw0rdCANARY"
	put(root+"shop/source-url", "postgres://tributary:"+password+"@db.example.com:5432/shop", ssmtypes.ParameterTypeSecureString)
	ref := "'${ssm:" + root + "shop/source-url}'"
	put(prefix+"shop", "name: shop\n"+
		"source: {type: postgres, url: "+ref+", snapshot_mode: "+ref+"}\n"+
		"destination: {bootstrap_servers: '127.0.0.1:9092', topic_prefix: shop, delete_mode: "+ref+"}\n"+
		"delivery: "+ref+"\n"+
		"transactions: {max_interval: "+ref+", offsets_topic: "+ref+"}\n"+
		"format: {decimal_handling: "+ref+", time_precision: "+ref+", binary_handling: "+ref+"}\n",
		ssmtypes.ParameterTypeString)

	var logs bytes.Buffer
	h := NewHandler(pipelines.New(client, prefix, root, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	req := sampleRequest(t) // names pipeline shop
	res, err := h.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var body errorBody
	if err := json.Unmarshal([]byte(res.Body), &body); err != nil || res.StatusCode != 400 {
		t.Fatalf("%d %s (%v)", res.StatusCode, res.Body, err)
	}
	for _, field := range []string{"delivery", "source.snapshot_mode", "destination.delete_mode", "transactions.max_interval",
		"transactions.offsets_topic", "format.decimal_handling", "format.time_precision", "format.binary_handling"} {
		found := false
		for _, p := range body.Problems {
			found = found || strings.HasPrefix(p, field+": ")
		}
		if !found {
			t.Errorf("%s is not named: %s", field, res.Body)
		}
	}
	for _, leak := range []string{"CANARY", "s3cret", "db.example.com", "tributary:"} {
		if strings.Contains(res.Body, leak) {
			t.Errorf("the answer holds the secret (%s): %s", leak, res.Body)
		}
		if strings.Contains(logs.String(), leak) {
			t.Errorf("the logs hold the secret (%s): %s", leak, logs.String())
		}
	}
	t.Logf("answer: %s", res.Body)
}

// TestReservedPipelineName: a pipeline named pipelines would have
// <root>pipelines/, where every document lives, as its secrets; the
// function refuses it before reading any reference.
func TestReservedPipelineName(t *testing.T) {
	client := ssm.NewFromConfig(awstest.Env(t))
	root := "/" + awstest.Name("ct-") + "/"
	prefix := root + "pipelines/"
	for name, doc := range map[string]string{
		prefix + "billing":   "name: billing\nsource: {type: postgres, url: 'postgres://u:billingCANARYpw@127.0.0.1:5432/db'}\ndestination: {bootstrap_servers: '127.0.0.1:9092', topic_prefix: billing}\n",
		prefix + "pipelines": "name: pipelines\nsource: {type: postgres, url: 'postgres://u@127.0.0.1:5432/db'}\ndestination: {bootstrap_servers: '${ssm:" + prefix + "billing}', topic_prefix: x}\n",
	} {
		if _, err := client.PutParameter(context.Background(), &ssm.PutParameterInput{Name: aws.String(name),
			Value: aws.String(doc), Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	h := NewHandler(pipelines.New(client, prefix, root, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	req := sampleRequest(t)
	req.RawPath = "/pipelines/pipelines/connection-test"
	req.RequestContext.HTTP.Path = req.RawPath
	req.PathParameters = map[string]string{"name": "pipelines"}
	res, err := h.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 400 || !strings.Contains(res.Body, "name: pipelines is reserved") || strings.Contains(res.Body+logs.String(), "CANARY") {
		t.Fatalf("%d %s\nlogs: %s", res.StatusCode, res.Body, logs.String())
	}
}

// ssmRoot makes a parameter root of its own in the emulator for one test:
// the client, the root ("/<name><unique>/"), the documents' prefix under
// it, and put, which writes a parameter there.
func ssmRoot(t *testing.T, name string) (client *ssm.Client, root, prefix string, put func(name, value string, typ ssmtypes.ParameterType)) {
	client = ssm.NewFromConfig(awstest.Env(t))
	root = "/" + awstest.Name(name) + "/"
	put = func(name, value string, typ ssmtypes.ParameterType) {
		t.Helper()
		if _, err := client.PutParameter(context.Background(), &ssm.PutParameterInput{Name: aws.String(name),
			Value: aws.String(value), Type: typ, Overwrite: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	return client, root, root + "pipelines/", put
}
