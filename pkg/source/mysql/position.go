package mysql

import (
	"encoding/json"
	"fmt"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// position is this source's cursor, its fields of the checkpoint's
// position (the capture loop keeps its own beside them,
// pkg/capture/envelope.go): the binlog coordinates just after the last
// transaction whose changes are all published, as a GTID set (in the
// flavour's format) when the server has GTIDs, and always as a file and
// position. In a checkpoint of an earlier release whose backfill, run
// before streaming, did not finish (capture.Legacy), Table and After say
// how far it got (tables before Table are done; After is the primary key,
// hex, of the last row published of Table), and File/Pos/GTID are where
// streaming starts.
type position struct {
	Flavor string   `json:"flavor"`
	GTID   string   `json:"gtid,omitempty"`
	File   string   `json:"file"`
	Pos    uint32   `json:"pos"`
	Table  string   `json:"table,omitempty"`
	After  []string `json:"after,omitempty"`
	// Shapes is the schema history at this position when the server does
	// not log binlog_row_metadata = FULL (history.go); written by
	// history.attach, never by encode.
	Shapes json.RawMessage `json:"shapes,omitempty"`
}

func (p position) encode() change.Position {
	b, _ := json.Marshal(p) // strings, numbers and a bool: cannot fail
	return b
}

func decodePosition(b change.Position) (position, error) {
	var p position
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("mysql position %q: %w", trunc(b), err)
	}
	switch p.Flavor {
	case flavorMySQL, flavorMariaDB:
	default:
		return p, fmt.Errorf("mysql position %q: unknown flavor", trunc(b))
	}
	if p.File == "" {
		return p, fmt.Errorf("mysql position %q: no binlog file", trunc(b))
	}
	if p.GTID != "" {
		if _, err := parseGTIDSet(p.Flavor, p.GTID); err != nil {
			return p, fmt.Errorf("mysql position: %w", err)
		}
	}
	return p, nil
}

// parseGTIDSet reads a GTID set in the flavour's format: MySQL's
// "uuid:1-5:7,uuid2:1-3" or MariaDB's "domain-server-sequence,...".
func parseGTIDSet(flavor, s string) (gomysql.GTIDSet, error) {
	var set gomysql.GTIDSet
	var err error
	switch flavor {
	case flavorMariaDB:
		set, err = gomysql.ParseMariadbGTIDSet(strings.TrimSpace(s))
	default:
		set, err = gomysql.ParseMysqlGTIDSet(strings.Join(strings.Fields(s), ""))
	}
	if err != nil {
		return nil, fmt.Errorf("bad %s GTID set %q", flavor, trunc([]byte(s)))
	}
	return set, nil
}

func trunc(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
