package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/conntest"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// listTables prints every table run would capture, with its topic, key
// columns, replica identity (PostgreSQL), estimated rows and the columns
// left out or masked (docs/configuration.md, "Choosing tables and
// columns"), then what in source.tables matches nothing. Exit 1 when no
// table would be captured, or when a table has a problem that run refuses
// at start.
func listTables(ctx context.Context, inv *invocation) error {
	r, err := inventory(ctx, inv.cfg, inv)
	if err != nil {
		return err
	}
	if inv.json {
		enc := json.NewEncoder(inv.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		printTables(inv.stdout, r)
	}
	// The listing says both ("0 tables would be captured", "problem: …"):
	// the exit code only.
	if len(r.Tables) == 0 {
		return &reportedError{exitRuntime, "no table would be captured"}
	}
	// A problem printed is one run refuses at start: the listing must
	// not pass where run would fail.
	var problems int
	for _, t := range r.Tables {
		problems += len(t.Problems)
	}
	if problems > 0 {
		return &reportedError{exitRuntime, fmt.Sprintf("%d problems would stop run at start", problems)}
	}
	return nil
}

// inventory asks the source what it would capture and words it.
func inventory(ctx context.Context, cfg *config.Config, inv *invocation) (conntest.TablesReport, error) {
	var r conntest.TablesReport
	opts := source.OptionsFor(cfg)
	opts.Logger = inv.log
	src, err := capture.New(ctx, opts)
	if err != nil {
		return r, &usageError{err.Error()}
	}
	defer src.Close()
	lister, err := src.Lister()
	if err != nil {
		return r, &usageError{err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	found, err := lister.Tables(ctx)
	if err != nil {
		return r, err
	}
	return conntest.Tables(cfg, found), nil
}

func printTables(w io.Writer, r conntest.TablesReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tTOPIC\tKEY\tREPLICA IDENTITY\tROWS (EST.)\tEXCLUDED\tMASKED")
	for _, t := range r.Tables {
		rows := "?"
		if t.RowEstimate >= 0 {
			rows = strconv.FormatInt(t.RowEstimate, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Table, t.Topic, orDash(strings.Join(t.Key, ",")), orDash(t.ReplicaIdentity), rows,
			orDash(strings.Join(t.Excluded, ", ")), orDash(strings.Join(t.Masked, ", ")))
	}
	tw.Flush()
	for _, t := range r.Tables {
		for _, p := range t.Problems {
			fmt.Fprintf(w, "problem: %s: %s\n", t.Table, p)
		}
	}
	for _, m := range r.Warnings {
		fmt.Fprintln(w, "warning: "+m)
	}
	fmt.Fprintf(w, "%d tables would be captured\n", len(r.Tables))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
