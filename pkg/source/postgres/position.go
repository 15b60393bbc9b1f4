package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// position is this source's cursor, its fields of the checkpoint's
// position (the capture loop keeps its own beside them,
// pkg/capture/envelope.go). LSN is the end of the last transaction whose
// changes are all published (the slot's confirmed flush point). In a
// checkpoint of an earlier release whose backfill, run before streaming,
// did not finish (capture.Legacy), LSN is the slot's consistent point and
// Backfill says how far the backfill got.
type position struct {
	Slot string `json:"slot"`
	LSN  string `json:"lsn"`
	// Commit is where the last transaction with changes ended, when that
	// is not LSN (transactions of logical decoding messages alone came
	// after it; 0/0: none yet): the first element of source.sequence
	// after a restart.
	Commit   string            `json:"commit,omitempty"`
	Backfill *backfillProgress `json:"backfill,omitempty"`
	// Dropped maps the OID of each captured table that was dropped while
	// changes to it may still be in the slot to its schema.table name
	// (Tables names a table created since under that name by its own
	// OID), and FullKeys the OID of each captured table under REPLICA
	// IDENTITY FULL to its key columns (under FULL a Relation message
	// flags every column): a restart goes on publishing a dropped table's
	// changes, under its key (dropped.go).
	Dropped  map[uint32]string   `json:"dropped,omitempty"`
	FullKeys map[uint32][]string `json:"full_keys,omitempty"`
	// InitialOnly says a run of snapshot_mode initial_only made the slot
	// and only such runs read it since: when the backfill ends it is
	// dropped (FinishBackfilled). A slot a pipeline streamed from under
	// another mode may hold changes no run has published yet: it is kept.
	InitialOnly bool `json:"initial_only,omitempty"`
}

// backfillProgress is how far an unfinished backfill of an earlier
// release (which backfilled before streaming) got: every row up to
// and including it is published and acknowledged (the position is only
// checkpointed once they are).
type backfillProgress struct {
	// Done lists the tables (schema.table) whose every row is published.
	Done []string `json:"done,omitempty"`
	// Table is the table being read and Key the primary key of its last
	// published row: the raw bytes of its text values in key order
	// (base64 in JSON), so that a key in a non-UTF-8 database (SQL_ASCII)
	// survives the JSON round trip byte for byte. After is the same key as
	// strings, for people and for positions written before Key existed;
	// JSON replaces invalid UTF-8 in it, so it is read only when Key is
	// absent. Both are empty when the table has no primary key (it is then
	// read again from its start).
	Table string   `json:"table,omitempty"`
	After []string `json:"after,omitempty"`
	Key   [][]byte `json:"key,omitempty"`
	// Rows counts the rows published so far, over all tables.
	Rows int64 `json:"rows"`
}

func (p position) encode() change.Position {
	b, _ := json.Marshal(p) // strings and a bool: cannot fail
	return b
}

func decodePosition(b change.Position) (position, uint64, error) {
	var p position
	if err := json.Unmarshal(b, &p); err != nil {
		return p, 0, fmt.Errorf("postgres position %q: %w", trunc(b), err)
	}
	lsn, err := parseLSN(p.LSN)
	if err != nil {
		return p, 0, fmt.Errorf("postgres position: %w", err)
	}
	if p.Backfill != nil && (p.Backfill.Rows < 0 ||
		((len(p.Backfill.After) > 0 || len(p.Backfill.Key) > 0) && p.Backfill.Table == "")) {
		return p, 0, fmt.Errorf("postgres position: inconsistent backfill progress")
	}
	return p, lsn, nil
}

// resumeKey is the checkpointed key to read on after, as raw text values.
func (b *backfillProgress) resumeKey() [][]byte {
	if len(b.Key) > 0 {
		return b.Key
	}
	var key [][]byte
	for _, v := range b.After {
		key = append(key, []byte(v))
	}
	return key
}

// encodeTables encodes a captured-table map, the captured set's record
// (each table by schema.table to its OID, so that a table dropped and
// created again under the same name is seen as new); nil
// encodes as {} so that "none captured" differs from "not recorded".
func encodeTables(m map[string]uint32) json.RawMessage {
	if m == nil {
		m = map[string]uint32{}
	}
	b, _ := json.Marshal(m) // string keys and numbers: cannot fail
	return b
}

func decodeTables(raw json.RawMessage) (map[string]uint32, error) {
	var m map[string]uint32
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

func parseLSN(s string) (uint64, error) {
	lsn, err := pglogrepl.ParseLSN(s)
	if err != nil {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	return uint64(lsn), nil
}

// formatLSN writes an LSN as PostgreSQL does (pg_lsn's text, pglogrepl's
// LSN.String): the high and low 32 bits in upper-case hex, "16/B374D848".
func formatLSN(lsn uint64) string { return string(appendLSN(make([]byte, 0, 17), lsn)) }

// appendLSN appends formatLSN(lsn) to b.
func appendLSN(b []byte, lsn uint64) []byte {
	b = appendHex32(b, uint32(lsn>>32))
	b = append(b, '/')
	return appendHex32(b, uint32(lsn))
}

// appendHex32 appends v in upper-case hex without leading zeros.
func appendHex32(b []byte, v uint32) []byte {
	const digits = "0123456789ABCDEF"
	shift := 28
	for shift > 0 && v>>shift == 0 {
		shift -= 4
	}
	for ; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>shift&0xf])
	}
	return b
}
