package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// The planted secrets: neither may appear in any log line or error.
var (
	signingKey    = []byte("CANARY-signing-key-0123456789abcdef")
	signingSecret = "whsec_" + base64.StdEncoding.EncodeToString(signingKey)
	urlToken      = "CANARYurltoken77"
)

// receiver is a webhook endpoint that verifies Standard Webhooks
// signatures on its own (HMAC-SHA256 over "id.timestamp.body" with the
// base64 key after "whsec_"), refuses stale timestamps, and records what
// it accepted.
type receiver struct {
	mu       sync.Mutex
	accepted map[string][]byte // webhook-id → body
	last     *http.Request
	lastBody []byte
	failIDs  map[string]bool // answered 500
}

const tolerance = 5 * time.Minute

func (rc *receiver) verify(r *http.Request, body []byte) int {
	if r.URL.Query().Get("token") != urlToken {
		return http.StatusForbidden
	}
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || id == "" {
		return http.StatusBadRequest
	}
	if d := time.Since(time.Unix(secs, 0)); d > tolerance || d < -tolerance {
		return http.StatusUnauthorized
	}
	mac := hmac.New(sha256.New, signingKey)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !slices.ContainsFunc(strings.Fields(r.Header.Get("webhook-signature")), func(s string) bool {
		return hmac.Equal([]byte(s), []byte(want))
	}) {
		return http.StatusUnauthorized
	}
	return http.StatusNoContent
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.last, rc.lastBody = r.Clone(context.Background()), body
	code := rc.verify(r, body)
	if code == http.StatusNoContent && rc.failIDs[r.Header.Get("webhook-id")] {
		code = http.StatusInternalServerError
	}
	if code == http.StatusNoContent {
		rc.accepted[r.Header.Get("webhook-id")] = body
	}
	w.WriteHeader(code)
}

// lastDelivery returns the headers and body of the last request.
func (rc *receiver) lastDelivery() (http.Header, []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.last.Header.Clone(), rc.lastBody
}

// replay sends a captured delivery again with its body or timestamp
// changed, as an attacker would, and returns the receiver's status.
func (rc *receiver) replay(t *testing.T, url string, hdr http.Header, body []byte, ts string) int {
	hdr = hdr.Clone()
	if ts != "" {
		hdr.Set("webhook-timestamp", ts)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header = hdr
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func loadEvent(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile("../../events/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// The queues of the sample batch (events/sqs-row-skipped.json), bound to
// their pipelines as infra/dataplane.go binds them.
const sampleQueues = "shop=arn:aws:sqs:us-east-1:123456789012:Tributary-RowSkippedshop0A1B2C3D-Xy7Pq2Lm9Rt4," +
	"billing=arn:aws:sqs:us-east-1:123456789012:Tributary-RowSkippedbilling4E5F6A7B-Hk3Vn8Sd1Wz6"

type world struct {
	handler *Handler
	recv    *receiver
	url     string
	logs    *bytes.Buffer
	ssm     *ssm.Client
	prefix  string
	root    string
}

func putPipeline(t *testing.T, c *ssm.Client, prefix, name, webhookURL string, webhookKeys ...string) {
	t.Helper()
	secretName := strings.TrimSuffix(prefix, "pipelines/") + name + "/webhook-secret"
	doc := "name: " + name + `
source: {type: postgres, url: "postgres://u@127.0.0.1:5432/db"}
destination: {bootstrap_servers: "127.0.0.1:9092", topic_prefix: ` + name + `, disable_tls: true}
webhooks:
  row_skipped_url: "` + webhookURL + `"
  signing_secret: ${ssm:` + secretName + `}
` + strings.Join(webhookKeys, "")
	for _, p := range []struct {
		name, value string
		typ         ssmtypes.ParameterType
	}{{secretName, signingSecret, ssmtypes.ParameterTypeSecureString}, {prefix + name, doc, ssmtypes.ParameterTypeString}} {
		if _, err := c.PutParameter(context.Background(), &ssm.PutParameterInput{Name: aws.String(p.name),
			Value: aws.String(p.value), Type: p.typ, Overwrite: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
}

func newWorld(t *testing.T) *world {
	awsCfg := awstest.Env(t)
	w := &world{recv: &receiver{accepted: map[string][]byte{}, failIDs: map[string]bool{}}, logs: &bytes.Buffer{}}
	srv := httptest.NewServer(w.recv)
	t.Cleanup(srv.Close)
	w.url = srv.URL + "/hooks/tributary?token=" + urlToken
	w.ssm = ssm.NewFromConfig(awsCfg)
	w.root = "/" + awstest.Name("rs-") + "/"
	w.prefix = w.root + "pipelines/"
	putPipeline(t, w.ssm, w.prefix, "shop", w.url)
	queues, err := parseQueues(sampleQueues)
	if err != nil {
		t.Fatal(err)
	}
	w.handler = NewHandler(pipelines.New(w.ssm, w.prefix, w.root, time.Minute), queues, nil, slog.New(slog.NewJSONHandler(w.logs, nil)))
	// The receiver listens on 127.0.0.1, which the functions' dialer
	// refuses; this handler may reach loopback (never metadata).
	w.handler.client.Transport.(*http.Transport).DialContext = dialguard.PublicDialer(5*time.Second, true)
	w.handler.privateClient.Transport.(*http.Transport).DialContext = dialguard.Dialer(5*time.Second, true)
	return w
}

func failedIDs(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	slices.Sort(ids)
	return ids
}

func noSecrets(t *testing.T, label, s string) {
	t.Helper()
	for _, secret := range []string{string(signingKey), signingSecret, urlToken, "CANARY"} {
		if strings.Contains(s, secret) {
			t.Fatalf("%s leaks a secret (%q):\n%s", label, secret, s)
		}
	}
}

// TestReplaySampleBatch replays events/sqs-row-skipped.json: two good
// events for pipeline shop (one of which the receiver refuses with a 500),
// a truncated body, an event for a pipeline with no configuration, one
// naming billing on shop's queue and one from a queue of no pipeline.
// Only the five failures come back for retry.
func TestReplaySampleBatch(t *testing.T) {
	w := newWorld(t)
	var batch events.SQSEvent
	loadEvent(t, "sqs-row-skipped.json", &batch)
	w.recv.failIDs["shop-0/16B3748-2"] = true

	resp, err := w.handler.Handle(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range batch.Records[1:] {
		want = append(want, r.MessageId)
	}
	if got := failedIDs(resp); !slices.Equal(got, want) {
		t.Fatalf("failures %v, want %v\nlogs:\n%s", got, want, w.logs)
	}
	body, ok := w.recv.accepted["shop-0/16B3748-1"]
	if !ok || string(body) != batch.Records[0].Body || len(w.recv.accepted) != 1 {
		t.Fatalf("event 1 not delivered as queued, or others delivered: %q, %d", body, len(w.recv.accepted))
	}
	for _, want := range []string{"answered 500", "truncated", "SSM parameter " + w.prefix + "billing does not exist",
		"event names pipeline billing but came from the queue of pipeline shop: not signed",
		"message from queue arn:aws:sqs:us-east-1:123456789012:tributary-row-skipped, which ROW_SKIPPED_QUEUES binds to no pipeline"} {
		if !strings.Contains(w.logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, w.logs)
		}
	}

	// The receiver's checks hold: a changed body or a stale (even
	// re-sent) timestamp is refused.
	resp, _ = w.handler.Handle(context.Background(), events.SQSEvent{Records: batch.Records[:1]})
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("redelivery failed: %v\n%s", resp, w.logs)
	}
	hdr, body := w.recv.lastDelivery()
	if err := webhook.Verify(signingSecret, hdr, body, time.Now(), tolerance); err != nil {
		t.Errorf("webhook.Verify refuses the delivery: %v", err)
	}
	tampered := bytes.Replace(body, []byte(`"id":1042`), []byte(`"id":1043`), 1)
	if code := w.recv.replay(t, w.url, hdr, tampered, ""); code != http.StatusUnauthorized {
		t.Errorf("tampered body: %d", code)
	}
	stale := strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	if code := w.recv.replay(t, w.url, hdr, body, stale); code != http.StatusUnauthorized {
		t.Errorf("stale timestamp: %d", code)
	}
	if code := w.recv.replay(t, w.url, hdr, body, ""); code != http.StatusNoContent {
		t.Errorf("untouched replay within tolerance: %d", code)
	}

	// A stale signature from the handler itself is refused too.
	w.handler.now = func() time.Time { return time.Now().Add(-time.Hour) }
	resp, _ = w.handler.Handle(context.Background(), events.SQSEvent{Records: batch.Records[:1]})
	if len(resp.BatchItemFailures) != 1 || !strings.Contains(w.logs.String(), "answered 401") {
		t.Errorf("stale send accepted: %v", resp)
	}
	noSecrets(t, "logs", w.logs.String())
}

// queue is a row-skipped queue in the emulator.
type queue struct{ url, arn string }

// newQueue makes a queue; with dlq, failed messages move there after
// receiveLimit receives, as the redrive policy of infra/dataplane.go moves
// them after maxReceiveCount.
func newQueue(t *testing.T, client *sqs.Client, dlq *queue, receiveLimit int) queue {
	t.Helper()
	ctx := context.Background()
	in := &sqs.CreateQueueInput{QueueName: aws.String(awstest.Name("rs-"))}
	if dlq != nil {
		in.Attributes = map[string]string{"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"%d"}`, dlq.arn, receiveLimit)}
	}
	q, err := client.CreateQueue(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })
	a, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return queue{url: *q.QueueUrl, arn: a.Attributes["QueueArn"]}
}

// receive takes what q holds, as Lambda's poller does, into an SQS event.
func receive(t *testing.T, client *sqs.Client, q queue) (events.SQSEvent, map[string]string) {
	t.Helper()
	out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	var batch events.SQSEvent
	handles := map[string]string{}
	for _, m := range out.Messages {
		batch.Records = append(batch.Records, events.SQSMessage{MessageId: *m.MessageId, Body: *m.Body, EventSource: "aws:sqs", EventSourceARN: q.arn})
		handles[*m.MessageId] = *m.ReceiptHandle
	}
	return batch, handles
}

func skippedEvent(id, pipeline string) webhook.RowSkipped {
	return webhook.RowSkipped{EventID: id, Pipeline: pipeline, Table: "public.orders", PrimaryKey: map[string]any{"id": 9}, Reason: "too large", Time: time.Now().UTC()}
}

// TestQueueToWebhook: the tasks' SQS notifiers queue events in the
// emulator, each on its pipeline's queue; the function receives them from
// there and the receiver gets them. A webhook URL pointing at instance
// metadata is refused at dial time.
func TestQueueToWebhook(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	client := sqs.NewFromConfig(awstest.Env(t))
	putPipeline(t, w.ssm, w.prefix, "imds", "https://169.254.169.254/latest/meta-data/?token="+urlToken)
	shopQ, imdsQ := newQueue(t, client, nil, 0), newQueue(t, client, nil, 0)
	w.handler.queues = map[string]string{shopQ.arn: "shop", imdsQ.arn: "imds"}

	for q, ev := range map[queue]webhook.RowSkipped{shopQ: skippedEvent("e2e-1", "shop"), imdsQ: skippedEvent("e2e-2", "imds")} {
		if err := webhook.NewSQSNotifier(client, q.url).Notify(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	// A standard queue delivers at least once: the SDK retrying a send
	// whose first attempt landed queues the event twice (CI saw it). The
	// same event_id is its webhook-id, on which a receiver dedupes; the
	// test keeps one of each.
	var batch events.SQSEvent
	bodies := map[string]bool{}
	for _, q := range []queue{shopQ, imdsQ} {
		b, _ := receive(t, client, q)
		for _, r := range b.Records {
			if !bodies[r.Body] {
				bodies[r.Body] = true
				batch.Records = append(batch.Records, r)
			}
		}
	}
	if len(batch.Records) != 2 {
		t.Fatalf("received %d messages, want 2", len(batch.Records))
	}
	start := time.Now()
	resp, err := w.handler.Handle(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || w.recv.accepted["e2e-1"] == nil {
		t.Fatalf("failures %v, accepted %v\n%s", resp.BatchItemFailures, w.recv.accepted, w.logs)
	}
	if !strings.Contains(w.logs.String(), "address refused: 169.254.169.254 is link-local") || time.Since(start) > 5*time.Second {
		t.Fatalf("metadata address not refused at once:\n%s", w.logs)
	}
	if !strings.Contains(w.logs.String(), "webhook https://169.254.169.254: ") || strings.Contains(w.logs.String(), "meta-data") {
		t.Errorf("URL not shown as scheme and host only:\n%s", w.logs)
	}
	noSecrets(t, "logs", w.logs.String())
}

// TestForgedEventNotSigned: pipeline shop's task queues an event naming
// pipeline billing on its own queue, the only one its role may send to.
// The function signs nothing for billing (billing's webhook gets nothing),
// reports the message failed on every receive, and SQS moves it to the
// DLQ at the receive limit: kept, not retried forever, not dropped. The
// same event on billing's own queue is delivered.
func TestForgedEventNotSigned(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	client := sqs.NewFromConfig(awstest.Env(t))
	billingRecv := &receiver{accepted: map[string][]byte{}, failIDs: map[string]bool{}}
	srv := httptest.NewServer(billingRecv)
	t.Cleanup(srv.Close)
	putPipeline(t, w.ssm, w.prefix, "billing", srv.URL+"/billing?token="+urlToken)
	// infra/dataplane.go's limit is maxReceiveCount (5); 2 keeps the test short.
	const receiveLimit = 2
	dlq := newQueue(t, client, nil, 0)
	shopQ, billingQ := newQueue(t, client, &dlq, receiveLimit), newQueue(t, client, &dlq, receiveLimit)
	w.handler.queues = map[string]string{shopQ.arn: "shop", billingQ.arn: "billing"}

	forged := skippedEvent("billing-forged-1", "billing")
	if err := webhook.NewSQSNotifier(client, shopQ.url).Notify(ctx, forged); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= receiveLimit; i++ {
		batch, handles := receive(t, client, shopQ)
		if len(batch.Records) != 1 {
			t.Fatalf("receive %d: %d messages, want the forged one", i, len(batch.Records))
		}
		resp, err := w.handler.Handle(ctx, batch)
		if err != nil || len(resp.BatchItemFailures) != 1 {
			t.Fatalf("receive %d: %v, failures %v, want the message reported failed\n%s", i, err, resp.BatchItemFailures, w.logs)
		}
		// Lambda leaves a failed message for its visibility timeout; the
		// test makes it visible at once.
		if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(shopQ.url),
			ReceiptHandle: aws.String(handles[batch.Records[0].MessageId]), VisibilityTimeout: 0}); err != nil {
			t.Fatal(err)
		}
	}
	if len(billingRecv.accepted) != 0 || len(w.recv.accepted) != 0 || billingRecv.last != nil {
		t.Fatalf("the forged event reached a webhook: billing %v, shop %v", billingRecv.accepted, w.recv.accepted)
	}
	if !strings.Contains(w.logs.String(), "event names pipeline billing but came from the queue of pipeline shop: not signed") {
		t.Errorf("logs do not say why:\n%s", w.logs)
	}
	if batch, _ := receive(t, client, shopQ); len(batch.Records) != 0 {
		t.Fatalf("the forged event is still retried after %d receives", receiveLimit)
	}
	dead, _ := receive(t, client, dlq)
	if len(dead.Records) != 1 || !strings.Contains(dead.Records[0].Body, `"event_id":"billing-forged-1"`) {
		t.Fatalf("DLQ holds %v, want the forged event", dead.Records)
	}

	if err := webhook.NewSQSNotifier(client, billingQ.url).Notify(ctx, forged); err != nil {
		t.Fatal(err)
	}
	batch, _ := receive(t, client, billingQ)
	if resp, err := w.handler.Handle(ctx, batch); err != nil || len(resp.BatchItemFailures) != 0 || billingRecv.accepted["billing-forged-1"] == nil {
		t.Fatalf("on billing's queue: %v, failures %v, accepted %v\n%s", err, resp.BatchItemFailures, billingRecv.accepted, w.logs)
	}
	noSecrets(t, "logs", w.logs.String())
}

// TestGuardedWebhook: with the functions' own dialer, a webhook on
// loopback (where the Lambda runtime API listens) is refused, and the log
// shows the URL as scheme and host only: a Slack-style path is the token.
func TestGuardedWebhook(t *testing.T) {
	w := newWorld(t)
	putPipeline(t, w.ssm, w.prefix, "slack", strings.Replace(w.url, "/hooks/tributary?token="+urlToken, "/services/T0/B0/CANARYpathtoken", 1))
	const slackQueue = "arn:aws:sqs:us-east-1:123456789012:Tributary-RowSkippedslack"
	guarded := NewHandler(pipelines.New(w.ssm, w.prefix, w.root, 0), map[string]string{slackQueue: "slack"}, nil, slog.New(slog.NewJSONHandler(w.logs, nil)))
	resp, err := guarded.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", EventSource: "aws:sqs", EventSourceARN: slackQueue,
		Body: `{"type":"row.skipped","event_id":"g-1","pipeline":"slack","topic":"slack.public.orders","table":"public.orders",` +
			`"primary_key":{"id":1},"size_bytes":2097152,"limit_bytes":1048576,"reason":"too large","time":"2026-01-01T00:00:00Z"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || len(w.recv.accepted) != 0 {
		t.Fatalf("loopback webhook reached: failures %v, accepted %v\n%s", resp.BatchItemFailures, w.recv.accepted, w.logs)
	}
	origin := strings.SplitN(w.url, "/hooks/", 2)[0]
	if !strings.Contains(w.logs.String(), "webhook "+origin+": ") || !strings.Contains(w.logs.String(), "is loopback") ||
		strings.Contains(w.logs.String(), "/services/") {
		t.Errorf("want the refusal, with the URL as %s only:\n%s", origin, w.logs)
	}
	noSecrets(t, "logs", w.logs.String())
}

// TestPrivateReceiverNeedsOptIn: a webhook at an address that is not
// public (here this machine's 192.0.2.2, as an internal service in the VPC
// would be) is refused at dial time, naming the opt-in; with
// webhooks.allow_private_network: true it is delivered. Loopback and
// metadata stay refused either way (TestGuardedWebhook, TestCheck).
func TestPrivateReceiverNeedsOptIn(t *testing.T) {
	w := newWorld(t)
	ln, err := net.Listen("tcp", "192.0.2.2:0")
	if err != nil {
		t.Skipf("no 192.0.2.2 on this machine: %v", err)
	}
	srv := httptest.NewUnstartedServer(w.recv)
	srv.Listener.Close()
	srv.Listener = ln
	srv.StartTLS()
	t.Cleanup(srv.Close)
	hook := srv.URL + "/hooks/tributary?token=" + urlToken
	// The receiver's certificate is the test server's own, issued to
	// example.com (and loopback).
	tlsConfig := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsConfig.ServerName = "example.com"
	w.handler.privateClient.Transport.(*http.Transport).TLSClientConfig = tlsConfig
	w.handler.client.Transport.(*http.Transport).TLSClientConfig = tlsConfig
	const queueARN = "arn:aws:sqs:us-east-1:123456789012:Tributary-RowSkippedintranet"
	w.handler.queues = map[string]string{queueARN: "intranet"}
	deliver := func(id string) events.SQSEventResponse {
		t.Helper()
		resp, err := w.handler.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: id, EventSource: "aws:sqs", EventSourceARN: queueARN,
			Body: `{"type":"row.skipped","event_id":"` + id + `","pipeline":"intranet","topic":"intranet.public.orders","table":"public.orders",` +
				`"primary_key":{"id":1},"size_bytes":2097152,"limit_bytes":1048576,"reason":"too large","time":"2026-01-01T00:00:00Z"}`}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	putPipeline(t, w.ssm, w.prefix, "intranet", hook)
	w.handler.configs = pipelines.New(w.ssm, w.prefix, w.root, 0)
	if resp := deliver("p-1"); len(resp.BatchItemFailures) != 1 || len(w.recv.accepted) != 0 {
		t.Fatalf("private receiver reached without the opt-in: failures %v, accepted %v\n%s", resp.BatchItemFailures, w.recv.accepted, w.logs)
	}
	if !strings.Contains(w.logs.String(), "192.0.2.2 is reserved for documentation (192.0.2.0/24), not a public address (a receiver inside the network needs webhooks.allow_private_network: true and the pipeline in the stack's privateWebhooks context)") {
		t.Errorf("the refusal does not name the opt-in:\n%s", w.logs)
	}

	// The document alone cannot open the network: whoever edits it is not
	// trusted with the VPC, so the stack must list the pipeline too.
	putPipeline(t, w.ssm, w.prefix, "intranet", hook, "  allow_private_network: true\n")
	if resp := deliver("p-2"); len(resp.BatchItemFailures) != 1 || len(w.recv.accepted) != 0 {
		t.Fatalf("private receiver reached on the document's word alone: failures %v, accepted %v\n%s", resp.BatchItemFailures, w.recv.accepted, w.logs)
	}
	w.handler.private = parsePrivate("shop, intranet")
	if resp := deliver("p-3"); len(resp.BatchItemFailures) != 0 || w.recv.accepted["p-3"] == nil {
		t.Fatalf("private receiver not reached with the stack's and the document's opt-in: failures %v\n%s", resp.BatchItemFailures, w.logs)
	}
	putPipeline(t, w.ssm, w.prefix, "intranet", hook)
	if resp := deliver("p-4"); len(resp.BatchItemFailures) != 1 || w.recv.accepted["p-4"] != nil {
		t.Fatalf("private receiver reached on the stack's word alone: failures %v\n%s", resp.BatchItemFailures, w.logs)
	}
	noSecrets(t, "logs", w.logs.String())
}

// TestDuplicateKeysNotSigned: shop's task queues a body with two
// "pipeline" keys, shop first and billing last (or the other way round).
// Signed as sent, a receiver whose parser keeps the other key would take
// it for billing's event; the function signs and sends neither.
func TestDuplicateKeysNotSigned(t *testing.T) {
	w := newWorld(t)
	const queueARN = "arn:aws:sqs:us-east-1:123456789012:Tributary-RowSkippedshop0A1B2C3D-Xy7Pq2Lm9Rt4"
	body := func(keys string) string {
		return `{"type":"row.skipped","event_id":"dup-1",` + keys + `,"topic":"shop.public.orders","table":"public.orders",` +
			`"primary_key":{"id":1},"size_bytes":2097152,"limit_bytes":1048576,"reason":"too large","time":"2026-01-01T00:00:00Z"}`
	}
	for i, keys := range []string{`"pipeline":"billing","pipeline":"shop"`, `"pipeline":"shop","Pipeline":"billing"`, `"Pipeline":"billing","pipeline":"shop"`} {
		resp, err := w.handler.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{
			MessageId: fmt.Sprint("m", i), EventSource: "aws:sqs", EventSourceARN: queueARN, Body: body(keys)}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.BatchItemFailures) != 1 || w.recv.last != nil {
			t.Fatalf("%s: delivered (failures %v)\n%s", keys, resp.BatchItemFailures, w.logs)
		}
	}
	if !strings.Contains(w.logs.String(), `key \"pipeline\" appears twice`) || !strings.Contains(w.logs.String(), "not one of the event's") {
		t.Errorf("logs do not say why:\n%s", w.logs)
	}
}
