package postgres

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The messages of pgoutput (protocol version 1) that every streamed change
// passes through, Begin, Insert, Update, Delete and Commit, are parsed
// here rather than by pglogrepl's Parse, which makes a struct and a copy
// of the bytes for every column (docs/hot-path.md). A message is read in
// place: a tuple is where its columns are in the message, and a value is
// a sub-slice of it, so whoever decodes the values must own the message's
// bytes (stream.go copies each row message once, since pgconn reuses the
// buffer it arrives in). Relation, Type, Truncate, Origin and logical
// decoding messages are rare and stay on pglogrepl.
//
// The layout is PostgreSQL's "Logical Replication Message Formats"
// (protocol-logicalrep-message-formats.html). The bytes come from the
// server: a message that is short, has bytes left over or an unknown
// marker is an error naming the field, never a panic or a guess.

// pgoutputMessage is a parsed Begin ('B'), Commit ('C'), Insert ('I'),
// Update ('U') or Delete ('D') message.
type pgoutputMessage struct {
	kind byte

	// Begin: the transaction's final LSN, commit time and xid; Commit: its
	// flags, commit LSN, end LSN and commit time.
	finalLSN     uint64
	commitLSN    uint64
	endLSN       uint64
	commitMicros int64 // µs since the Unix epoch
	xid          uint32
	flags        byte

	// Insert, Update, Delete: the relation, the old image ('K' a key, 'O'
	// the old row, 0 none) and the new one (none for a delete).
	relID    uint32
	oldKind  byte
	old, new tuple
}

// tuple is a checked TupleData submessage: n columns, from offset from to
// offset to of the message. Its columns are read with column.
type tuple struct {
	set      bool
	n        int
	from, to int
}

// Column kinds of a tuple (TupleData's Byte1).
const (
	colNull      = 'n' // NULL
	colUnchanged = 'u' // an unchanged TOASTed value, not sent
	colText      = 't' // a value in text format
	colBinary    = 'b' // a value in binary format (not asked for)
)

// pgEpochMicros is 2000-01-01, PostgreSQL's epoch, in µs since the Unix epoch.
const pgEpochMicros = 946_684_800_000_000

// parsePgoutput parses msg into m when it is one of the messages above;
// ok is false for any other message, which is left to pglogrepl.
func parsePgoutput(msg []byte, m *pgoutputMessage) (ok bool, err error) {
	if len(msg) == 0 {
		return false, nil
	}
	r := reader{msg: msg, off: 1}
	*m = pgoutputMessage{kind: msg[0]}
	switch m.kind {
	case 'B':
		r.name = "Begin"
		m.finalLSN = r.uint64("final LSN")
		m.commitMicros = int64(r.uint64("commit time")) + pgEpochMicros
		m.xid = r.uint32("xid")
	case 'C':
		r.name = "Commit"
		m.flags = r.byte("flags")
		m.commitLSN = r.uint64("commit LSN")
		m.endLSN = r.uint64("end LSN")
		m.commitMicros = int64(r.uint64("commit time")) + pgEpochMicros
	case 'I':
		r.name = "Insert"
		m.relID = r.uint32("relation")
		r.marker("new tuple marker", 'N')
		m.new = r.tuple("new tuple")
	case 'U':
		r.name = "Update"
		m.relID = r.uint32("relation")
		if k := r.tupleMarker("KON", "'K', 'O' or 'N'"); k != 'N' {
			m.oldKind = k
			m.old = r.tuple("old tuple")
			r.marker("new tuple marker", 'N')
		}
		m.new = r.tuple("new tuple")
	case 'D':
		r.name = "Delete"
		m.relID = r.uint32("relation")
		m.oldKind = r.tupleMarker("KO", "'K' or 'O'")
		m.old = r.tuple("old tuple")
	default:
		return false, nil
	}
	if r.err == nil && r.off != len(msg) {
		r.err = fmt.Errorf("pgoutput %s: %d bytes after the message's last field", r.name, len(msg)-r.off)
	}
	return true, r.err
}

// column reads the column of a checked tuple at off of msg (t.from for
// the first): its kind (colNull, colUnchanged, colText or colBinary), its
// value, and the offset of the next column. The value aliases msg.
func column(msg []byte, off int) (kind byte, val []byte, next int) {
	kind = msg[off]
	off++
	if kind == colText || kind == colBinary {
		n := int(binary.BigEndian.Uint32(msg[off:]))
		off += 4
		return kind, msg[off : off+n : off+n], off + n
	}
	return kind, nil, off
}

// reader reads the fields of one message in order; after the first
// error it reads nothing more and keeps that error.
type reader struct {
	msg  []byte
	off  int
	name string // the message's, for errors
	err  error
}

// need reports whether n more bytes are there for field, setting the
// error when they are not.
func (r *reader) need(n int, field string) bool {
	if r.err != nil {
		return false
	}
	if len(r.msg)-r.off < n {
		r.err = fmt.Errorf("pgoutput %s: message ends in its %s (%d bytes)", r.name, field, len(r.msg))
		return false
	}
	return true
}

func (r *reader) byte(field string) byte {
	if !r.need(1, field) {
		return 0
	}
	r.off++
	return r.msg[r.off-1]
}

func (r *reader) uint32(field string) uint32 {
	if !r.need(4, field) {
		return 0
	}
	r.off += 4
	return binary.BigEndian.Uint32(r.msg[r.off-4:])
}

func (r *reader) uint64(field string) uint64 {
	if !r.need(8, field) {
		return 0
	}
	r.off += 8
	return binary.BigEndian.Uint64(r.msg[r.off-8:])
}

// marker reads a byte that must be want.
func (r *reader) marker(field string, want byte) {
	if b := r.byte(field); r.err == nil && b != want {
		r.err = fmt.Errorf("pgoutput %s: %s %q, want %q", r.name, field, b, want)
	}
}

// tupleMarker reads the marker of an Update's or a Delete's first tuple,
// one of the bytes of allowed ('K' an old key, 'O' an old row, 'N' the new
// row), described by want.
func (r *reader) tupleMarker(allowed, want string) byte {
	k := r.byte("tuple marker")
	if r.err == nil && strings.IndexByte(allowed, k) < 0 {
		r.err = fmt.Errorf("pgoutput %s: tuple marker %q, want %s", r.name, k, want)
	}
	return k
}

// tuple checks a TupleData submessage: a column count, then per column
// its kind and, for a text or binary value, its length and bytes. (Its
// errors are formatted only on failure: this runs for every column.)
func (r *reader) tuple(field string) tuple {
	if r.err == nil && len(r.msg)-r.off < 2 {
		r.err = fmt.Errorf("pgoutput %s: message ends in the column count of its %s (%d bytes)", r.name, field, len(r.msg))
	}
	if r.err != nil {
		return tuple{}
	}
	t := tuple{set: true, n: int(binary.BigEndian.Uint16(r.msg[r.off:]))}
	r.off += 2
	t.from = r.off
	for i := range t.n {
		if r.off >= len(r.msg) {
			r.err = fmt.Errorf("pgoutput %s: message ends before %s column %d (%d bytes)", r.name, field, i+1, len(r.msg))
			return tuple{}
		}
		switch kind := r.msg[r.off]; kind {
		case colNull, colUnchanged:
			r.off++
		case colText, colBinary:
			r.off++
			if len(r.msg)-r.off < 4 {
				r.err = fmt.Errorf("pgoutput %s: message ends in the length of %s column %d (%d bytes)", r.name, field, i+1, len(r.msg))
				return tuple{}
			}
			n := binary.BigEndian.Uint32(r.msg[r.off:])
			r.off += 4
			if uint64(n) > uint64(len(r.msg)-r.off) {
				r.err = fmt.Errorf("pgoutput %s: %s column %d has a value of %d bytes, %d left in the message", r.name, field, i+1, n, len(r.msg)-r.off)
				return tuple{}
			}
			r.off += int(n)
		default:
			r.err = fmt.Errorf("pgoutput %s: %s column %d has kind %q, want 'n', 'u', 't' or 'b'", r.name, field, i+1, kind)
			return tuple{}
		}
	}
	t.to = r.off
	return t
}
