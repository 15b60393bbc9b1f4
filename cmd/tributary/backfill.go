package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/status"
)

// tableName is the form of source.tables: schema.table (MySQL: db.table;
// MongoDB: database.collection, whose name may hold dots: fs.files).
var tableName = regexp.MustCompile(`^[^.\s,]+\.[^\s,]+$`)

// requestBackfill writes a backfill request into the checkpoint store,
// without taking the pipeline over: the running pipeline takes it within
// a few seconds, or the next run does before it streams.
func requestBackfill(ctx context.Context, inv *invocation) error {
	req, err := backfillRequest(inv.cfg, inv.tables, inv.all)
	if err != nil {
		return &usageError{err.Error()}
	}
	kind, w, err := checkpointStore(inv.cfg, inv.log)
	if err != nil {
		return err
	}
	err = kind.RequestBackfill(ctx, w, req)
	if errors.Is(err, checkpoint.ErrNeverRan) {
		return fmt.Errorf("nothing queued: pipeline %s has never run with this checkpoint store (%v); its first run backfills every table", inv.cfg.Name, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.stdout, "queued a backfill of %s for pipeline %s\n", describeRequest(req), inv.cfg.Name)
	cp, found, live, err := readStored(ctx, inv.cfg)
	if err != nil {
		fmt.Fprintf(inv.stdout, "pipeline state unknown: %v\n", err)
		return nil
	}
	r := status.Build(inv.cfg.Name, cp, found, live, time.Now(), positionWords(inv.cfg))
	if r.State == status.StateRunning {
		owner := r.Owner
		if r.Epoch > 0 {
			owner = fmt.Sprintf("%s, epoch %d", r.Owner, r.Epoch)
		}
		fmt.Fprintf(inv.stdout, "pipeline is running (%s; last heartbeat %s ago): it starts the snapshot within a few seconds, while it keeps streaming\n",
			owner, time.Since(live.UpdatedAt).Round(100*time.Millisecond))
	} else {
		fmt.Fprintln(inv.stdout, "pipeline is not running: the next `tributary run` starts the snapshot before it streams")
	}
	fmt.Fprintln(inv.stdout, "follow it with `tributary status`")
	return nil
}

// backfillRequest checks --table / --all against the configuration; its
// errors name the flag or the table.
func backfillRequest(cfg *config.Config, tables string, all bool) (checkpoint.Request, error) {
	switch {
	case all && tables != "":
		return checkpoint.Request{}, errors.New("backfill: --table and --all exclude each other")
	case all:
		return checkpoint.Request{All: true}, nil
	case tables == "":
		return checkpoint.Request{}, errors.New("backfill: give --table <schema.table>[,…] or --all")
	}
	sel, _ := cfg.Source.Selection() // Validate has compiled it
	var req checkpoint.Request
	for _, t := range strings.Split(tables, ",") {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return checkpoint.Request{}, fmt.Errorf("backfill: --table %q holds an empty table name", tables)
		case !tableName.MatchString(t):
			return checkpoint.Request{}, fmt.Errorf("backfill: table %q must be schema.table (as source.tables writes it)", t)
		case sel.Listed() && !sel.Wants(t, true):
			return checkpoint.Request{}, fmt.Errorf("backfill: table %q is not in source.tables (%s)", t, strings.Join(cfg.Source.Tables, ", "))
		case sel.Excluded(t):
			return checkpoint.Request{}, fmt.Errorf("backfill: table %q is not captured: source.exclude_tables leaves it out", t)
		}
		req.Tables = append(req.Tables, t)
	}
	return checkpoint.Request{}.Merge(req), nil
}

func describeRequest(r checkpoint.Request) string {
	if r.All {
		return "every table"
	}
	return strings.Join(r.Tables, ", ")
}

// pendingBackfill is the request waiting in the store, for `status`; nil
// when there is none or it cannot be read (status shows what it can).
func pendingBackfill(ctx context.Context, cfg *config.Config) *checkpoint.Request {
	kind, w, err := checkpointStore(cfg, nil)
	if err != nil {
		return nil
	}
	req, err := kind.PendingBackfill(ctx, w)
	if err != nil || req.Empty() {
		return nil
	}
	return &req
}
