package postgres

import "github.com/tributary-cdc/tributary/pkg/change"

// SourceBlock is the source block of Debezium's PostgreSQL connector,
// io.debezium.connector.postgresql.Source: after the common fields,
// PostgresSourceInfoStructMaker's. xmin is always null (Debezium fills it
// only with xmin.fetch.interval.ms set, which we do not offer); origin
// and origin_lsn (the replication origin of a change applied by logical
// replication) are null, as Debezium writes them for pgoutput without
// origin messages. A zero txId or lsn (unknown) is written as null.
var SourceBlock = &change.SourceBlock{
	Connector:  "postgresql",
	SchemaName: "io.debezium.connector.postgresql.Source",
	Fields: []change.SourceField{
		{Name: "schema", Type: change.SourceString, From: change.FromSchema},
		{Name: "table", Type: change.SourceString, From: change.FromTable},
		{Name: "txId", Type: change.SourceInt64, Optional: true, Slot: slotTxID},
		{Name: "lsn", Type: change.SourceInt64, Optional: true, Slot: slotLSN},
		{Name: "xmin", Type: change.SourceInt64, Optional: true, From: change.FromNull},
		{Name: "origin", Type: change.SourceString, Optional: true, From: change.FromNull},
		{Name: "origin_lsn", Type: change.SourceInt64, Optional: true, From: change.FromNull},
	},
	KeyMissingHint: "key the table by its replica identity, or set REPLICA IDENTITY FULL; see docs/postgresql.md",
}

// The slots of SourceBlock's fields in change.Source.Ints.
const (
	slotTxID = iota
	slotLSN
)
