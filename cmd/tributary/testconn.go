package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// connectionReport is Kafka's report with the source's checks beside it;
// OK only when both passed.
type connectionReport struct {
	kafka.Report
	OK     bool           `json:"ok"`
	Source []source.Check `json:"source"`
}

// testConnection runs the connection test of the source and of the
// destination and prints the report: every source check, then every Kafka
// check and broker. Exit 0 only when every required check passed; 2 when
// the configuration is unusable.
func testConnection(ctx context.Context, inv *invocation) error {
	cfg, stdout := inv.cfg, inv.stdout
	src, err := source.New(ctx, source.Options{Pipeline: cfg.Name, TopicPrefix: cfg.LogicalName(), Config: cfg.Source, Logger: inv.log,
		KeyColumns: cfg.Destination.KeyColumns})
	if err != nil {
		return &usageError{err.Error()}
	}
	defer src.Close()
	r := connectionReport{Source: sourceChecks(ctx, src, cfg)}
	r.Report = kafka.TestConnection(ctx, cfg.Destination, cfg.LogicalName(), kafka.DeliveryOptions(cfg)...)
	r.OK = r.Report.OK
	for _, c := range r.Source {
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
	for _, c := range r.Checks {
		if c.Name == kafka.CheckConfiguration && !c.OK {
			return &usageError{c.Detail}
		}
	}
	if !r.OK {
		return errors.New("connection test failed")
	}
	return nil
}

// sourceChecks runs the source's own checks, bounded so a source that does
// not answer cannot hold the Kafka checks back for long.
// After a successful sign-in, sources that can list and describe their
// tables add the "listed tables" and "column types" lines.
func sourceChecks(ctx context.Context, src source.Source, cfg *config.Config) []source.Check {
	src = source.Unwrapped(src) // source.New wraps it in a Reconnecting
	checker, ok := src.(source.Checker)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	checks := checker.Check(ctx)
	signedIn := len(checks) > 0 && checks[0].Name == "source connection" && checks[0].OK
	if l, ok := src.(source.Lister); ok && signedIn {
		checks = append(checks, tablesCheck(ctx, l, cfg))
	}
	if d, ok := src.(source.Describer); ok && signedIn {
		checks = append(checks, columnTypesCheck(ctx, d, cfg.Source))
	}
	return checks
}

func printReport(w io.Writer, r connectionReport) {
	for _, c := range r.Source {
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
