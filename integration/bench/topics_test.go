package main

import (
	"testing"
	"time"
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
