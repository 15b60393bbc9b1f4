package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/conntest"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// connectionReport is Kafka's report with the source's checks beside it;
// OK only when both passed.
type connectionReport struct {
	kafka.Report
	OK     bool           `json:"ok"`
	Source []source.Check `json:"source"`
	// Registry: format.schema_registry's check, with Avro only.
	Registry []source.Check `json:"schema_registry,omitempty"`
}

// testConnection runs the connection test of the source and of the
// destination and prints the report: every source check, then every Kafka
// check and broker. Exit 0 only when every required check passed; 2 when
// the configuration is unusable.
func testConnection(ctx context.Context, inv *invocation) error {
	cfg, stdout := inv.cfg, inv.stdout
	opts := source.OptionsFor(cfg)
	opts.Logger = inv.log
	src, err := capture.New(ctx, opts)
	if err != nil {
		return &usageError{err.Error()}
	}
	defer src.Close()
	r := connectionReport{Source: conntest.SourceChecks(ctx, src, cfg, 30*time.Second)}
	r.Report = kafka.TestConnection(ctx, destination.Kafka(cfg.Destination), cfg.LogicalName(), destination.TestOptions(cfg)...)
	r.Registry = conntest.RegistryChecks(ctx, cfg, nil, true)
	r.OK = r.Report.OK
	for _, c := range append(r.Source, r.Registry...) {
		r.OK = r.OK && c.OK
	}
	if inv.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		printReport(stdout, r)
	}
	// The report shows every failed check: the exit code only.
	for _, c := range r.Checks {
		if c.Name == kafka.CheckConfiguration && !c.OK {
			return &reportedError{exitUsage, c.Detail}
		}
	}
	if !r.OK {
		return &reportedError{exitRuntime, "connection test failed"}
	}
	return nil
}

func printReport(w io.Writer, r connectionReport) {
	for _, c := range append(r.Source, r.Registry...) {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %-18s %s\n", mark, c.Name, c.Detail)
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(w, "     %-18s fix: %s\n", "", c.Fix)
		}
	}
	for _, c := range r.Checks {
		mark := "ok  "
		switch {
		case !c.OK && c.Required:
			mark = "FAIL"
		case !c.OK:
			mark = "no  "
		}
		fmt.Fprintf(w, "%s %-18s %s\n", mark, c.Name, c.Detail)
	}
	for _, b := range r.Brokers {
		if b.Reachable {
			fmt.Fprintf(w, "     broker %d at %s:%d reachable\n", b.ID, b.Host, b.Port)
		} else {
			fmt.Fprintf(w, "     %s (%s)\n", b.Error, b.Cause)
		}
	}
	if r.OK {
		fmt.Fprintln(w, "connection test passed")
	} else {
		fmt.Fprintln(w, "connection test FAILED")
	}
}
