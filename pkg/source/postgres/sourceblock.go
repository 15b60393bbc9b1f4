package postgres

import (
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
)

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

func init() {
	SourceBlock.TxID = txID
	SourceBlock.TxEndID = txEndID
}

// txID is Debezium's transaction id of a change: its transaction's xid
// and the change's own LSN ("<txId>:<lsn>"), so it differs from one
// change of a transaction to the next.
func txID(s *change.Source) string {
	b := strconv.AppendInt(make([]byte, 0, 32), s.Ints[slotTxID], 10)
	b = append(b, ':')
	return string(strconv.AppendInt(b, s.Ints[slotLSN], 10))
}

// txEndID is the id of a transaction's END: its xid and where Debezium's
// stream saw the commit (its last commit LSN, which the cursor records).
func txEndID(first *change.Source, cursor change.Position) string {
	pos, lsn, err := decodePosition(cursor)
	if err == nil && pos.Commit != "" {
		lsn, err = parseLSN(pos.Commit)
	}
	if err != nil {
		return txID(first)
	}
	b := strconv.AppendInt(make([]byte, 0, 32), first.Ints[slotTxID], 10)
	b = append(b, ':')
	return string(strconv.AppendUint(b, lsn, 10))
}
