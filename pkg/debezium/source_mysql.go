package debezium

import (
	"strconv"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// change.Source.Connector values of the binlog connectors, and what
// Debezium 3.x writes in source.connector: MySQL and MariaDB have separate
// connectors (debezium-connector-mysql, debezium-connector-mariadb) whose
// source blocks differ only in the schema name.
const (
	connectorMySQL   = "mysql"
	connectorMariaDB = "mariadb"
)

// binlogSourceSchema is io.debezium.connector.<mysql|mariadb>.Source: the
// common source fields followed by BinlogSourceInfoStructMaker's own
// (table, server_id, gtid, file, pos, row, thread, query).
func binlogSourceSchema(connector string) connectSchema {
	return connectSchema{
		typ: "struct",
		fields: append(commonSourceFields(), []connectField{
			{"table", optionalStringSchema},
			{"server_id", int64Schema},
			{"gtid", optionalStringSchema},
			{"file", stringSchema},
			{"pos", int64Schema},
			{"row", connectSchema{typ: "int32"}},
			{"thread", optionalInt64Schema},
			{"query", optionalStringSchema},
		}...),
		name:    "io.debezium.connector." + connector + ".Source",
		version: 1,
	}
}

// binlogColumnSchema maps the kinds only the binlog connectors produce, as
// BinlogValueConverters does: YEAR → io.debezium.time.Year (int32), ENUM →
// io.debezium.data.Enum, SET → io.debezium.data.EnumSet (strings with the
// "allowed" values), BIT(n>1) → io.debezium.data.Bits (bytes, "length").
// ok is false for any other kind.
func binlogColumnSchema(c *change.Column) (s connectSchema, enc colEnc, ok bool) {
	s.optional = c.Optional
	t := &c.Type
	switch t.Kind {
	case change.KindYear:
		s.typ, enc = "int32", encInt32
		s.name, s.version = "io.debezium.time.Year", 1
	case change.KindEnum:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.Enum", 1
		s.params = []param{{"allowed", t.Values}}
	case change.KindSet:
		s.typ, enc = "string", encString
		s.name, s.version = "io.debezium.data.EnumSet", 1
		s.params = []param{{"allowed", t.Values}}
	case change.KindBits:
		s.typ, enc = "bytes", encBytes
		s.name, s.version = "io.debezium.data.Bits", 1
		s.params = []param{{"length", strconv.Itoa(t.Length)}}
	default:
		return s, 0, false
	}
	return s, enc, true
}

// binlogValueHead builds the value head whose envelope embeds the binlog
// connector's source schema, for the table's source block.
func (e *Encoder) binlogValueHead(c *tableCodec, connector string) []byte {
	if e.format.NoSchemas {
		return c.valueHead // no schema: the same for every connector
	}
	// The Value struct is the one build made (the encoder's column
	// schemas, unknown types included); only the source block differs.
	value := connectSchema{typ: "struct", fields: c.fields, optional: true, name: c.schema + ".Value"}
	env := envelopeSchema(c.schema, value, binlogSourceSchema(connector))
	var head []byte
	head = append(head, `{"schema":`...)
	head = env.appendJSON(head, "")
	return append(head, `,"payload":{"before":`...)
}

// appendBinlogFields appends a MySQL or MariaDB source block's fields
// after name, and closes it. gtid, thread and query are null when unknown
// (zero), as Debezium leaves them unset; query is only known with
// binlog_rows_query_log_events / binlog_annotate_row_events, which this
// source does not read.
func appendBinlogFields(b []byte, t *change.Table, s *change.Source) []byte {
	b = appendSourceCommon(b, t, s)
	b = append(b, `,"table":`...)
	b = appendString(b, orDefault(s.Table, t.ID.Name))
	b = append(b, `,"server_id":`...)
	b = strconv.AppendInt(b, s.ServerID, 10)
	b = append(b, `,"gtid":`...)
	if s.GTID == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, s.GTID)
	}
	b = append(b, `,"file":`...)
	b = appendString(b, s.File)
	b = append(b, `,"pos":`...)
	b = strconv.AppendInt(b, s.Pos, 10)
	b = append(b, `,"row":`...)
	b = strconv.AppendInt(b, int64(s.Row), 10)
	b = append(b, `,"thread":`...)
	b = appendIntOrNull(b, s.Thread)
	b = append(b, `,"query":`...)
	if s.Query == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, s.Query)
	}
	return append(b, '}')
}
