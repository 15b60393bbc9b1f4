package kafka_test

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// TestKafkaOversizedRowSkipped: with message_compression gzip, a 700 KiB
// compressible value is gzipped and published with
// tributary-compression: gzip, while a 2 MiB incompressible row is skipped
// with a signed row.skipped webhook; the rows around it arrive. A second
// run without a webhook URL records the event in the local file. On every
// source.
func TestKafkaOversizedRowSkipped(t *testing.T) {
	itest.ForEachBackend(t, "size", oversizedRowSkipped)
}

func oversizedRowSkipped(t *testing.T, b itest.Backend) {
	e := b.Env()
	itest.CreateTables(t, b, "docs")
	rnd := make([]byte, 3<<19) // 1.5 MiB random → 2 MiB base64
	rand.Read(rnd)
	big := base64.StdEncoding.EncodeToString(rnd)
	compressible := strings.Repeat("tributary ", 700<<10/10) // 700 KiB
	itest.MustExecOn(t, b, `INSERT INTO docs (k, seq, v, big) VALUES (1, 1, 'small', NULL), (2, 2, NULL, '`+big+`'), (3, 3, NULL, '`+compressible+`'), (4, 4, 'after', NULL)`)

	const secret = "whsec_dGVzdC1zZWNyZXQtY2FuYXJ5LTQyLTAxMjM0NTY3ODk=" // "test-secret-canary-42-0123456789"
	hookURL, events := rowSkippedHook(t, secret)

	cfg := b.Config(nil, "  message_compression: gzip\n")
	itest.AppendConfig(t, cfg, "webhooks:\n  row_skipped_url: "+hookURL+"\n  signing_secret: "+secret+"\n")
	topic := b.Topic("docs")
	p := e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "3 messages", func() bool { return itest.TopicEnd(topic) >= 3 })
	itest.MustExecOn(t, b, `INSERT INTO docs (k, seq, v) VALUES (5, 5, 'streamed')`)
	itest.WaitOrDump(t, p, 30*time.Second, "4 messages", func() bool { return itest.TopicEnd(topic) >= 4 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if strings.Contains(p.Out.String(), "test-secret-canary") || strings.Contains(p.Out.String(), secret) {
		t.Fatal("the signing secret appears in the log")
	}

	ids := map[float64]*kgo.Record{}
	for _, r := range itest.ReadRaw(t, topic) {
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

	evs := events()
	if len(evs) != 1 {
		t.Fatalf("%d row.skipped webhooks, want 1: %+v", len(evs), evs)
	}
	ev := evs[0]
	if ev.Type != "row.skipped" || ev.Table != b.TableID("docs") || ev.Topic != topic || ev.Pipeline != e.Name ||
		fmt.Sprint(ev.PrimaryKey["k"]) != "2" || ev.SizeBytes <= 1<<20 || ev.LimitBytes != 1<<20 || ev.EventID == "" || ev.Reason == "" {
		t.Fatalf("event %+v", ev)
	}

	// Without a URL: the local file beside the checkpoints, and a log line.
	itest.MustExecOn(t, b, `INSERT INTO docs (k, seq, big) VALUES (6, 6, '`+big+`')`)
	itest.MustExecOn(t, b, `INSERT INTO docs (k, seq, v) VALUES (7, 7, 'last')`)
	cfg = b.Config(nil, "")
	p = e.Start("run", "--config", cfg)
	itest.WaitOrDump(t, p, 60*time.Second, "row 7", func() bool { return itest.TopicEnd(topic) >= 5 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	lines := e.SkippedLines(t)
	if len(lines) != 1 || lines[0].PrimaryKey["k"] != float64(6) || !strings.Contains(p.Out.String(), "row skipped") {
		t.Fatalf("file events %+v; output:\n%s", lines, p.Out)
	}
}

func keys(m map[float64]*kgo.Record) []float64 {
	var ks []float64
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// createTopicWith creates a one-partition topic with max.message.bytes set.
func createTopicWith(t *testing.T, topic string, maxMessageBytes int) {
	t.Helper()
	createTopicConfig(t, topic, 1, maxMessageBytes)
}

// TestKafkaExactSizeLimit: the size check counts what the broker counts
// (key, value, headers, record and batch overhead). On a topic whose
// max.message.bytes equals max_message_bytes, an incompressible row 16
// bytes under the limit is published and one 16 bytes over is skipped; the
// old check (key + value only) let the second through to a broker refusal
// that failed the pipeline at every restart.
func TestKafkaExactSizeLimit(t *testing.T) {
	e := itest.NewEnv(t, "exact")
	const limit = 1 << 20
	topic := e.Prefix + ".public.docs"
	createTopicWith(t, topic, limit)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	const probeLen = 4000
	cfg := e.WriteConfig(fmt.Sprintf("  max_message_bytes: %d\n", limit))
	p := e.Start("run", "--config", cfg)
	// The probe is streamed like the rows it measures for: a streamed
	// event's source block (its sequence, for one) is longer than a
	// backfilled row's.
	p.WaitFor(t, 60*time.Second, "the empty backfill", func() bool { return strings.Contains(p.Out.String(), "backfill: table done") })
	e.Exec(`INSERT INTO docs VALUES (1, $1)`, itest.Alnum(probeLen))
	itest.WaitFor(t, 60*time.Second, "the probe row", func() bool { return itest.TopicEnd(topic) >= 1 })
	probe := itest.ReadRaw(t, topic)[0]
	// A body of n bytes makes a batch of about probe + (n - probeLen)
	// bytes; the margin of 16 covers varint lengths growing by a byte
	// and event ids of another length.
	base := itest.BatchSizeOf(probe) - probeLen
	under, over := limit-16-base, limit+16-base
	e.Exec(`INSERT INTO docs VALUES (2, $1)`, itest.Alnum(under))
	e.Exec(`INSERT INTO docs VALUES (3, $1)`, itest.Alnum(over))
	e.Exec(`INSERT INTO docs VALUES (4, 'after')`)
	itest.WaitFor(t, 60*time.Second, "rows 2 and 4", func() bool { return itest.TopicEnd(topic) >= 3 || p.Exited() })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	recs := itest.ReadRaw(t, topic)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3 (rows 1, 2, 4); output:\n%s", len(recs), p.Out)
	}
	if n := itest.BatchSizeOf(recs[1]); n > limit || n < limit-32 {
		t.Fatalf("row 2 is %d bytes as the broker counts them, want just under %d", n, limit)
	}
	skipped := e.SkippedLines(t)
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
	e := itest.NewEnv(t, "refused")
	topic := e.Prefix + ".public.docs"
	createTopicWith(t, topic, 256<<10)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.Exec(`INSERT INTO docs VALUES (1, 'before'), (2, $1), (3, 'after')`, itest.Alnum(600<<10))
	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitFor(t, 60*time.Second, "rows 1 and 3", func() bool { return itest.TopicEnd(topic) >= 2 || p.Exited() })
	e.Exec(`INSERT INTO docs VALUES (4, 'streamed')`)
	itest.WaitFor(t, 60*time.Second, "row 4", func() bool { return itest.TopicEnd(topic) >= 3 || p.Exited() })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	skipped := e.SkippedLines(t)
	if len(skipped) != 1 || skipped[0].PrimaryKey["id"] != float64(2) || skipped[0].LimitBytes != 256<<10 ||
		!strings.Contains(skipped[0].Reason, fmt.Sprintf("over max.message.bytes %d of topic %s", 256<<10, topic)) {
		t.Fatalf("row.skipped events %+v; output:\n%s", skipped, p.Out)
	}
	if n := len(itest.ReadRaw(t, topic)); n != 3 {
		t.Fatalf("%d records, want rows 1, 3 and 4", n)
	}
}

// TestKafkaLargeLimit: with max_message_bytes 20 MiB and a topic that
// takes it, an 18 MiB row is published (franz-go's batch cap follows the
// limit; before, the 16 MiB producer buffer and 1 MiB batches failed it).
func TestKafkaLargeLimit(t *testing.T) {
	e := itest.NewEnv(t, "large")
	const limit = 20 << 20
	topic := e.Prefix + ".public.docs"
	createTopicWith(t, topic, limit)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	body := itest.Alnum(18 << 20)
	e.Exec(`INSERT INTO docs VALUES (1, $1), (2, 'after')`, body)
	p := e.Start("run", "--config", e.WriteConfig(fmt.Sprintf("  max_message_bytes: %d\n", limit)))
	itest.WaitFor(t, 120*time.Second, "both rows", func() bool { return itest.TopicEnd(topic) >= 2 || p.Exited() })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	recs := itest.ReadRaw(t, topic)
	if len(recs) != 2 || len(recs[0].Value) < 18<<20 || !bytes.Contains(recs[0].Value, []byte(body[:64])) {
		t.Fatalf("%d records (first %d bytes); output:\n%s", len(recs), len(recs[0].Value), p.Out)
	}
	if s := e.SkippedLines(t); len(s) != 0 {
		t.Fatalf("skipped %+v", s)
	}
}

// rowSkippedHook is a webhook receiver for the pipeline's row_skipped_url
// (returned): each event must carry a valid signature with secret and
// decode as the row-skipped function decodes it (webhook.DecodeRowSkipped:
// no unknown field, primary keys as json.Number); events returns those
// received so far.
func rowSkippedHook(t *testing.T, secret string) (url string, events func() []webhook.RowSkipped) {
	var mu sync.Mutex
	var got []webhook.RowSkipped
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body, time.Now(), time.Minute); err != nil {
			t.Errorf("webhook does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ev, err := webhook.DecodeRowSkipped(body)
		if err != nil {
			t.Errorf("the row-skipped function would refuse the event: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hooks", func() []webhook.RowSkipped {
		mu.Lock()
		defer mu.Unlock()
		return append([]webhook.RowSkipped(nil), got...)
	}
}

// header is the value of r's header key ("" if absent).
func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
