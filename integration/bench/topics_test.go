package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBatchCommit: a MariaDB latency is counted from the commit of the batch that made the
// change (data.go: batch b inserts ids 60b..60b+59, updates and deletes rows of batch b-1),
// the seed's negative ids included; changes of batches not loaded are left out.
func TestBatchCommit(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	commits := []time.Time{t0, t0.Add(10 * time.Millisecond), t0.Add(20 * time.Millisecond)} // batches 0, 1, 2
	when := batchCommit(0, commits)
	mk := func(op string, id int64) *change {
		var c change
		c.Payload.Op = op
		row := &struct {
			ID int64 `json:"id"`
		}{id}
		if op == "d" {
			c.Payload.Before = row
		} else {
			c.Payload.After = row
		}
		return &c
	}
	for _, c := range []struct {
		op   string
		id   int64
		want int // index into commits, -1: left out
	}{
		{"c", 0, 0}, {"c", 59, 0}, {"c", 60, 1}, {"c", 179, 2}, {"c", 180, -1},
		{"u", -60, 0}, {"u", -1, 0}, {"d", -21, 0}, // seed rows, changed by batch 0
		{"u", 0, 1}, {"d", 39, 1}, {"u", 60, 2}, {"d", 120, -1},
		{"r", 5, -1},
	} {
		got, ok := when(mk(c.op, c.id))
		if c.want < 0 {
			if ok {
				t.Errorf("%s id %d: dated %v, want left out", c.op, c.id, got)
			}
			continue
		}
		if want := float64(commits[c.want].UnixMilli()); !ok || got != want {
			t.Errorf("%s id %d: %v, %v; want batch %d's commit %v", c.op, c.id, got, ok, c.want, want)
		}
	}
}

// TestSamplePayloadsFromBase: the ceiling's records and their mean size are those of the
// measured run, from its first offsets: not the seed's snapshot that the publisher sent
// before it (small rows beside a large-values run would make the ceiling's records and
// the MB/s figure smaller than Tributary's).
func TestSamplePayloadsFromBase(t *testing.T) {
	ctx := context.Background()
	topic := fmt.Sprintf("bench-sample-test-%d", time.Now().UnixNano())
	if err := createTopic(ctx, topic, 2); err != nil {
		t.Fatal(err)
	}
	defer deleteTopics(context.Background(), topic)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(n, size int) {
		for i := range n {
			r := &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: bytes.Repeat([]byte{'s'}, size)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(30, 100) // the seed's snapshot
	base, err := endOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	produce(6, 10_000) // the measured run: keys "0"…"5", one byte each
	path := filepath.Join(t.TempDir(), "payloads.txt")
	avg, err := samplePayloads(ctx, topic, base, 5000, path)
	if err != nil {
		t.Fatal(err)
	}
	if avg != 10_001 {
		t.Errorf("mean record %d bytes, want 10,001: the run's records alone", avg)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); len(lines) != 6 || len(lines[0]) != 10_000 {
		t.Errorf("sampled %d values (the first %d bytes), want the run's 6 of 10,000", len(lines), len(lines[0]))
	}
}
