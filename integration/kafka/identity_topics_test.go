package kafka_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestIdentityTopicCollisionWhileStreaming: a table created while
// streaming whose topic is another table's ("my table" next to my_table)
// stops the pipeline with an error naming both tables and the topic, and
// not one of its rows reaches the first table's topic.
func TestIdentityTopicCollisionWhileStreaming(t *testing.T) {
	e := itest.NewEnv(t, "idcoll")
	e.Exec(`CREATE TABLE my_table (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO my_table VALUES (1), (2)`)
	topic := e.Prefix + ".public.my_table"
	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitFor(t, 60*time.Second, "my_table's 2 rows", func() bool { return itest.TopicEnd(topic) >= 2 })

	e.Exec(`CREATE TABLE "my table" (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO "my table" VALUES (101)`)
	e.Exec(`INSERT INTO my_table VALUES (3)`)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running 60 s after a second table for topic %s appeared; output:\n%s", topic, p.Out)
	}
	out := p.Out.String()
	if code := p.Cmd.ProcessState.ExitCode(); code == 0 {
		t.Fatalf("exit 0; output:\n%s", out)
	}
	for _, want := range []string{`'public.my table'`, `'public.my_table'`, "topic " + topic, "source.tables"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not name %q:\n%s", want, out)
		}
	}
	for _, m := range itest.ReadTopic(t, topic) {
		pl, _ := m.Key["payload"].(map[string]any)
		if id, _ := pl["id"].(float64); id > 100 {
			t.Errorf("a row of \"my table\" (id %v) was published to my_table's topic %s", id, topic)
		}
	}
}

// TestIdentityTopicCollisionAtStartup: listed tables whose topics Kafka
// treats as one (a.b_c and a_b.c differ only in '.' and '_') are refused
// at start-up, before anything is read or published, naming both tables
// and both topics.
func TestIdentityTopicCollisionAtStartup(t *testing.T) {
	e := itest.NewEnv(t, "idstart")
	e.Exec(`CREATE SCHEMA a`)
	e.Exec(`CREATE SCHEMA a_b`)
	e.Exec(`CREATE TABLE a.b_c (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE a_b.c (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO a.b_c VALUES (1)`)
	cfg := e.WriteConfig("")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "  type: postgres\n", "  type: postgres\n  tables: [a.b_c, a_b.c]\n", 1))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	p := e.Start("run", "--config", cfg)
	select {
	case <-p.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running with two listed tables for one topic; output:\n%s", p.Out)
	}
	out := p.Out.String()
	if p.Cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("exit 0; output:\n%s", out)
	}
	for _, want := range []string{`'a.b_c'`, `'a_b.c'`, e.Prefix + ".a.b_c", e.Prefix + ".a_b.c", "Kafka treats as the same topic", "source.tables"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %s:\n%s", want, out)
		}
	}
	if n := itest.TopicEnd(e.Prefix + ".a.b_c"); n != 0 {
		t.Errorf("%d records published before the refusal", n)
	}
}

// TestIdentityBrokerErrorMessage: when the broker refuses to create a
// topic, its own message reaches the user with the error code. Here the
// topic collides with one that already exists (created outside
// Tributary), which the broker explains as "Topic '…' collides with
// existing topic: …" where the code alone says only "invalid topic".
func TestIdentityBrokerErrorMessage(t *testing.T) {
	itest.SkipShort(t)
	prefix := "it-idbroker-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	existing, colliding := prefix+".a.b_c", prefix+".a_b.c"
	cl, err := kgo.NewClient(kgo.SeedBrokers(itest.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, existing); err != nil {
		t.Fatal(err)
	}
	defer adm.DeleteTopics(context.Background(), existing)

	prod, err := kafka.NewProducer(kafka.Options{BootstrapServers: itest.KafkaAddr, DisableTLS: true, CreateMissingTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	err = prod.EnsureTopic(ctx, colliding)
	if err == nil {
		t.Fatalf("topic %s created next to %s", colliding, existing)
	}
	if !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("error %v does not carry the code INVALID_TOPIC_EXCEPTION", err)
	}
	for _, want := range []string{"INVALID_TOPIC_EXCEPTION", "collides with existing topic", existing} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}
