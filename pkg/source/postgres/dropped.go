package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// A captured table can be dropped while changes to it are still in the
// slot's WAL: while the pipeline is stopped, or before the stream has
// reached them. pgoutput decodes that WAL with the catalog as it was when
// it was written, the publication included, so those changes still
// arrive, after a Relation message that names the table, its columns'
// types and its replica identity columns. They are published, as the
// MySQL source publishes what its binlog holds: the table stays captured
// until the stream has passed the WAL written when the drop was noticed,
// and when the catalog no longer describes it, its shape comes from the
// Relation message (goneColumns; docs/postgresql.md).

// followDropped keeps capturing the tables the checkpoint pos records as
// captured that the catalog no longer has (dropped while the pipeline was
// stopped, or dropped earlier with changes the stream had not passed when
// the checkpoint was written: pos.Dropped), so that the changes the WAL
// holds for them are published, under the key pos.FullKeys records for a
// table under REPLICA IDENTITY FULL.
func (s *Source) followDropped(ctx context.Context, pos position, recorded json.RawMessage) error {
	s.restoredKeys = pos.FullKeys
	follow := map[uint32]string{}
	if recorded != nil {
		m, _ := decodeTables(recorded) // checked by Resume
		for name, oid := range m {
			follow[oid] = name
		}
	}
	for oid, name := range pos.Dropped {
		follow[oid] = name
	}
	for oid, name := range follow {
		if _, ok := s.captured[oid]; ok {
			continue
		}
		gone, err := s.tableGone(ctx, oid, name)
		if err != nil {
			return err
		}
		if gone { // else renamed out of the list, or no longer selected
			if err := s.tableDropped(ctx, oid, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// tableGone reports whether the catalog no longer has table oid (name).
func (s *Source) tableGone(ctx context.Context, oid uint32, name string) (bool, error) {
	var exists bool
	if err := s.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_class WHERE oid = $1)`, oid).Scan(&exists); err != nil {
		return false, fmt.Errorf("look up table %s: %w", name, err)
	}
	return !exists, nil
}

// tableDropped keeps the dropped table oid, captured as name, captured
// until the stream passes the WAL written so far (forgetDropped): every
// change to it was written before the drop.
func (s *Source) tableDropped(ctx context.Context, oid uint32, name string) error {
	if _, ok := s.goneAt[oid]; ok {
		if _, ok := s.captured[oid]; !ok { // a reconnect reset the captured set
			s.captured[oid] = name
			s.capturedChanged()
		}
		return nil
	}
	var lsn string
	if err := s.conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		return fmt.Errorf("table %s was dropped: read the WAL position: %w", name, err)
	}
	at, err := parseLSN(lsn)
	if err != nil {
		return err
	}
	if s.goneAt == nil {
		s.goneAt = map[uint32]uint64{}
	}
	s.goneAt[oid] = at
	s.captured[oid] = name
	if r := s.rels[oid]; r != nil {
		r.gone = true
	} else {
		schema, table, _ := strings.Cut(name, ".")
		r := &relation{oid: oid, schema: schema, name: table, gone: true}
		if key, ok := s.restoredKeys[oid]; ok {
			r.key, r.replident = key, "f" // see relation
		}
		s.rels[oid] = r
	}
	live := false
	for o, n := range s.captured {
		live = live || n == name && o != oid
	}
	if !live {
		s.CapturedGone(name) // no snapshot of it can finish; one of a new table of that name goes on
	}
	s.capturedChanged()
	s.opts.Log().Warn("a captured table was dropped; the changes written to it before the drop are still published, then its topic gets no more",
		"table", name, "until_lsn", lsn)
	return nil
}

// forgetDropped stops capturing the dropped tables whose changes are all
// before lsn, a position every change before which has been handed over.
func (s *Source) forgetDropped(lsn uint64) {
	changed := false
	for oid, at := range s.goneAt {
		if lsn >= at {
			delete(s.goneAt, oid)
			delete(s.captured, oid)
			delete(s.tables, oid)
			delete(s.rels, oid)
			changed = true
		}
	}
	if changed {
		s.capturedChanged()
	}
}

// identityColumns returns the columns a Relation message flags as its
// table's replica identity when the message was written: the columns an
// old image then carries. Under REPLICA IDENTITY FULL that is every column.
func identityColumns(m *pglogrepl.RelationMessage) []string {
	var key []string
	for _, c := range m.Columns {
		if c.Flags&1 != 0 {
			key = append(key, c.Name)
		}
	}
	return key
}

// keyOfNamesake is the key of a table dropped under REPLICA IDENTITY FULL
// whose key this session never learnt (not described, not in the
// checkpoint's FullKeys: a start that added it to the publication died
// before any checkpoint recorded it). A FULL Relation message flags every
// column, which is no key: a column that holds a null would stop the
// pipeline on every start. As Debezium, which reads a relation's primary
// key from the catalog by the table's name, it is the key of the table
// now called that, when the message has every one of its columns (the
// same topic, keyed alike); else none, and the table's changes are
// published with a null key, as a keyless table's (docs/postgresql.md).
func (s *Source) keyOfNamesake(ctx context.Context, m *pglogrepl.RelationMessage) ([]string, error) {
	var oid *uint32
	name := pgx.Identifier{m.Namespace, m.RelationName}.Sanitize()
	if err := s.conn.QueryRow(ctx, `SELECT to_regclass($1)::oid`, name).Scan(&oid); err != nil {
		return nil, fmt.Errorf("look up table %s: %w", name, err)
	}
	if oid == nil {
		return nil, nil
	}
	key, err := keyColumns(ctx, s.conn, *oid, name)
	if err != nil {
		return nil, err
	}
	for _, k := range key {
		if !slices.ContainsFunc(m.Columns, func(c *pglogrepl.RelationMessageColumn) bool { return c.Name == k }) {
			return nil, nil
		}
	}
	return key, nil
}

// goneColumns describes the columns of a Relation message whose table the
// catalog no longer has: types by OID from pg_type (built-in, or a user
// type still there), else by the name of pgoutput's Type message for
// built-in knowledge of extension types; the key is the replica identity
// columns the message flags, under REPLICA IDENTITY FULL keyOfNamesake's
// (and relation's, from what the session knew). A column whose type was dropped too cannot
// be decoded faithfully: it is an error naming it, unless
// source.include_unknown_types publishes such columns as text.
func (s *Source) goneColumns(ctx context.Context, m *pglogrepl.RelationMessage) ([]catalogColumn, []string, error) {
	cols := make([]catalogColumn, len(m.Columns))
	oids := make([]uint32, len(m.Columns))
	typmods := make([]int32, len(m.Columns))
	key := identityColumns(m)
	if m.ReplicaIdentity == 'f' {
		var err error
		if key, err = s.keyOfNamesake(ctx, m); err != nil {
			return nil, nil, err
		}
	}
	for i, c := range m.Columns {
		cols[i] = catalogColumn{name: c.Name, typOID: c.DataType, typmod: c.TypeModifier, notNull: slices.Contains(key, c.Name)}
		oids[i], typmods[i] = c.DataType, c.TypeModifier
	}
	found, err := s.typesByOID(ctx, cols, oids, typmods)
	if err != nil {
		return nil, nil, fmt.Errorf("types of dropped table %s.%s: %w", m.Namespace, m.RelationName, err)
	}
	for i := range cols {
		if found[i] {
			continue
		}
		c := &cols[i]
		c.typName = s.typeNames[c.typOID]
		if c.changeType().Kind == change.KindUnknown && !s.opts.Config.IncludeUnknownTypes {
			return nil, nil, fmt.Errorf("table %s.%s was dropped with changes still in the slot, and the type of its column %s (%q, OID %d) was dropped too: "+
				"Tributary cannot tell how to decode its values; set source.include_unknown_types: true to publish them as text",
				m.Namespace, m.RelationName, c.name, c.typName, c.typOID)
		}
	}
	return cols, key, nil
}

// typesByOID fills in the type of cols[i] from pg_type by oids[i] and
// typmods[i] (built-in, or a user type still there): for columns the
// catalog no longer describes as the WAL does (the table, or the column,
// dropped or retyped since). found[i] says whether pg_type has it.
func (s *Source) typesByOID(ctx context.Context, cols []catalogColumn, oids []uint32, typmods []int32) (found []bool, err error) {
	rows, err := s.conn.Query(ctx, `SELECT a.ord, `+typeColumns+`
FROM unnest($1::oid[], $2::int4[]) WITH ORDINALITY AS a(atttypid, atttypmod, ord)`+typeJoins, oids, typmods)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found = make([]bool, len(cols))
	for rows.Next() {
		var ord int
		var c catalogColumn
		if err := rows.Scan(append([]any{&ord}, c.typeFields()...)...); err != nil {
			return nil, err
		}
		i := ord - 1
		cols[i].typName, cols[i].baseOID, cols[i].baseTypmod, cols[i].baseName, cols[i].typType = c.typName, c.baseOID, c.baseTypmod, c.baseName, c.typType
		cols[i].elemOID, cols[i].elemName, cols[i].elemType, cols[i].labels = c.elemOID, c.elemName, c.elemType, c.labels
		found[i] = true
	}
	return found, rows.Err()
}
