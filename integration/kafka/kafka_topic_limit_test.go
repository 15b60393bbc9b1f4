package kafka_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// A topic whose max.message.bytes is below the batches the producer
// builds refuses whole batches (MESSAGE_TOO_LARGE), and franz-go fails
// every record buffered for the partition with them. Only a row that
// alone exceeds the limit may be skipped; the others are sent again in
// batches that fit. Rows of about 1 KB, incompressible
// (alnum), fill batches far above the 20,000 bytes the topic takes; three
// rows of 30 KB cannot fit it at all.
const (
	lowLimit   = 20000
	smallRows  = 3000
	updateRows = 300 // rows 1..300 are updated after the insert: per-key order
)

var bigRows = []int{1000, 2000, 3000} // bodies of 30 KB

// TestKafkaTopicLimitLowered: the topic's max.message.bytes is lowered to
// 20,000 while the pipeline runs, after it read the old limit (1 MiB).
// Every small row arrives, the updates after their inserts, and only the
// three 30 KB rows are recorded as row.skipped; before, about nine in ten
// rows were skipped as too large.
func TestKafkaTopicLimitLowered(t *testing.T) {
	e := itest.NewEnv(t, "lowered")
	topic := e.Prefix + ".public.docs"
	createTopicConfig(t, topic, 3, 1<<20)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.Exec(`INSERT INTO docs VALUES (0, 'first')`)
	p := e.Start("run", "--config", e.WriteConfig(""))
	// Row 0 published: the topic was ensured and its limit read.
	itest.WaitOrDump(t, p, 60*time.Second, "row 0", func() bool { return itest.TopicEnd(topic) >= 1 })
	setTopicLimit(t, topic, lowLimit)
	insertLimitRows(t, e)
	limitRowsArrive(t, e, p, topic)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "the limit was lowered") {
		t.Errorf("the log does not say why the pipeline stalled; output:\n%s", p.Out)
	}
	checkLimitRows(t, topic, e.SkippedLines, p)
}

// TestKafkaTopicLimitUnreadable: the principal may not read the topic's
// configuration (user writer on the SASL_SSL listener: Describe and Write
// only, like the IAM policy of the MSK docs without
// DescribeTopicDynamicConfiguration), and the topic takes 20,000 bytes
// from the start, below max_message_bytes. Whether a refused record is
// too large alone cannot be told, so nothing is skipped: the pipeline
// stalls and says why and what to do. With max_message_bytes lowered to
// the topic's limit, as the message advises, every row that fits arrives
// and only the three 30 KB rows are skipped.
func TestKafkaTopicLimitUnreadable(t *testing.T) {
	e := itest.NewEnv(t, "unreadable")
	prefix := itest.SecPrefix("limit")
	topic := prefix + ".public.docs"
	createTopicConfig(t, topic, 3, lowLimit)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.Exec(`INSERT INTO docs VALUES (0, 'first')`)
	config := func(extra string) string {
		cfg := fmt.Sprintf(`name: %s
source:
  type: postgres
  url: %s
destination:
  bootstrap_servers: %s
  topic_prefix: %s
  authentication: SCRAM-SHA-512
  username: writer
  password: %s
%s  ca_certificate: |
%scheckpoint:
  path: %s
`, e.Name, e.PGURL(), itest.KafkaSASLAddr, prefix, itest.SASLUsers["writer"], extra, itest.Indent(itest.TLSFile(t, "ca.pem"), "    "), filepath.Join(e.Dir, "checkpoints"))
		path := filepath.Join(e.Dir, "pipeline.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p := e.Start("run", "--config", config(""))
	itest.WaitOrDump(t, p, 60*time.Second, "row 0", func() bool { return itest.TopicEnd(topic) >= 1 })
	insertLimitRows(t, e) // streamed
	const why = "max.message.bytes cannot be read"
	itest.WaitOrDump(t, p, 60*time.Second, "the stall's reason", func() bool { return strings.Contains(p.Out.String(), why) })
	for _, line := range strings.Split(p.Out.String(), "\n") {
		if strings.Contains(line, why) {
			t.Log(line)
			if !strings.Contains(line, "DescribeTopicDynamicConfiguration") || !strings.Contains(line, "max_message_bytes") {
				t.Fatal("the stall does not say what to grant or set")
			}
			break
		}
	}
	if s := e.SkippedLines(t); len(s) > 0 {
		t.Fatalf("%d rows skipped (first %+v) while none is known to be too large alone", len(s), s[0])
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}

	p = e.Start("run", "--config", config(fmt.Sprintf("  max_message_bytes: %d\n", lowLimit)))
	limitRowsArrive(t, e, p, topic)
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	checkLimitRows(t, topic, e.SkippedLines, p)
}

// TestKafkaTopicLimitRaised: the topic's max.message.bytes is raised from
// 20,000 to 100,000 while the pipeline runs, after it read the old limit.
// A 30 KB row, over the old limit but within the new one, is published,
// not skipped as too large (the producer's batches were built for the old
// limit: the pipeline stalls once and its retry reads the new one).
func TestKafkaTopicLimitRaised(t *testing.T) {
	e := itest.NewEnv(t, "raised")
	topic := e.Prefix + ".public.docs"
	createTopicConfig(t, topic, 1, lowLimit)
	e.Exec(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL)`)
	e.Exec(`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`)
	e.Exec(`INSERT INTO docs VALUES (0, 'first')`)
	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitOrDump(t, p, 60*time.Second, "row 0", func() bool { return itest.TopicEnd(topic) >= 1 })
	setTopicLimit(t, topic, 100000)
	e.Exec(`INSERT INTO docs VALUES (1, $1), (2, 'after')`, itest.Alnum(30000))
	itest.WaitOrDump(t, p, 60*time.Second, "rows 1 and 2", func() bool { return itest.TopicEnd(topic) >= 3 || len(e.SkippedLines(t)) > 0 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	if s := e.SkippedLines(t); len(s) > 0 {
		t.Fatalf("row %v skipped (%s) although the topic takes it now", s[0].PrimaryKey, s[0].Reason)
	}
	if n := len(itest.ReadTopic(t, topic)); n < 3 {
		t.Fatalf("%d records, want rows 0, 1 and 2", n)
	}
}

// insertLimitRows inserts rows 1..smallRows of about 1 KB in one
// transaction (the big ones among them 30 KB), then updates rows
// 1..updateRows in another.
func insertLimitRows(t *testing.T, e *itest.Env) {
	t.Helper()
	ids := make([]int32, smallRows)
	bodies := make([]string, smallRows)
	for i := range ids {
		ids[i] = int32(i + 1)
		bodies[i] = itest.Alnum(1000)
		if slices.Contains(bigRows, i+1) {
			bodies[i] = itest.Alnum(30000)
		}
	}
	e.Exec(`INSERT INTO docs SELECT * FROM unnest($1::int[], $2::text[])`, ids, bodies)
	e.Exec(`UPDATE docs SET body = 'v2 ' || body WHERE id BETWEEN 1 AND $1`, updateRows)
}

// limitRowsArrive waits until every row that fits is on topic.
func limitRowsArrive(t *testing.T, e *itest.Env, p *itest.Proc, topic string) {
	t.Helper()
	want := int64(smallRows - len(bigRows) + updateRows)
	itest.WaitOrDump(t, p, 90*time.Second, fmt.Sprintf("%d records", want), func() bool {
		return itest.TopicEnd(topic) >= want || len(e.SkippedLines(t)) > len(bigRows)
	})
	// Records sent again may be on the topic twice: wait for the keys.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !p.Exited() {
		ids := map[string]bool{}
		for _, m := range itest.ReadTopic(t, topic) {
			ids[fmt.Sprint(m.Key["payload"].(map[string]any)["id"])] = true
		}
		if len(ids) >= smallRows-len(bigRows) {
			return
		}
		time.Sleep(time.Second)
	}
}

// checkLimitRows: every small row is on the topic, each updated row's
// last message is its update, and exactly the big rows were skipped,
// each as too large for the topic.
func checkLimitRows(t *testing.T, topic string, skippedLines func(*testing.T) []webhook.RowSkipped, p *itest.Proc) {
	t.Helper()
	last := map[int]string{} // id → op of its last message
	for _, m := range itest.ReadTopic(t, topic) {
		id, _ := strconv.Atoi(fmt.Sprint(m.Key["payload"].(map[string]any)["id"]))
		last[id] = m.Headers["tributary-op"]
	}
	var missing, misordered []int
	for id := 1; id <= smallRows; id++ {
		op, ok := last[id]
		switch {
		case slices.Contains(bigRows, id):
			if ok {
				t.Errorf("row %d (30 KB, over the topic's %d bytes) is on the topic", id, lowLimit)
			}
		case !ok:
			missing = append(missing, id)
		case id <= updateRows && op != "u":
			misordered = append(misordered, id)
		}
	}
	skipped := skippedLines(t)
	var keys []int
	for _, s := range skipped {
		id, _ := strconv.Atoi(fmt.Sprint(s.PrimaryKey["id"]))
		keys = append(keys, id)
		if slices.Contains(bigRows, id) && (s.LimitBytes != lowLimit || s.SizeBytes <= lowLimit || !strings.Contains(s.Reason, strconv.Itoa(lowLimit))) {
			t.Errorf("row.skipped %+v: want the limit %d, a size above it and a reason naming both", s, lowLimit)
		}
	}
	slices.Sort(keys)
	if len(missing) > 0 || len(misordered) > 0 || !slices.Equal(keys, bigRows) {
		out := p.Out.String()
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		t.Fatalf("%d rows missing (first %v), %d updated rows whose last message is not the update (first %v); %d skipped, keys %v, want %v; output (tail):\n%s",
			len(missing), head(missing), len(misordered), head(misordered), len(skipped), head(keys), bigRows, out)
	}
}

func head(ids []int) []int { return ids[:min(len(ids), 10)] }

// plainAdmin is an admin client on the PLAINTEXT listener (a super user),
// closed with the test, and a context of timeout for its requests.
func plainAdmin(t *testing.T, timeout time.Duration) (context.Context, *kadm.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return ctx, kadm.NewClient(cl)
}

// createTopicConfig creates topic with partitions and max.message.bytes.
func createTopicConfig(t *testing.T, topic string, partitions int32, maxMessageBytes int) {
	t.Helper()
	ctx, adm := plainAdmin(t, 30*time.Second)
	v := strconv.Itoa(maxMessageBytes)
	resp, err := adm.CreateTopic(ctx, partitions, 1, map[string]*string{"max.message.bytes": &v}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// setTopicLimit sets topic's max.message.bytes and waits until the broker
// reports it.
func setTopicLimit(t *testing.T, topic string, limit int) {
	t.Helper()
	ctx, adm := plainAdmin(t, 30*time.Second)
	v := strconv.Itoa(limit)
	resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: &v}}, topic)
	if err == nil {
		_, err = resps.On(topic, nil)
	}
	if err != nil {
		t.Fatalf("set max.message.bytes of %s: %v", topic, err)
	}
	itest.WaitFor(t, 20*time.Second, "the new max.message.bytes", func() bool {
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			return false
		}
		rc, err := rcs.On(topic, nil)
		if err != nil {
			return false
		}
		for _, c := range rc.Configs {
			if c.Key == "max.message.bytes" && c.Value != nil && *c.Value == v {
				return true
			}
		}
		return false
	})
}
