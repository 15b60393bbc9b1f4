package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func adminClient() (*kgo.Client, *kadm.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr))
	if err != nil {
		return nil, nil, err
	}
	return cl, kadm.NewClient(cl), nil
}

// createTopic creates topic with the broker's append time as record timestamp, which is
// what latency is measured against, and which also dates the last record of a drain.
func createTopic(ctx context.Context, topic string, partitions int) error {
	cl, adm, err := adminClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	ts := "LogAppendTime"
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, map[string]*string{"message.timestamp.type": &ts}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	// Created is not yet served: the first ListOffsets may say UNKNOWN_TOPIC_OR_PARTITION.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ends, err := listEnds(ctx, adm, topic)
		if err == nil && len(ends) == partitions {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s created, not served with its %d partitions within 30 s (%d, %v)", topic, partitions, len(ends), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func deleteTopics(ctx context.Context, topics ...string) {
	cl, adm, err := adminClient()
	if err != nil {
		return
	}
	defer cl.Close()
	adm.DeleteTopics(ctx, topics...)
}

// endOffsets returns the end offset of each partition of topic.
func endOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	cl, adm, err := adminClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return listEnds(ctx, adm, topic)
}

func listEnds(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	var errs []error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, o.Err)
			return
		}
		out[o.Partition] = o.Offset
	})
	return out, errors.Join(errs...)
}

func sum(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// waitForCount polls the end offsets of topic until they add up to want. It fails when the
// count does not move for stall, or when died is closed (the publisher exited).
func waitForCount(ctx context.Context, topic string, want int64, stall time.Duration, died <-chan struct{}) (map[int32]int64, error) {
	cl, adm, err := adminClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	last, lastMove := int64(-1), time.Now()
	for {
		ends, err := listEnds(ctx, adm, topic)
		if err != nil {
			return nil, err
		}
		n := sum(ends)
		if n >= want {
			return ends, nil
		}
		if n != last {
			last, lastMove = n, time.Now()
		} else if time.Since(lastMove) > stall {
			return nil, fmt.Errorf("%s holds %d of %d records, no progress for %s", topic, n, want, stall)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-died:
			return nil, fmt.Errorf("the publisher exited with %s at %d of %d records", topic, n, want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// consume calls f for each record of topic from the offsets in from (partition → offset;
// a missing partition from the start) up to the offsets in to, as a read_committed consumer
// sees them, and with the transaction markers (control records) of transactional topics:
// a marker is when its transaction's records became visible, and the end of the log.
func consume(ctx context.Context, topic string, from, to map[int32]int64, f func(*kgo.Record)) error {
	offsets := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	for p, end := range to {
		if start := from[p]; start < end {
			offsets[p] = kgo.NewOffset().At(start)
			want[p] = end
		}
	}
	if len(want) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxBytes(64<<20), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", topic, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return fmt.Errorf("reading %s: %w", topic, ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok {
				return
			}
			if r.Offset < end {
				f(r)
			}
			// Past end too: the record at end-1 may be an aborted one, never returned.
			if r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return nil
}

// firstAppend is the earliest broker append time among the first records after from.
func firstAppend(ctx context.Context, topic string, from, ends map[int32]int64) (time.Time, error) {
	to := map[int32]int64{}
	for p, end := range ends {
		if from[p] < end {
			to[p] = from[p] + 1
		}
	}
	var first time.Time
	err := consume(ctx, topic, from, to, func(r *kgo.Record) {
		if first.IsZero() || r.Timestamp.Before(first) {
			first = r.Timestamp
		}
	})
	return first, err
}

// lastAppend is the latest broker append time among the records before ends.
func lastAppend(ctx context.Context, topic string, ends map[int32]int64) (time.Time, error) {
	from := map[int32]int64{}
	for p, end := range ends {
		from[p] = max(0, end-1)
	}
	var last time.Time
	err := consume(ctx, topic, from, ends, func(r *kgo.Record) {
		if r.Timestamp.After(last) {
			last = r.Timestamp
		}
	})
	return last, err
}

// change is what the latencies read of a record's value.
type change struct {
	Payload struct {
		Op     string `json:"op"`
		Before *struct {
			ID int64 `json:"id"`
		} `json:"before"`
		After *struct {
			ID int64 `json:"id"`
		} `json:"after"`
		Source struct {
			TsUs int64 `json:"ts_us"`
			TsMs int64 `json:"ts_ms"`
		} `json:"source"`
	} `json:"payload"`
}

// commitOf says when a change was committed (Unix ms), or false to leave it out.
type commitOf func(*change) (float64, bool)

// sourceCommit takes the commit time the record carries (payload.source.ts_us, else ts_ms);
// with keep set, only the records whose commit time it keeps count.
func sourceCommit(keep func(commitMs float64) bool) commitOf {
	return func(v *change) (float64, bool) {
		commit := float64(v.Payload.Source.TsUs) / 1000
		if v.Payload.Source.TsUs == 0 {
			commit = float64(v.Payload.Source.TsMs)
		}
		return commit, keep == nil || keep(commit)
	}
}

// batchCommit dates a change by the batch of data.go that made it (batch b inserts ids
// 60b..60b+59, updates and deletes rows of batch b-1): commits[i] is when batch first+i's
// commit returned. Changes of other batches are left out.
func batchCommit(first int, commits []time.Time) commitOf {
	return func(v *change) (float64, bool) {
		var id, after int64
		switch {
		case v.Payload.Op == "c" && v.Payload.After != nil:
			id = v.Payload.After.ID
		case v.Payload.Op == "u" && v.Payload.After != nil:
			id, after = v.Payload.After.ID, 1
		case v.Payload.Op == "d" && v.Payload.Before != nil:
			id, after = v.Payload.Before.ID, 1
		default:
			return 0, false
		}
		b := id / seedRows
		if id < 0 && id%seedRows != 0 {
			b-- // floor
		}
		i := int(b+after) - first
		if i < 0 || i >= len(commits) {
			return 0, false
		}
		return float64(commits[i].UnixMicro()) / 1000, true
	}
}

// commitLatencies reads the records between from and to and returns, for each one with a
// value that when dates, when it became visible minus its commit time, in ms: the broker
// append time, or for a record of a transaction the append time of the marker that
// committed it (a read_committed consumer sees it only then).
func commitLatencies(ctx context.Context, topic string, from, to map[int32]int64, when commitOf) ([]float64, error) {
	var lat []float64
	var bad error
	open := map[int32][]float64{} // per partition: commit times of records awaiting their marker
	err := consume(ctx, topic, from, to, func(r *kgo.Record) {
		if r.Attrs.IsControl() {
			for _, commit := range open[r.Partition] {
				lat = append(lat, float64(r.Timestamp.UnixMilli())-commit)
			}
			delete(open, r.Partition)
			return
		}
		if r.Value == nil {
			return
		}
		var v change
		if err := json.Unmarshal(r.Value, &v); err != nil {
			bad = fmt.Errorf("%s %d/%d: %w", topic, r.Partition, r.Offset, err)
			return
		}
		commit, ok := when(&v)
		if !ok {
			return
		}
		if r.Attrs.IsTransactional() {
			open[r.Partition] = append(open[r.Partition], commit)
			return
		}
		lat = append(lat, float64(r.Timestamp.UnixMilli())-commit)
	})
	if err == nil {
		err = bad
	}
	return lat, err
}

// samplePayloads writes up to n record values of topic from the offsets from on (nil: the
// start) to path, one a line, for producer-perf-test's --payload-file. Values are compact
// JSON: no newline inside. From the measured run's first offsets, so that what the
// publisher published before it (the seed's snapshot) is neither in the ceiling's records
// nor in their mean size.
func samplePayloads(ctx context.Context, topic string, from map[int32]int64, n int, path string) (avgBytes int, err error) {
	ends, err := endOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	to := map[int32]int64{}
	per := int64(n/max(1, len(ends)) + 1)
	for p, e := range ends {
		to[p] = min(e, from[p]+per)
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var total, count int
	err = consume(ctx, topic, from, to, func(r *kgo.Record) {
		if r.Value == nil || r.Attrs.IsControl() || count >= n {
			return
		}
		f.Write(r.Value)
		f.Write([]byte{'\n'})
		total += len(r.Key) + len(r.Value)
		count++
	})
	if err != nil {
		return 0, err
	}
	if count == 0 {
		return 0, fmt.Errorf("no records in %s to sample", topic)
	}
	return total / count, f.Close()
}
