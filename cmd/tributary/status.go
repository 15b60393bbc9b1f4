package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/status"
	"github.com/tributary-cdc/tributary/pkg/status/page"
)

// status prints the pipeline's state, read without taking it over: it
// works while run holds the lock or the lease.
func showStatus(ctx context.Context, inv *invocation) error {
	cp, found, live, err := readStored(ctx, inv.cfg)
	if err != nil {
		return err
	}
	r := status.Build(inv.cfg.Name, cp, found, live, time.Now(), positionWords(inv.cfg))
	r.BackfillRequested = pendingBackfill(ctx, inv.cfg)
	if found {
		if u := unsetIn(inv.unset, "source."); u != "" {
			r.LagBytesError = u
		} else {
			r.LagBytes, r.LagBytesError = lagBytes(ctx, inv.cfg, cp.Position)
		}
	}
	if inv.json {
		enc := json.NewEncoder(inv.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	status.Print(inv.stdout, r)
	return nil
}

// unsetIn is the first unset reference among fields under prefix, or "".
func unsetIn(unset []string, prefix string) string {
	for _, u := range unset {
		if strings.HasPrefix(u, prefix) {
			return u
		}
	}
	return ""
}

// positionWords puts a checkpoint's position in its source type's words
// (source.Kind.Summary); nil for a type without a driver.
func positionWords(cfg *config.Config) func(pos []byte) string {
	k, _ := capture.KindOf(cfg.Source.Type)
	return k.Summary
}

// lagBytes asks the source how much log lies after the checkpoint; the
// source is a few seconds away at most, or the answer is "unknown".
func lagBytes(ctx context.Context, cfg *config.Config, pos []byte) (*int64, string) {
	src, err := capture.New(ctx, source.OptionsFor(cfg))
	if err != nil {
		return nil, err.Error()
	}
	defer src.Close()
	lagger, err := src.Lagger()
	if err != nil {
		return nil, err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := lagger.LagBytes(ctx, pos)
	if err != nil {
		return nil, err.Error()
	}
	return &n, ""
}

// readStored reads the checkpoint and the running task's snapshot from the
// configured store, taking neither the file lock nor the lease.
func readStored(ctx context.Context, cfg *config.Config) (cp checkpoint.Checkpoint, found bool, live *status.Live, err error) {
	kind, w, err := checkpointStore(cfg, nil)
	if err != nil {
		return cp, false, nil, err
	}
	cp, found, snapshot, err := kind.Read(ctx, w)
	if err != nil {
		return cp, false, nil, err
	}
	if live, err = status.Decode(snapshot); err != nil {
		return cp, false, nil, err
	}
	return cp, found, live, nil
}

// publishStatus keeps the running task's snapshot in the store, scrubbed
// (its errors are the drivers', which may quote a value read through a
// reference, and the store is read by other people and tools); the
// returned stop writes the last one and waits.
func publishStatus(store checkpoint.Store, rec *status.Recorder, scrub *config.Scrubber, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	save := func(ctx context.Context, snapshot []byte) error {
		return store.SaveStatus(ctx, []byte(scrub.String(string(snapshot))))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); status.Publish(ctx, rec, save, status.Interval, log) }()
	return func() { cancel(); wg.Wait() }
}

// statusRoutes serves the status page at / and GET /status.json: what
// `status --json` prints, with this process's own snapshot instead of the
// stored one. The answer passes the configuration's scrubber, as what the
// commands print does: its errors are the drivers', which may quote a
// value read through a reference.
func statusRoutes(mux *http.ServeMux, cfg *config.Config, rec *status.Recorder) {
	scrub := cfg.Scrubber()
	mux.Handle("/", page.Handler())
	mux.HandleFunc("GET /status.json", func(w http.ResponseWriter, req *http.Request) {
		cp, found, _, err := readStored(req.Context(), cfg)
		if err != nil {
			http.Error(w, scrub.String(err.Error()), http.StatusInternalServerError)
			return
		}
		live := rec.Snapshot()
		r := status.Build(cfg.Name, cp, found, &live, time.Now(), positionWords(cfg))
		b, err := json.Marshal(r)
		if err != nil {
			http.Error(w, "the status cannot be encoded", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, scrub.String(string(b))+"\n")
	})
}
