package source

import (
	"context"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TableInfo is one table a source would capture, as `tributary tables`
// shows it.
type TableInfo struct {
	Table *change.Table // the shape as published: excluded columns left out, masked ones marked
	// ReplicaIdentity is PostgreSQL's (default, full, index, nothing); ""
	// for other sources.
	ReplicaIdentity string
	RowEstimate     int64    // the catalog's estimate; -1 when unknown
	Excluded        []string // columns source.exclude_columns leaves out
	Masked          []string // masked columns, each with how ("email: hashed SHA-256")
	// Problems say why run would refuse or leave out the table (a key
	// column excluded or masked, no replica identity); empty when fine.
	Problems []string
}

// Inventory is what a source's selection amounts to on its database now.
type Inventory struct {
	Tables    []TableInfo
	Missing   []string // source.tables plain names that match no table
	Unmatched []string // source.tables regular expressions that match no table
	// LeftOut are tables the selection matches that run leaves out, each
	// with why ("public.log: no replica identity …").
	LeftOut []string
	// Warnings are what run does differently than the configuration
	// asks, without refusing a table ("shop.orders: pre-images are off …").
	Warnings []string
	// Existing are the names of the tables the database has (within the
	// source's scope), for suggestions.
	Existing []string
}

// Lister is implemented by sources that can list what they would capture,
// without capturing anything.
type Lister interface {
	Tables(ctx context.Context) (Inventory, error)
}
