package mysql

import "github.com/tributary-cdc/tributary/pkg/change"

// MySQLSourceBlock and MariaDBSourceBlock are the source blocks of
// Debezium's MySQL and MariaDB connectors, which differ only in the
// connector and schema names: after the common fields,
// BinlogSourceInfoStructMaker's. gtid, thread and query are null when
// unknown (zero), as Debezium leaves them unset; query is only known with
// binlog_rows_query_log_events / binlog_annotate_row_events, which this
// source does not read. Their snapshot reads go through JDBC, which trims
// a TIMESTAMP(n)'s fraction ("2000-02-29T12:00:00Z", "…00.12Z") where the
// binlog's rows and the schema's default have n digits.
var (
	MySQLSourceBlock   = binlogSourceBlock(flavorMySQL)
	MariaDBSourceBlock = binlogSourceBlock(flavorMariaDB)
)

// The slots of the binlog source blocks' fields in change.Source.Ints and
// change.Source.Strings.
const (
	slotServerID = iota
	slotPos
	slotRow
	slotThread
)

const (
	slotGTID = iota
	slotFile
	slotQuery
)

func binlogSourceBlock(connector string) *change.SourceBlock {
	return &change.SourceBlock{
		Connector:  connector,
		SchemaName: "io.debezium.connector." + connector + ".Source",
		Fields: []change.SourceField{
			{Name: "table", Type: change.SourceString, Optional: true, From: change.FromTable},
			{Name: "server_id", Type: change.SourceInt64, Slot: slotServerID},
			{Name: "gtid", Type: change.SourceString, Optional: true, Slot: slotGTID},
			{Name: "file", Type: change.SourceString, Slot: slotFile},
			{Name: "pos", Type: change.SourceInt64, Slot: slotPos},
			{Name: "row", Type: change.SourceInt32, Slot: slotRow},
			{Name: "thread", Type: change.SourceInt64, Optional: true, Slot: slotThread},
			{Name: "query", Type: change.SourceString, Optional: true, Slot: slotQuery},
		},
		SnapshotZonedTrimmed: true,
	}
}

// sourceBlockOf is the source block of flavor.
func sourceBlockOf(flavor string) *change.SourceBlock {
	if flavor == flavorMariaDB {
		return MariaDBSourceBlock
	}
	return MySQLSourceBlock
}

func init() {
	MySQLSourceBlock.TxID = txID
	MariaDBSourceBlock.TxID = txID
}

// txID is Debezium's transaction id of a change: its transaction's GTID.
// Without GTIDs (a MySQL server with gtid_mode OFF) it is "": the changes
// are in no transaction, rather than named in a way Debezium's are not
// known to be.
func txID(s *change.Source) string { return s.Strings[slotGTID] }
