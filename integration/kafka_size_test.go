package integration

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
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

	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// TestKafkaOversizedRowSkipped: with message_compression gzip, a 700 KiB
// compressible value is gzipped and published with
// tributary-compression: gzip, while a 2 MiB incompressible row is skipped
// with a signed row.skipped webhook; the rows around it arrive. A second
// run without a webhook URL records the event in the local file.
func TestKafkaOversizedRowSkipped(t *testing.T) {
	e := newEnv(t, "size")
	e.exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`) // no TOAST compression: sizes stay as written
	rnd := make([]byte, 3<<19)                                        // 1.5 MiB random → 2 MiB base64
	rand.Read(rnd)
	big := base64.StdEncoding.EncodeToString(rnd)
	compressible := strings.Repeat("tributary ", 700<<10/10) // 700 KiB
	e.exec(`INSERT INTO docs VALUES (1, 'small'), (2, $1), (3, $2), (4, 'after')`, big, compressible)

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

	cfg := e.writeConfig("  message_compression: gzip\n")
	appendConfig(t, cfg, "webhooks:\n  row_skipped_url: "+srv.URL+"/hooks\n  signing_secret: "+secret+"\n")
	topic := e.prefix + ".public.docs"
	p := e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "3 messages", func() bool { return topicEnd(topic) >= 3 })
	e.exec(`INSERT INTO docs VALUES (5, 'streamed')`)
	waitFor(t, 30*time.Second, "4 messages", func() bool { return topicEnd(topic) >= 4 })
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
		ids[k.Payload["id"].(float64)] = r
	}
	if len(ids) != 4 || ids[2] != nil || ids[1] == nil || ids[3] == nil || ids[4] == nil || ids[5] == nil {
		t.Fatalf("ids on the topic: %v, want 1, 3, 4, 5", keys(ids))
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
	if err := json.Unmarshal(plain, &v); err != nil || v.Payload.After["body"] != compressible {
		t.Fatalf("gzipped value does not round-trip (%d bytes gzipped, %d plain): %v", len(gz.Value), len(plain), err)
	}

	mu.Lock()
	if len(events) != 1 {
		t.Fatalf("%d row.skipped webhooks, want 1: %+v", len(events), events)
	}
	ev := events[0]
	mu.Unlock()
	if ev.Type != "row.skipped" || ev.Table != "public.docs" || ev.Topic != topic || ev.Pipeline != e.name ||
		ev.PrimaryKey["id"] != float64(2) || ev.SizeBytes <= 1<<20 || ev.LimitBytes != 1<<20 || ev.EventID == "" || ev.Reason == "" {
		t.Fatalf("event %+v", ev)
	}

	// Without a URL: the local file beside the checkpoints, and a log line.
	e.exec(`INSERT INTO docs VALUES (6, $1), (7, 'last')`, big)
	cfg = e.writeConfig("")
	p = e.start("run", "--config", cfg)
	waitFor(t, 60*time.Second, "row 7", func() bool { return topicEnd(topic) >= 5 })
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.out)
	}
	f, err := os.Open(filepath.Join(e.dir, "checkpoints", e.name+".row-skipped.jsonl"))
	if err != nil {
		t.Fatalf("row-skipped file: %v; output:\n%s", err, p.out)
	}
	defer f.Close()
	var lines []webhook.RowSkipped
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var ev webhook.RowSkipped
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, ev)
	}
	if len(lines) != 1 || lines[0].PrimaryKey["id"] != float64(6) || !strings.Contains(p.out.String(), "row skipped") {
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
