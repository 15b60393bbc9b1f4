package capture

import (
	"context"
	"fmt"
	"slices"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// The drivers built in: one line each, a driver package's Kind and its
// constructor (docs/architecture.md, "Adding a source").
var drivers = registry(
	driver(postgres.Kind, postgres.New),
	driver(mysql.Kind, mysql.New),
	driver(mongodb.Kind, mongodb.New),
)

// entry is one registered driver: its Kind and its constructor.
type entry struct {
	kind source.Kind
	new  func(context.Context, source.Options) (Database, error)
}

// driver pairs a Kind with its driver's constructor; D must be a
// Database, checked when this compiles.
func driver[D Database](k source.Kind, mk func(context.Context, source.Options) (D, error)) entry {
	return entry{kind: k, new: func(ctx context.Context, o source.Options) (Database, error) { return mk(ctx, o) }}
}

// registry maps each type to its constructor and gives pkg/config each
// kind's rules, in the order of the lines above (the order messages list
// the types in).
func registry(entries ...entry) map[string]func(context.Context, source.Options) (Database, error) {
	m := map[string]func(context.Context, source.Options) (Database, error){}
	for _, e := range entries {
		if _, dup := m[e.kind.Type]; dup || e.kind.Type == "" {
			panic(fmt.Sprintf("capture: driver type %q registered twice or empty", e.kind.Type))
		}
		m[e.kind.Type] = e.new
		kinds = append(kinds, e.kind)
		config.RegisterSource(e.kind.SourceKind)
	}
	return m
}

var kinds []source.Kind

// Types lists the source types there is a driver for.
func Types() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Type
	}
	slices.Sort(out)
	return out
}

// KindOf is the registered Kind of a source.type (its canonical
// spelling, as a validated configuration has it).
func KindOf(typ string) (source.Kind, bool) {
	for _, k := range kinds {
		if k.Type == typ {
			return k, true
		}
	}
	return source.Kind{}, false
}
