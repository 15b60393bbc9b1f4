package itest

import (
	"strings"
)

// mysqlVolatileFields are the value fields that legitimately differ
// between Debezium's MariaDB connector and Tributary on every message: the
// processing times (each connector's own clock) and source.version (see
// mariadbPeerVersion).
//
// Everything else of a streamed message — schemas, keys, row images, op,
// connector, name, db, table, snapshot, server_id, gtid, file, pos, row,
// thread, query and source.ts_ms (the binlog event's time, the same for
// both) — must be identical.
var mysqlVolatileFields = []string{
	"payload.ts_ms", "payload.ts_us", "payload.ts_ns",
	"payload.source.version",
}

// mysqlSnapshotVolatileFields are volatile in snapshot ('r') messages
// only: each connector reads its own snapshot, at its own time and binlog
// position (the same position only when nothing was written in between,
// and the test MariaDB is shared with other tests).
var mysqlSnapshotVolatileFields = []string{
	"payload.source.ts_ms", "payload.source.ts_us", "payload.source.ts_ns",
	"payload.source.file", "payload.source.pos",
}

// SanitizeMySQL masks mysqlVolatileFields, and mysqlSnapshotVolatileFields
// in 'r' messages, whose ZonedTimestamp values it also normalises (see
// zonedFraction).
func SanitizeMySQL(v any) any {
	v = sanitizeFields(v, mysqlVolatileFields)
	if m, ok := v.(map[string]any); ok {
		if p, ok := m["payload"].(map[string]any); ok && p["op"] == "r" {
			v = sanitizeFields(v, mysqlSnapshotVolatileFields)
		}
	}
	return v
}

// volatileFields are the value fields that legitimately differ between two
// connectors reading the same changes: processing and commit times (each
// connector's own clock, and Debezium's snapshot time versus ours), and the
// log coordinates, which depend on where each connector's slot started and
// on Debezium's snapshot transaction (txId, lsn and sequence of 'r' rows).
// Everything else — schemas, keys, row images, op, source.version,
// connector, name, db, schema, table, snapshot markers, xmin, origin — must
// be identical.
var volatileFields = []string{
	"payload.ts_ms", "payload.ts_us", "payload.ts_ns",
	"payload.source.ts_ms", "payload.source.ts_us", "payload.source.ts_ns",
	"payload.source.lsn", "payload.source.txId", "payload.source.sequence",
}

// Sanitize replaces every volatile field of a decoded value with a marker.
func Sanitize(v any) any { return sanitizeFields(v, volatileFields) }

// sanitizeFields replaces each of fields ("payload.source.ts_ms", …) of a
// decoded value with a marker.
func sanitizeFields(v any, fields []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for _, path := range fields {
		parts := strings.Split(path, ".")
		cur := m
		for i, p := range parts {
			if i == len(parts)-1 {
				if _, ok := cur[p]; ok {
					cur[p] = "<volatile>"
				}
				break
			}
			next, ok := cur[p].(map[string]any)
			if !ok {
				break
			}
			cur = next
		}
	}
	return m
}

// streamVolatileFields are what Sanitize masks in a streamed (not 'r')
// PostgreSQL message when both connectors decode the same WAL (the
// differential oracle): the clocks only. source.lsn, txId and sequence
// (the last commit's LSN and the change's) come from the WAL and must
// agree.
var streamVolatileFields = []string{
	"payload.ts_ms", "payload.ts_us", "payload.ts_ns",
	"payload.source.ts_ms", "payload.source.ts_us", "payload.source.ts_ns",
}

// SanitizeStream is Sanitize for two readers of the same WAL: a streamed
// message keeps its log coordinates (streamVolatileFields); a snapshot
// ('r') message, read by each at its own time, has them masked.
func SanitizeStream(v any) any {
	if m, ok := v.(map[string]any); ok {
		if p, ok := m["payload"].(map[string]any); ok && p["op"] != "r" {
			return sanitizeFields(v, streamVolatileFields)
		}
	}
	return Sanitize(v)
}
