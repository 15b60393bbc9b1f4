package itest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// mariadbPeerVersion is the Debezium release of the MariaDB side-by-side
// test: integration/debezium/mariadb/pom.xml. The MariaDB connector is not
// on Maven Central for 3.6.x (newest: 3.5.0.Final) and the 3.6.1 MySQL
// connector refuses MariaDB, so the peer is the newest MariaDB connector
// there is; its source.version ("3.5.0.Final" where we write
// debeziumVersion) is the one expected difference, checked and then masked.
const mariadbPeerVersion = "3.5.0.Final"

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
			if after, ok := p["after"].(map[string]any); ok {
				for k, x := range after {
					if s, ok := x.(string); ok {
						after[k] = zonedFraction.ReplaceAllString(s, "$1Z")
					}
				}
			}
		}
	}
	return v
}

// zonedFraction matches the fraction of an io.debezium.time.ZonedTimestamp
// with its trailing zeros. A deliberate difference: Debezium's binlog
// connectors write a TIMESTAMP(n) value with n fractional digits when it
// comes from the binlog ("2024-03-01T10:00:00.120Z" for TIMESTAMP(3)) but
// with the trailing zeros dropped when it comes from the snapshot's JDBC
// read ("2024-03-01T10:00:00.12Z"). Tributary writes n digits in both, so
// a column's values have one format; 'r' messages are compared with the
// zeros trimmed on both sides.
var zonedFraction = regexp.MustCompile(`^(\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d*[1-9])?)\.?0*Z$`)

// KeepFidelityOutput writes both sides of topic as JSON lines to the
// folder $FIDELITY_KEEP names, when set, for a look at whole messages.
func KeepFidelityOutput(t *testing.T, topic string, dbz, trib []RawRecord) {
	dir := os.Getenv("FIDELITY_KEEP")
	if dir == "" {
		return
	}
	for side, recs := range map[string][]RawRecord{"debezium": dbz, "tributary": trib} {
		var b []byte
		for _, r := range recs {
			line, _ := json.Marshal(map[string]any{"key": r.Key, "value": r.Value})
			b = append(append(b, line...), '\n')
		}
		path := filepath.Join(dir, topic+"."+side+".jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Errorf("FIDELITY_KEEP: %v", err)
		}
	}
	t.Logf("FIDELITY_KEEP: both sides of %s written to %s", topic, dir)
}

// CheckSourceVersions records a difference unless every Debezium message
// says mariadbPeerVersion and every Tributary message debeziumVersion.
func CheckSourceVersions(d *FidelityDiffs, topic string, dbz, trib []RawRecord) {
	check := func(recs []RawRecord, want, who string) {
		for i, r := range recs {
			m, _ := r.Value.(map[string]any)
			p, _ := m["payload"].(map[string]any)
			s, _ := p["source"].(map[string]any)
			if s == nil {
				continue
			}
			if got := fmt.Sprint(s["version"]); got != want {
				d.Add(topic, i, "value.payload.source.version ("+who+")", want, got)
				return
			}
		}
	}
	check(dbz, mariadbPeerVersion, "debezium")
	check(trib, debeziumVersion, "tributary")
}
