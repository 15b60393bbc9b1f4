package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// tableRow is one line of `tributary tables` (and its --json element).
type tableRow struct {
	Table           string   `json:"table"`
	Topic           string   `json:"topic"`
	Key             []string `json:"key"`
	ReplicaIdentity string   `json:"replica_identity,omitempty"`
	RowEstimate     int64    `json:"row_estimate"`
	Excluded        []string `json:"excluded_columns"`
	Masked          []string `json:"masked_columns"`
	Problems        []string `json:"problems,omitempty"`
}

// tablesReport is the --json output of `tributary tables`.
type tablesReport struct {
	Tables   []tableRow `json:"tables"`
	Warnings []string   `json:"warnings"`
}

// listTables prints every table run would capture, with its topic, key
// columns, replica identity (PostgreSQL), estimated rows and the columns
// left out or masked (docs/configuration.md, "Choosing tables and
// columns"), then what in source.tables matches nothing. Exit 1 when no
// table would be captured.
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
	if len(r.Tables) == 0 {
		return errors.New("no table would be captured")
	}
	return nil
}

// inventory asks the source what it would capture and words it.
func inventory(ctx context.Context, cfg *config.Config, inv *invocation) (tablesReport, error) {
	var r tablesReport
	src, err := source.New(ctx, source.Options{Pipeline: cfg.Name, TopicPrefix: cfg.LogicalName(), Config: cfg.Source, Logger: inv.log,
		KeyColumns: cfg.Destination.KeyColumns})
	if err != nil {
		return r, &usageError{err.Error()}
	}
	defer src.Close()
	lister, ok := source.Unwrapped(src).(source.Lister)
	if !ok {
		return r, fmt.Errorf("source type %s cannot list its tables", cfg.Source.Type)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	found, err := lister.Tables(ctx)
	if err != nil {
		return r, err
	}
	return tablesOf(cfg, found), nil
}

// tablesOf words an inventory: topics and keys as the encoder run uses
// makes them, and a warning for each source.tables entry that matches
// nothing, with the closest table when one is close.
func tablesOf(cfg *config.Config, found source.Inventory) tablesReport {
	r := tablesReport{Tables: []tableRow{}, Warnings: tableWarnings(found)}
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.LogicalName(), Topic: cfg.Destination.Topic, KeyColumns: cfg.Destination.KeyColumns})
	for _, t := range found.Tables {
		row := tableRow{Table: t.Table.ID.String(), Topic: enc.Topic(t.Table), ReplicaIdentity: t.ReplicaIdentity, RowEstimate: t.RowEstimate,
			Excluded: nonNil(t.Excluded), Masked: nonNil(t.Masked), Problems: t.Problems}
		if cols, ok := cfg.Destination.KeyColumns[row.Table]; ok {
			row.Key = cols
		} else {
			row.Key = []string{}
			for _, k := range t.Table.Key {
				row.Key = append(row.Key, t.Table.Columns[k].Name)
			}
		}
		r.Tables = append(r.Tables, row)
	}
	return r
}

// tableWarnings names the source.tables entries that match nothing.
func tableWarnings(found source.Inventory) []string {
	w := []string{}
	for _, name := range found.Missing {
		msg := "source.tables: " + name + " does not exist (it is captured if it is created)"
		if near := config.Closest(name, found.Existing); near != "" {
			msg += "; did you mean " + near + "?"
		}
		w = append(w, msg)
	}
	for _, p := range found.Unmatched {
		w = append(w, "source.tables: the regular expression "+p+" matches no table (tables that match it are captured when they are created)")
	}
	return append(w, found.LeftOut...)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func printTables(w io.Writer, r tablesReport) {
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

// tablesCheck is test-connection's "listed tables" line: failed when no
// table would be captured, when a plain name of source.tables names no
// table (with the closest one), or when the column rules touch a key; a
// regular expression that matches nothing is only mentioned.
func tablesCheck(ctx context.Context, l source.Lister, cfg *config.Config) source.Check {
	c := source.Check{Name: "listed tables"}
	found, err := l.Tables(ctx)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	r := tablesOf(cfg, found)
	var problems []string
	for _, t := range r.Tables {
		problems = append(problems, t.Problems...)
	}
	switch {
	case len(r.Tables) == 0:
		c.Detail = "no table would be captured"
		c.Fix = "check source.tables and source.exclude_tables (`tributary tables` lists what they select)"
	case len(found.Missing) > 0:
		c.Detail = strings.Join(tableWarnings(source.Inventory{Missing: found.Missing, Existing: found.Existing}), "; ")
		c.Fix = "correct or remove the names in source.tables (run starts anyway, and captures such a table if it is created)"
	case len(problems) > 0:
		c.Detail = strings.Join(problems, "; ")
	default:
		c.OK = true
		c.Detail = fmt.Sprintf("%d tables would be captured (`tributary tables` lists them)", len(r.Tables))
		if len(found.Unmatched) > 0 {
			c.Detail += "; " + strings.Join(tableWarnings(source.Inventory{Unmatched: found.Unmatched}), "; ")
		}
	}
	return c
}
