package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// testConnection runs the connection test of the destination and prints
// the report: every check, then every broker. Exit 0 only when every
// required check passed; 2 when the destination's configuration is
// unusable.
func testConnection(ctx context.Context, inv *invocation) error {
	cfg, stdout := inv.cfg, inv.stdout
	r := kafka.TestConnection(ctx, cfg.Destination, cfg.Destination.TopicPrefix)
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

func printReport(w io.Writer, r kafka.Report) {
	for _, c := range r.Checks {
		mark := "ok  "
		switch {
		case !c.OK && c.Required:
			mark = "FAIL"
		case !c.OK:
			mark = "no  "
		}
		fmt.Fprintf(w, "%s %-16s %s\n", mark, c.Name, c.Detail)
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
