package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// TestKafkaOversizedRowSkipped: with message_compression gzip, a 700 KiB
// compressible value is gzipped and published with
// tributary-compression: gzip, while a 2 MiB incompressible row is skipped
// with a signed row.skipped webhook; the rows around it arrive. A second
// run without a webhook URL records the event in the local file. On every
// source.
func TestKafkaOversizedRowSkipped(t *testing.T) {
	forEachBackend(t, "size", oversizedRowSkipped)
}

func oversizedRowSkipped(t *testing.T, b backend) {
	e := b.env()
	createTables(t, b, "docs")
	rnd := make([]byte, 3<<19) // 1.5 MiB random → 2 MiB base64
	rand.Read(rnd)
	big := base64.StdEncoding.EncodeToString(rnd)
	compressible := strings.Repeat("tributary ", 700<<10/10) // 700 KiB
	mustExecOn(t, b, `INSERT INTO docs (k, seq, v, big) VALUES (1, 1, 'small', NULL), (2, 2, NULL, '`+big+`'), (3, 3, NULL, '`+compressible+`'), (4, 4, 'after', NULL)`)

	const secret = "whsec_dGVzdC1zZWNyZXQtY2FuYXJ5LTQy" // "test-secret-canary-42"
	var mu sync.Mutex
	var events []webhook.RowSkipped
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body, time.Now(), time.Minute); err != nil {
			t.Errorf("webhook does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev webhook.RowSkipped
		json.Unmarshal(body, &ev)
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}))
	defer srv.Close()

	cfg := b.config(nil, "  message_compression: gzip\n")
	appendConfig(t, cfg, "webhooks:\n  row_skipped_url: "+srv.URL+"/hooks\n  signing_secret: "+secret+"\n")
	topic := b.topic("docs")
	p := e.start("run", "--config", cfg)
	waitOrDump(t, p, 60*time.Second, "3 messages", func() bool { return topicEnd(topic) >= 3 })
	mustExecOn(t, b, `INSERT INTO docs (k, seq, v) VALUES (5, 5, 'streamed')`)
	waitOrDump(t, p, 30*time.Second, "4 messages", func() bool { return topicEnd(topic) >= 4 })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	if strings.Contains(p.out.String(), "test-secret-canary") || strings.Contains(p.out.String(), secret) {
		t.Fatal("the signing secret appears in the log")
	}

	ids := map[float64]*kgo.Record{}
	for _, r := range readRaw(t, topic) {
		var k struct{ Payload map[string]any }
		json.Unmarshal(r.Key, &k)
		ids[k.Payload["k"].(float64)] = r
	}
	if len(ids) != 4 || ids[2] != nil || ids[1] == nil || ids[3] == nil || ids[4] == nil || ids[5] == nil {
		t.Fatalf("keys on the topic: %v, want 1, 3, 4, 5", keys(ids))
	}
	gz := ids[3]
	if header(gz, "tributary-compression") != "gzip" || header(ids[1], "tributary-compression") != "" {
		t.Fatalf("compression headers: 3=%q 1=%q", header(gz, "tributary-compression"), header(ids[1], "tributary-compression"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Value))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	var v struct {
		Payload struct{ After map[string]any }
	}
	if err := json.Unmarshal(plain, &v); err != nil || v.Payload.After["big"] != compressible {
		t.Fatalf("gzipped value does not round-trip (%d bytes gzipped, %d plain): %v", len(gz.Value), len(plain), err)
	}

	mu.Lock()
	if len(events) != 1 {
		t.Fatalf("%d row.skipped webhooks, want 1: %+v", len(events), events)
	}
	ev := events[0]
	mu.Unlock()
	if ev.Type != "row.skipped" || ev.Table != b.tableID("docs") || ev.Topic != topic || ev.Pipeline != e.name ||
		ev.PrimaryKey["k"] != float64(2) || ev.SizeBytes <= 1<<20 || ev.LimitBytes != 1<<20 || ev.EventID == "" || ev.Reason == "" {
		t.Fatalf("event %+v", ev)
	}

	// Without a URL: the local file beside the checkpoints, and a log line.
	mustExecOn(t, b, `INSERT INTO docs (k, seq, big) VALUES (6, 6, '`+big+`')`)
	mustExecOn(t, b, `INSERT INTO docs (k, seq, v) VALUES (7, 7, 'last')`)
	cfg = b.config(nil, "")
	p = e.start("run", "--config", cfg)
	waitOrDump(t, p, 60*time.Second, "row 7", func() bool { return topicEnd(topic) >= 5 })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	lines := e.skippedLines(t)
	if len(lines) != 1 || lines[0].PrimaryKey["k"] != float64(6) || !strings.Contains(p.out.String(), "row skipped") {
		t.Fatalf("file events %+v; output:\n%s", lines, p.out)
	}
}

func appendConfig(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(text)
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func keys(m map[float64]*kgo.Record) []float64 {
	var ks []float64
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// readRaw reads every record of topic (PLAINTEXT listener) as kgo records.
func readRaw(t *testing.T, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := topicEnd(topic)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(16<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for int64(len(recs)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %d of %d records", topic, len(recs), want)
		}
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	return recs
}

// alnum returns n random letters and digits: incompressible for LZ4 (no
// repeats to match) and written into JSON as they are (no escapes), so a
// value grows byte for byte with it.
func alnum(n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}

// batchSizeOf is the size the broker counts for r alone in a batch, as
// Tributary's check computes it.
func batchSizeOf(r *kgo.Record) int {
	return kafka.BatchSize(r)
}

// createTopicWith creates a one-partition topic with max.message.bytes set.
func createTopicWith(t *testing.T, topic string, maxMessageBytes int) {
	t.Helper()
	createTopicConfig(t, topic, 1, maxMessageBytes)
}

// skippedLines reads the row.skipped events of the local file.
func (e *env) skippedLines(t *testing.T) []webhook.RowSkipped {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, "checkpoints", e.name+".row-skipped.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []webhook.RowSkipped
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var ev webhook.RowSkipped
		if len(line) > 0 && json.Unmarshal(line, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// TestKafkaExactSizeLimit: the size check counts what the broker counts
// (key, value, headers, record and batch overhead). On a topic whose
// max.message.bytes equals max_message_bytes, an incompressible row 16
// bytes under the limit is published and one 16 bytes over is skipped; the
// old check (key + value only) let the second through to a broker refusal
// that failed the pipeline at every restart.
func TestKafkaExactSizeLimit(t *testing.T) {
	e := newEnv(t, "exact")
	const limit = 1 << 20
	topic := e.prefix + ".public.docs"
	createTopicWith(t, topic, limit)
	e.exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	const probeLen = 4000
	e.exec(`INSERT INTO docs VALUES (1, $1)`, alnum(probeLen))
	cfg := e.writeConfig(fmt.Sprintf("  max_message_bytes: %d\n", limit))
	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "the probe row", func() bool { return topicEnd(topic) >= 1 })
	probe := readRaw(t, topic)[0]
	// A body of n bytes makes a batch of about probe + (n - probeLen)
	// bytes; the margin of 16 covers varint lengths growing by a byte
	// and event ids of another length.
	base := batchSizeOf(probe) - probeLen
	under, over := limit-16-base, limit+16-base
	e.exec(`INSERT INTO docs VALUES (2, $1)`, alnum(under))
	e.exec(`INSERT INTO docs VALUES (3, $1)`, alnum(over))
	e.exec(`INSERT INTO docs VALUES (4, 'after')`)
	waitFor(t, 60*time.Second, "rows 2 and 4", func() bool { return topicEnd(topic) >= 3 || p.exited() })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	recs := readRaw(t, topic)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3 (rows 1, 2, 4); output:\n%s", len(recs), p.out)
	}
	if n := batchSizeOf(recs[1]); n > limit || n < limit-32 {
		t.Fatalf("row 2 is %d bytes as the broker counts them, want just under %d", n, limit)
	}
	skipped := e.skippedLines(t)
	if len(skipped) != 1 || skipped[0].PrimaryKey["id"] != float64(3) || skipped[0].SizeBytes <= limit || skipped[0].SizeBytes > limit+32 ||
		!strings.Contains(skipped[0].Reason, "over destination.max_message_bytes") {
		t.Fatalf("row.skipped events %+v, want row 3 just over %d", skipped, limit)
	}
}

// TestKafkaBrokerRefusedTooLarge: a topic whose max.message.bytes (256 KiB)
// is below max_message_bytes (1 MiB) refuses a 600 KiB row; it is skipped
// as an oversized row with a reason naming the topic's limit (and that
// limit as limit_bytes), not retried for ever as a poison pill, and the
// rows around it arrive.
func TestKafkaBrokerRefusedTooLarge(t *testing.T) {
	e := newEnv(t, "refused")
	topic := e.prefix + ".public.docs"
	createTopicWith(t, topic, 256<<10)
	e.exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.exec(`INSERT INTO docs VALUES (1, 'before'), (2, $1), (3, 'after')`, alnum(600<<10))
	p := e.start("run", "--config", e.writeConfig(""))
	waitFor(t, 60*time.Second, "rows 1 and 3", func() bool { return topicEnd(topic) >= 2 || p.exited() })
	e.exec(`INSERT INTO docs VALUES (4, 'streamed')`)
	waitFor(t, 60*time.Second, "row 4", func() bool { return topicEnd(topic) >= 3 || p.exited() })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	skipped := e.skippedLines(t)
	if len(skipped) != 1 || skipped[0].PrimaryKey["id"] != float64(2) || skipped[0].LimitBytes != 256<<10 ||
		!strings.Contains(skipped[0].Reason, fmt.Sprintf("over max.message.bytes %d of topic %s", 256<<10, topic)) {
		t.Fatalf("row.skipped events %+v; output:\n%s", skipped, p.out)
	}
	if n := len(readRaw(t, topic)); n != 3 {
		t.Fatalf("%d records, want rows 1, 3 and 4", n)
	}
}

// TestKafkaLargeLimit: with max_message_bytes 20 MiB and a topic that
// takes it, an 18 MiB row is published (franz-go's batch cap follows the
// limit; before, the 16 MiB producer buffer and 1 MiB batches failed it).
func TestKafkaLargeLimit(t *testing.T) {
	e := newEnv(t, "large")
	const limit = 20 << 20
	topic := e.prefix + ".public.docs"
	createTopicWith(t, topic, limit)
	e.exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	body := alnum(18 << 20)
	e.exec(`INSERT INTO docs VALUES (1, $1), (2, 'after')`, body)
	p := e.start("run", "--config", e.writeConfig(fmt.Sprintf("  max_message_bytes: %d\n", limit)))
	waitFor(t, 120*time.Second, "both rows", func() bool { return topicEnd(topic) >= 2 || p.exited() })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	recs := readRaw(t, topic)
	if len(recs) != 2 || len(recs[0].Value) < 18<<20 || !bytes.Contains(recs[0].Value, []byte(body[:64])) {
		t.Fatalf("%d records (first %d bytes); output:\n%s", len(recs), len(recs[0].Value), p.out)
	}
	if s := e.skippedLines(t); len(s) != 0 {
		t.Fatalf("skipped %+v", s)
	}
}
