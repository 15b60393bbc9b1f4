package itest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// snapshotStateJSON is the capture engine's state in a position.
type snapshotStateJSON struct {
	Tables []struct {
		Table string   `json:"table"`
		Key   []string `json:"key"` // base64 of each key value's text
		Rows  int64    `json:"rows"`
		// Parts are the unfinished key ranges of a table read in several
		// (Key is then empty): last key read and the range's last key.
		Parts []struct {
			Key   []string `json:"key"`
			Until []string `json:"until"`
		} `json:"parts"`
	} `json:"tables"`
	Done []string `json:"done"`
}

// WaitBackfilled waits until p's file checkpoint records every queued
// table's backfill as done, failing with p's output after timeout.
func (e *Env) WaitBackfilled(t *testing.T, p *Proc, timeout time.Duration, what string) {
	t.Helper()
	ckpt := filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json")
	WaitOrDump(t, p, timeout, what, func() bool {
		st, ok := ReadSnapshotState(ckpt)
		return ok && len(st.Done) > 0 && len(st.Tables) == 0
	})
}

// ReadSnapshotState reads the snapshot state of a file checkpoint; ok is
// false before the first checkpoint.
func ReadSnapshotState(path string) (st snapshotStateJSON, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return st, false
	}
	var f struct {
		Position struct {
			Snapshot *snapshotStateJSON `json:"snapshot"`
		} `json:"position"`
	}
	if json.Unmarshal(b, &f) != nil {
		return st, false
	}
	if f.Position.Snapshot != nil {
		st = *f.Position.Snapshot
	}
	return st, true
}

// OffsetsRecord says whether the offsets topic holds a committed record
// of the pipeline.
func (e *Env) OffsetsRecord(t *testing.T) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, found, err := kafka.ReadLastCommitted(ctx, kafka.Options{BootstrapServers: KafkaAddr, DisableTLS: true},
		e.Prefix+"."+config.OffsetsTopicSuffix, []byte(e.Name))
	if err != nil {
		t.Fatalf("read the offsets topic: %v", err)
	}
	return found
}

// RewriteCheckpoint decodes the file checkpoint at path, lets edit change
// the document in place (to make it look like one an earlier release
// wrote) and writes it back.
func RewriteCheckpoint(t *testing.T, path string, edit func(f map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("checkpoint %s: %v", path, err)
	}
	edit(f)
	if b, err = json.Marshal(f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
