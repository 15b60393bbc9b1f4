package mysql

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Changes logged as statements. A session with binlog_format = STATEMENT
// (or MIXED, for a statement the server deems safe) logs its INSERT,
// UPDATE, DELETE, REPLACE and LOAD DATA as the statement's text, a Query
// event, not as rows: Tributary cannot know which rows changed. Such a
// statement on a captured table is never passed over silently: the table
// is backfilled again (the backfill reads every row as it is then, while
// the stream goes on; one under way starts again), with a warning and
// tributary_statement_changes_total;
// with backfill off (snapshot_mode no_data), the stream stops naming the
// table and the fix. A backfill cannot show what the statement deleted:
// the warning says so.

// dmlTarget matches a data-changing statement and captures the first
// table it changes (a multi-table UPDATE's or DELETE's first one).
var dmlTarget = regexp.MustCompile("(?is)^\\s*(?:/\\*.*?\\*/\\s*)*(?:" +
	"(?:INSERT|REPLACE)(?:\\s+(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE))*(?:\\s+INTO)?" +
	"|UPDATE(?:\\s+(?:LOW_PRIORITY|IGNORE))*" +
	"|DELETE(?:\\s+(?:LOW_PRIORITY|QUICK|IGNORE))*(?:\\s+(?:`[^`]+`|[A-Za-z0-9_$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[A-Za-z0-9_$]+))?(?:\\s*\\.\\s*\\*)?(?:\\s*,\\s*(?:`[^`]+`|[A-Za-z0-9_$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[A-Za-z0-9_$]+))?(?:\\s*\\.\\s*\\*)?)*)?\\s+FROM" +
	"|LOAD\\s+(?:DATA|XML)(?:\\s+(?:LOW_PRIORITY|CONCURRENT))?(?:\\s+LOCAL)?\\s+INFILE\\s+'(?:[^'\\\\]|\\\\.|'')*'(?:\\s+(?:REPLACE|IGNORE))?\\s+INTO\\s+TABLE" +
	")\\s+((?:`[^`]+`|[A-Za-z0-9_$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[A-Za-z0-9_$]+))?)")

// dmlTable is the db and name of the table a data-changing statement
// changes (defaultDB: the session's database, the event's schema); ok
// false for any other statement.
func dmlTable(q, defaultDB string) (db, name string, ok bool) {
	m := dmlTarget.FindStringSubmatch(stripComments(q))
	if m == nil {
		return "", "", false
	}
	db, name = defaultDB, m[1]
	if i := dotOutsideQuotes(name); i >= 0 {
		db, name = unquote(strings.TrimSpace(name[:i])), strings.TrimSpace(name[i+1:])
	}
	return db, unquote(name), true
}

// stripComments is q with its comments blanked out, wherever they are
// (INSERT /* app */ INTO t, an optimizer hint /*+ … */ after UPDATE),
// quoted text kept as it is; an executable comment (/*!50100 … */,
// /*M!100500 … */) keeps its text, which the server runs.
func stripComments(q string) string {
	if !strings.Contains(q, "/*") && !strings.Contains(q, "--") && !strings.Contains(q, "#") {
		return q
	}
	var b strings.Builder
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) && q[j] != c {
				if q[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(q))
			b.WriteString(q[i:j])
			i = j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				end = len(q) - i - 2
			}
			body := q[i+2 : i+2+end]
			if rest, ok := strings.CutPrefix(strings.TrimPrefix(body, "M"), "!"); ok {
				b.WriteByte(' ')
				b.WriteString(strings.TrimLeft(rest, "0123456789"))
			}
			b.WriteByte(' ')
			i += 2 + end + 2
		case c == '#' || strings.HasPrefix(q[i:], "-- "):
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				end = len(q) - i
			}
			b.WriteByte(' ')
			i += end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// dmlTables is every table a data-changing statement logged as text may
// change: dmlTable's, and for an UPDATE or DELETE the tables its table
// references name (a multi-table UPDATE sets any of them, a multi-table
// DELETE deletes from any of its targets, which may be aliases of the
// tables it joins). It errs on the side of more: a table the statement
// only reads there is backfilled too, never one it changes left out. ok
// is false for any other statement.
func dmlTables(q, defaultDB string) (ids [][2]string, ok bool) {
	db, name, ok := dmlTable(q, defaultDB)
	if !ok {
		return nil, false
	}
	ids = [][2]string{{db, name}}
	add := func(db, name string) {
		for _, id := range ids {
			if id == [2]string{db, name} {
				return
			}
		}
		ids = append(ids, [2]string{db, name})
	}
	for _, ref := range tableRefs(q) {
		switch len(ref) {
		case 1:
			add(defaultDB, ref[0])
		default:
			add(ref[0], ref[1])    // db.table, or db.table.column
			add(defaultDB, ref[0]) // table.column
		}
	}
	return ids, true
}

// tableRefs is the dotted names in the table references of an UPDATE (up
// to SET) or a DELETE (up to WHERE, ORDER BY or LIMIT), outside quotes,
// comments and parentheses; none for other statements.
func tableRefs(q string) [][]string {
	var refs [][]string
	var stop []string
	started := false
	scanNames(q, func(name []string, quoted bool, depth int) bool {
		if !started {
			switch {
			case quoted || len(name) > 1:
				return false
			case strings.EqualFold(name[0], "UPDATE"):
				stop = []string{"SET"}
			case strings.EqualFold(name[0], "DELETE"):
				stop = []string{"WHERE", "ORDER", "LIMIT", "RETURNING"}
			default:
				return false
			}
			started = true
			return true
		}
		if depth > 0 {
			return true
		}
		if len(name) == 1 && !quoted {
			for _, k := range stop {
				if strings.EqualFold(name[0], k) {
					return false
				}
			}
		}
		refs = append(refs, name)
		return true
	})
	return refs
}

// namesIn is every dotted name in text (a view's definition, a trigger's
// body), outside quotes and comments, at any depth.
func namesIn(text string) [][]string {
	var out [][]string
	scanNames(text, func(name []string, _ bool, _ int) bool {
		out = append(out, name)
		return true
	})
	return out
}

// scanNames calls fn with each name of q in turn (a word or backquoted
// identifier, with those joined to it by dots: db.table, table.column),
// whether its first part was quoted, and its depth in parentheses; it
// skips quoted strings and comments, and stops when fn returns false.
func scanNames(q string, fn func(name []string, quoted bool, depth int) bool) {
	var cur []string
	curQuoted, curDepth, dot, depth := false, 0, false, 0
	flush := func() bool {
		if len(cur) == 0 {
			return true
		}
		name := cur
		cur, dot = nil, false
		return fn(name, curQuoted, curDepth)
	}
	part := func(w string, quoted bool) bool {
		if dot && len(cur) > 0 {
			cur = append(cur, w)
			dot = false
			return true
		}
		if !flush() {
			return false
		}
		cur, curQuoted, curDepth = []string{w}, quoted, depth
		return true
	}
	isWord := func(c byte) bool {
		return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= 0x80
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				if q[j] == '\\' {
					j++
				}
				j++
			}
			if !flush() {
				return
			}
			i = j + 1
		case c == '`':
			j := i + 1
			var b strings.Builder
			for j < len(q) {
				if q[j] == '`' {
					if j+1 < len(q) && q[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(q[j])
				j++
			}
			if !part(b.String(), true) {
				return
			}
			i = j + 1
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				flush()
				return
			}
			i += j + 4
		case c == '#' || strings.HasPrefix(q[i:], "-- "):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				flush()
				return
			}
			i += j + 1
		case c == '.':
			dot = true
			i++
		case isWord(c):
			j := i
			for j < len(q) && isWord(q[j]) {
				j++
			}
			if !part(q[i:j], false) {
				return
			}
			i = j
		default:
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				if !flush() {
					return
				}
				switch c {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			i++
		}
	}
	flush()
}

// throughObjects is the captured tables a data-changing statement on
// db.name may change without naming them: the tables the view db.name
// reads (a change through a view changes them), and the tables the
// triggers of db.name name in their bodies (in STATEMENT format a
// trigger's changes are not logged either), following views and
// triggers of those in turn. The definitions are read as they are now
// (one query of information_schema, kept until a DDL statement of the
// binlog may have changed them: forgetObjects).
func (s *Source) throughObjects(db, name string) ([][2]string, error) {
	if s.objects == nil {
		r, err := s.db.Execute(`SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS
UNION ALL SELECT EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_STATEMENT FROM information_schema.TRIGGERS`)
		if err != nil {
			return nil, fmt.Errorf("look up views and triggers for a statement logged as text: %w", err)
		}
		s.objects = map[[2]string][]string{}
		for i := range r.Values {
			odb, _ := r.GetString(i, 0)
			oname, _ := r.GetString(i, 1)
			text, _ := r.GetString(i, 2)
			id := [2]string{strings.Clone(odb), strings.Clone(oname)}
			s.objects[id] = append(s.objects[id], strings.Clone(text))
		}
	}
	var out [][2]string
	seen := map[[2]string]bool{}
	var walk func(id [2]string)
	walk = func(id [2]string) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, text := range s.objects[id] {
			for _, ref := range namesIn(text) {
				cands := [][2]string{{id[0], ref[0]}}
				if len(ref) > 1 {
					cands = append(cands, [2]string{ref[0], ref[1]})
				}
				for _, c := range cands {
					s.mu.Lock()
					captured := s.tables[c[0]+"."+c[1]] != nil
					s.mu.Unlock()
					if captured && !slices.Contains(out, c) {
						out = append(out, c)
					}
					walk(c)
				}
			}
		}
	}
	walk([2]string{db, name})
	return out, nil
}

// objectDDL matches the statements that may change a view or a trigger,
// or what they are found under (a table renamed or dropped, a database
// dropped); a statement it misses at worst keeps a stale copy.
var objectDDL = regexp.MustCompile(`(?i)\b(?:VIEW|TRIGGER|RENAME|DROP|DATABASE|SCHEMA)\b`)

// forgetObjects drops throughObjects' copy of the views and triggers: a
// DDL statement may have changed them.
func (s *Source) forgetObjects() { s.objects = nil }

// loadQuery is the schema and text of an Execute_load_query event (LOAD
// DATA in STATEMENT format), from its raw bytes (header included, no
// checksum), which go-mysql does not decode.
func loadQuery(raw []byte) (schema, query string, ok bool) {
	const header, post = 19, 26 // event header; thread, time, db length, error, status length, file id, start, end, dup handling
	if len(raw) < header+post {
		return "", "", false
	}
	d := raw[header:]
	dbLen := int(d[8])
	statusLen := int(binary.LittleEndian.Uint16(d[11:13]))
	off := post + statusLen
	if off+dbLen+1 > len(d) {
		return "", "", false
	}
	return string(d[off : off+dbLen]), string(d[off+dbLen+1:]), true
}

// statementChange handles a data-changing statement logged as text on
// table db.name: nothing unless the table is captured; otherwise the
// table is backfilled again, or, with backfill off, the stream stops.
func (s *Source) statementChange(db, name, stmt string) error {
	id := db + "." + name
	s.mu.Lock()
	captured := s.tables[id] != nil
	s.mu.Unlock()
	if !captured {
		return nil
	}
	if s.opts.StatementChange != nil {
		s.opts.StatementChange(id)
	}
	const why = "its rows are not in the binlog (a session with binlog_format = STATEMENT or MIXED logged the statement, not the rows)"
	const fix = "set binlog_format = ROW for every session that writes to captured tables (SET GLOBAL binlog_format = 'ROW', and no SET SESSION binlog_format = 'STATEMENT')"
	if !s.opts.Config.BackfillEnabled() {
		return fmt.Errorf("captured table %s was changed by a statement logged as text, %q: %s, and backfill is off (source.snapshot_mode no_data or source.backfill false) to read them again. %s; then enable backfill to let Tributary backfill the table and go on, or drop the pipeline and run it again",
			id, trimStmt(stmt), why, fix)
	}
	s.log.Warn("a captured table was changed by a statement logged as text: backfilling the table again, which publishes its rows as they are now (rows the statement deleted stay in the topic: a backfill cannot see them); "+fix,
		"table", id, "statement", trimStmt(stmt), "why", why)
	// A backfill of the table under way has read past rows this
	// statement may have changed: it starts again from the first row.
	s.out.Again(id)
	return nil
}
