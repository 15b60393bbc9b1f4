// Package conntest is the source half of the connection test, shared by
// `tributary test-connection`, `tributary tables` and the connection-test
// Lambda (functions/connection-test): the source's own checks, the
// "listed tables" line (what run would capture, by the rules of
// docs/configuration.md "Choosing tables and columns") and the "column
// types" line; and the "schema registry" line (registry.go). The Kafka
// half is pkg/kafka's connection test.
package conntest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Source is what the connection test asks of a source: its driver's
// capabilities (pkg/capture's Capture), each an error when the driver
// lacks it.
type Source interface {
	Checker() (source.Checker, error)
	Lister() (source.Lister, error)
	Describer() (source.Describer, error)
}

// SourceChecks runs the source's own checks within budget, so a source
// that does not answer cannot hold the Kafka checks back for long: nil
// when the source has none.
// After a successful sign-in, sources that can list and describe their
// tables add the "listed tables" and "column types" lines.
func SourceChecks(ctx context.Context, src Source, cfg *config.Config, budget time.Duration) []source.Check {
	checker, err := src.Checker()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	checks := checker.Check(ctx)
	signedIn := len(checks) > 0 && checks[0].Name == "source connection" && checks[0].OK
	if l, err := src.Lister(); err == nil && signedIn {
		checks = append(checks, tablesCheck(ctx, l, cfg))
	}
	if d, err := src.Describer(); err == nil && signedIn {
		checks = append(checks, columnTypesCheck(ctx, d, cfg.Source))
	}
	return checks
}

// TableRow is one line of `tributary tables` (and its --json element).
type TableRow struct {
	Table           string   `json:"table"`
	Topic           string   `json:"topic"`
	Key             []string `json:"key"`
	ReplicaIdentity string   `json:"replica_identity,omitempty"`
	RowEstimate     int64    `json:"row_estimate"`
	Excluded        []string `json:"excluded_columns"`
	Masked          []string `json:"masked_columns"`
	Problems        []string `json:"problems,omitempty"`
}

// TablesReport is what `tributary tables` prints (--json: as is).
type TablesReport struct {
	Tables   []TableRow `json:"tables"`
	Warnings []string   `json:"warnings"`
}

// Tables words an inventory: topics and keys as the encoder run uses
// makes them, and a warning for each source.tables entry that matches
// nothing, with the closest table when one is close.
func Tables(cfg *config.Config, found source.Inventory) TablesReport {
	r := TablesReport{Tables: []TableRow{}, Warnings: tableWarnings(found)}
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.LogicalName(), Topic: cfg.Destination.Topic, KeyColumns: cfg.Destination.KeyColumns, Routes: cfg.TopicRoutes()})
	for _, t := range found.Tables {
		if len(t.Table.Columns) == 0 {
			// Nothing of its rows can be published (pipeline.reportNoColumns).
			r.Warnings = append(r.Warnings, t.Table.ID.String()+": the table has no columns; its rows are not published")
			continue
		}
		row := TableRow{Table: t.Table.ID.String(), Topic: enc.Topic(t.Table), ReplicaIdentity: t.ReplicaIdentity, RowEstimate: t.RowEstimate,
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
	return append(append(w, found.LeftOut...), found.Warnings...)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
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
	r := Tables(cfg, found)
	var problems []string
	for _, t := range r.Tables {
		problems = append(problems, t.Problems...)
	}
	switch {
	case len(r.Tables) == 0:
		c.Detail = "no table would be captured"
		if len(found.Missing) > 0 {
			c.Detail += ": " + strings.Join(tableWarnings(source.Inventory{Missing: found.Missing, Existing: found.Existing}), "; ")
		}
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

// columnTypesCheck is test-connection's "column types" line:
// the columns of the captured tables that run would leave out of every
// message, or publish as text with source.include_unknown_types. It asks
// the encoder run uses (Encoder.Dropped, which also makes run's "column
// left out of messages" warning), so the two never disagree. It is
// information, not a failure: run starts all the same and warns.
func columnTypesCheck(ctx context.Context, d source.Describer, cfg config.Source) source.Check {
	c := source.Check{Name: "column types", OK: true}
	tables, err := d.Describe(ctx)
	if err != nil {
		c.OK, c.Detail = false, "cannot read the captured tables' columns: "+err.Error()
		return c
	}
	c.Detail = columnTypesDetail(tables, cfg.IncludeUnknownTypes)
	return c
}

// columnTypesDetail words the check from the tables' shapes.
func columnTypesDetail(tables []*change.Table, includeUnknown bool) string {
	strict := debezium.NewEncoder(debezium.Options{})
	used := debezium.NewEncoder(debezium.Options{IncludeUnknownTypes: includeUnknown})
	var dropped, asText []string
	for _, t := range tables {
		left := map[string]bool{}
		for _, col := range used.Dropped(t) {
			left[col.Name] = true
			dropped = append(dropped, fmt.Sprintf("%s.%s (%s)", t.ID, col.Name, col.Type.Name))
		}
		for _, col := range strict.Dropped(t) {
			if !left[col.Name] {
				asText = append(asText, fmt.Sprintf("%s.%s (%s)", t.ID, col.Name, col.Type.Name))
			}
		}
	}
	var parts []string
	if len(dropped) > 0 {
		s := "left out of messages, Tributary cannot encode their type: " + strings.Join(dropped, ", ")
		if !includeUnknown {
			s += " (set source.include_unknown_types to publish them as text)"
		}
		parts = append(parts, s)
	}
	if len(asText) > 0 {
		parts = append(parts, "published as text (source.include_unknown_types): "+strings.Join(asText, ", "))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("every column of the %d captured tables has an encoding", len(tables))
	}
	return strings.Join(parts, "; ")
}
