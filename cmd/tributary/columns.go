package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// columnTypesCheck is test-connection's "column types" line (issue 18):
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
