package debezium

import (
	"slices"
	"strconv"
	"unicode/utf16"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// TransactionTopic is the topic of the transactions' BEGIN and END
// events: Debezium's <topic.prefix>.transaction.
func (e *Encoder) TransactionTopic() string { return e.prefix + ".transaction" }

// appendTxBlock appends a change's transaction block (event.block).
func appendTxBlock(b []byte, tx *change.Tx) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, tx.ID)
	b = append(b, `,"total_order":`...)
	b = strconv.AppendInt(b, tx.Total, 10)
	b = append(b, `,"data_collection_order":`...)
	b = strconv.AppendInt(b, tx.Table, 10)
	return append(b, '}')
}

// The transaction topic's schemas, as Debezium's TransactionStructMaker
// declares them.
var (
	txKeySchema = connectSchema{typ: "struct", fields: []connectField{{"id", stringSchema}},
		name: "io.debezium.connector.common.TransactionMetadataKey", version: 1}
	txValueSchema = connectSchema{typ: "struct", fields: []connectField{
		{"status", stringSchema},
		{"id", stringSchema},
		{"event_count", optionalInt64Schema},
		{"data_collections", connectSchema{typ: "array", optional: true, items: &connectSchema{typ: "struct", fields: []connectField{
			{"data_collection", stringSchema},
			{"event_count", int64Schema},
		}, optional: true, name: "event.collection", version: 1}}},
		{"ts_ms", int64Schema},
	}, name: "io.debezium.connector.common.TransactionMetadataValue", version: 1}
	txKeyHead   = string(txKeySchema.appendJSON([]byte(`{"schema":`), "")) + `,"payload":`
	txValueHead = string(txValueSchema.appendJSON([]byte(`{"schema":`), "")) + `,"payload":`
)

// AppendTxMark appends the key and the value of a transaction's BEGIN or
// END event to dst, as Debezium writes them with JsonConverter; the value
// starts at dst[valueStart:].
func (e *Encoder) AppendTxMark(dst []byte, m *change.TxMark) (out []byte, valueStart int) {
	schemas := !e.format.NoSchemas
	if schemas {
		dst = append(dst, txKeyHead...)
	}
	dst = append(dst, `{"id":`...)
	dst = jsonstr.Append(dst, m.ID)
	dst = append(dst, '}')
	if schemas {
		dst = append(dst, '}')
	}
	valueStart = len(dst)
	if schemas {
		dst = append(dst, txValueHead...)
	}
	if m.End {
		dst = append(dst, `{"status":"END","id":`...)
	} else {
		dst = append(dst, `{"status":"BEGIN","id":`...)
	}
	dst = jsonstr.Append(dst, m.ID)
	if !m.End {
		dst = append(dst, `,"event_count":null,"data_collections":null`...)
	} else {
		dst = append(dst, `,"event_count":`...)
		dst = strconv.AppendInt(dst, m.Count, 10)
		dst = append(dst, `,"data_collections":[`...)
		for i, t := range javaHashOrder(m.Tables) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"data_collection":`...)
			dst = jsonstr.Append(dst, t.Name)
			dst = append(dst, `,"event_count":`...)
			dst = strconv.AppendInt(dst, t.Count, 10)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"ts_ms":`...)
	dst = strconv.AppendInt(dst, floorDiv(m.CommitMicros, 1000), 10)
	dst = append(dst, '}')
	if schemas {
		dst = append(dst, '}')
	}
	return dst, valueStart
}

// javaHashOrder returns tables (in the order first changed) in the order
// Debezium lists them in an END: it counts them in a java.util.HashMap
// keyed by name, and writes the map in its iteration order, by bucket of
// the table size the map grew to and, within a bucket, by insertion.
func javaHashOrder(tables []change.TxTable) []change.TxTable {
	if len(tables) < 2 {
		return tables
	}
	// A HashMap starts with 16 buckets and doubles past 3/4 full.
	n := 16
	for len(tables) > n*3/4 {
		n *= 2
	}
	out := slices.Clone(tables)
	slices.SortStableFunc(out, func(a, b change.TxTable) int {
		return javaBucket(a.Name, n) - javaBucket(b.Name, n)
	})
	return out
}

// javaBucket is the HashMap bucket of a String key among n: its
// hashCode (over UTF-16 code units) with the high half folded into the
// low.
func javaBucket(s string, n int) int {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + r1
			h = 31*h + r2
			continue
		}
		h = 31*h + r
	}
	u := uint32(h)
	u ^= u >> 16
	return int(u & uint32(n-1))
}
