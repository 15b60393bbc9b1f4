package scenario_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The shape features of TestRandomOracle (shapeFeatures): tables of the
// shapes that found bugs, written by the same workload as t1…t4, and the
// checker rules they need.

// shapeTables name the tables in the order they follow t1…t4 (bigtx and
// ddlstopped use the first tables only).
var shapeTables = []struct {
	table, feature string
	keyUpdates     bool
}{
	// A key update's create carries the TOAST placeholder (Debezium's too):
	// the value would be on no message of the new key.
	{"ttoast", "toast", false},
	// Without a key, a change of k is an update, not a delete and a create.
	{"tkl", "keyless", false},
	// Keyed by its replica identity index k: a change of k is a delete and
	// a create, as of a primary key.
	{"tidx", "identity", true},
}

const (
	toastSeedRows   = 2000 // the toast table's initial rows: its backfill outlasts the others'
	toastRounds     = 10   // updates of every row of the toast table, one every 20 transactions from the first
	toastPlaceholer = "__debezium_unavailable_value"
)

// addShapes creates the shape features' tables the backend has, adds them
// to w.tables, and with charsets adds the charset columns to every table.
func (w *workload) addShapes() error {
	for _, s := range shapeTables {
		if !w.f.on(s.feature) {
			continue
		}
		st, ok := w.b.ShapeTable(s.feature, s.table)
		if !ok {
			continue
		}
		for _, q := range st.Create {
			if err := w.b.Exec(q); err != nil {
				return fmt.Errorf("%s: %v", q, err)
			}
		}
		st.Feature, st.NoKeyUpdate = s.feature, !s.keyUpdates
		w.shapes[s.table] = st
		w.tables = append(w.tables, s.table)
	}
	if !w.f.on("charsets") {
		return nil
	}
	at := w.rng.IntN(len(charsetTexts))
	for i, t := range w.tables {
		cs := charsetTexts[(at+i)%len(charsetTexts)].charset
		for _, q := range w.b.CharsetColumns(t, cs, enumMembers, setMembers) {
			if err := w.b.Exec(q); err != nil {
				return fmt.Errorf("%s: %v", q, err)
			}
			w.charset[t] = cs
		}
	}
	return nil
}

func (w *workload) toastTable() string {
	for t, s := range w.shapes {
		if s.Feature == "toast" {
			return t
		}
	}
	return ""
}

// toastRound updates every row of the toast table in one statement,
// leaving tv alone: the first rounds meet the chunks of its backfill (the
// writer starts before it ends), where a chunk's row can be the only
// message that carries tv (docs/snapshot.md). Each row gets seq base+k
// and the texts of the big transaction.
func (w *workload) toastRound(t string) error {
	w.toastRounds++
	base := w.seq
	bulk := "bulk"
	x := vexp{v: &bulk}
	if w.b.Latin1() {
		x.vl = &bulk
	}
	set := fmt.Sprintf("seq = %d + k", base)
	cols, vals := w.texts(t, x)
	for i, c := range cols {
		set += ", " + c + " = " + vals[i]
	}
	keys := slices.Sorted(maps.Keys(w.live[t])) // not the large rows (large)
	if len(keys) == 0 {
		return nil
	}
	in := make([]string, len(keys))
	for i, k := range keys {
		in[i] = fmt.Sprint(k)
	}
	if err := w.b.Exec("UPDATE " + t + " SET " + set + " WHERE k IN (" + strings.Join(in, ", ") + ")"); err != nil {
		return err
	}
	w.seq = base + w.nextKey
	for _, k := range keys {
		w.log = append(w.log, ochange{table: t, op: "u", k: k, seq: base + k, prev: w.live[t][k]})
		w.vOf[base+k] = x
		w.live[t][k] = base + k
	}
	return nil
}

// toastValue is the toast table's tv of key k, written at insert and never
// updated: 6,000 random letters, which PostgreSQL's compression cannot
// bring under the 2 KB TOAST threshold, so they are stored out of line.
func toastValue(k int64) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(uint64(k), 0x70a57))
	b := make([]byte, 6000)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// charsetTexts are texts each character set holds (charsets); a table's
// cs column has one of the sets.
var charsetTexts = []struct{ charset, text string }{
	{"cp1251", "Привет, мир"},
	{"sjis", "日本語のテキスト"},
	{"gbk", "中文文本"},
	{"latin2", "Zażółć gęślą jaźń"},
	{"koi8r", "Съешь же ещё"},
	{"euckr", "한국어 텍스트"},
	{"big5", "繁體中文"},
	{"ucs2", "ÆØ ☃ 日本"},
	{"utf16", "emoji 😀 and 𝄞"},
}

// ENUM members with commas, quotes and spaces; SET members cannot hold
// commas (MariaDB's separator), but quotes and spaces.
var (
	enumMembers = []string{"a,b", "it's", "two words", `x, "y"`}
	setMembers  = []string{"it's", "two words", `q"d`, "plain"}
)

// charsetValues are the cs, en and st a seq writes in a table whose cs
// column is in charset: a SET value is its members joined by commas in
// the order of the definition, as the database returns it.
func charsetValues(charset string, seq int64) (cs, en, st *string) {
	var text string
	for _, c := range charsetTexts {
		if c.charset == charset {
			text = c.text
		}
	}
	s := fmt.Sprintf("%s 'q' %d", text, seq)
	e := enumMembers[seq%int64(len(enumMembers))]
	var set []string
	for i, m := range setMembers {
		if seq>>i&1 == 1 {
			set = append(set, m)
		}
	}
	sv := strings.Join(set, ",")
	return &s, &e, &sv
}

// shapeCols are the columns of table the shape checker compares besides
// seq, v and vl.
func (w *workload) shapeCols(table string) []string {
	var cols []string
	if w.shapes[table].Feature == "toast" {
		cols = append(cols, "tv")
	}
	if w.charset[table] != "" {
		cols = append(cols, "cs", "en", "st")
	}
	return cols
}

// want is what col of row k written by seq must hold.
func (w *workload) want(col string, k, seq int64) *string {
	x := w.vOf[seq]
	switch col {
	case "tv":
		s := toastValue(k)
		return &s
	case "cs":
		return x.cs
	case "en":
		return x.en
	default:
		return x.st
	}
}

// shapeCheck is the checker's part for the shape features: per key, the
// shape columns folded over the messages in order (Debezium's rule: the
// placeholder in an update means unchanged), whether a message carried
// the toast value, and a keyless table's update before images.
type shapeCheck struct {
	w       *workload
	folded  map[string]map[int64]map[string]*string
	carried map[string]map[int64]bool
	before  map[string]map[[2]int64]int64 // table → (k, seq) of an update → its before image's seq
}

func newShapeCheck(w *workload) *shapeCheck {
	c := &shapeCheck{w: w, folded: map[string]map[int64]map[string]*string{}, carried: map[string]map[int64]bool{},
		before: map[string]map[[2]int64]int64{}}
	for _, t := range w.tables {
		c.folded[t], c.carried[t], c.before[t] = map[int64]map[string]*string{}, map[int64]bool{}, map[[2]int64]int64{}
	}
	return c
}

// key sets m.k for a shape table's message, or says why the message's key
// is wrong: a keyless table's messages have none (k is the row's), a
// key-only delete gets seq 0, and a key must name the row's k.
func (c *shapeCheck) key(table string, m *oracleRecord) string {
	s := c.w.shapes[table]
	if m.row == nil {
		return ""
	}
	if s.Keyless {
		if m.k != nil {
			return fmt.Sprintf("a table without a primary key published key k=%d", *m.k)
		}
		m.k = m.row.K
	}
	if s.KeyOnly && m.op == "d" && (m.row.Seq == nil || *m.row.Seq == 0) {
		zero := int64(0)
		m.row.Seq = &zero
	}
	if m.k != nil && m.row.K != nil && *m.k != *m.row.K {
		return fmt.Sprintf("key k=%d for the row of k=%d", *m.k, *m.row.K)
	}
	return ""
}

// message checks and folds the shape columns of a first occurrence.
func (c *shapeCheck) message(table string, m oracleRecord, k, seq int64, report func(string, ...any)) {
	if m.op == "d" {
		delete(c.folded[table], k)
		return
	}
	if m.op == "u" && c.w.shapes[table].Keyless {
		if m.before == nil || m.before.Seq == nil {
			report("%s: key %d seq %d: update without the full before image", table, k, seq)
		} else {
			c.before[table][[2]int64{k, seq}] = *m.before.Seq
		}
	}
	cols := c.w.shapeCols(table)
	if len(cols) == 0 {
		return
	}
	row := c.folded[table][k]
	if row == nil || m.op != "u" {
		row = map[string]*string{}
		c.folded[table][k] = row
	}
	for _, col := range cols {
		got, want := textValue(m.row.fields[col]), c.w.want(col, k, seq)
		if col == "tv" && got == toastPlaceholer && m.op == "u" {
			continue // unchanged
		}
		if s, ok := got.(string); ok {
			row[col] = &s
		} else {
			row[col] = nil
		}
		if !sameText(got, want) {
			report("%s: key %d seq %d (op %s): %s = %.80v, want %.80s", table, k, seq, m.op, col, got, textOf(want))
		} else if col == "tv" {
			c.carried[table][k] = true
		}
	}
}

// change checks what the model knows of a committed change that a
// message alone does not show: a keyless table's update carries the
// whole row it replaced.
func (c *shapeCheck) change(ch ochange, report func(string, ...any)) {
	if ch.op != "u" || !c.w.shapes[ch.table].Keyless {
		return
	}
	if got, ok := c.before[ch.table][[2]int64{ch.k, ch.seq}]; ok && got != ch.prev {
		report("%s: key %d seq %d: update's before image has seq %d, want %d", ch.table, ch.k, ch.seq, got, ch.prev)
	}
}

// final compares the folded shape columns with the database (read as
// UTF-8 text, backend.columnsText), and requires each toast row's value
// on some message of its key.
func (c *shapeCheck) final(t *testing.T, b itest.Backend, table string, skipped map[int64]bool, report func(string, ...any)) {
	cols := c.w.shapeCols(table)
	if len(cols) == 0 {
		return
	}
	db, err := b.ColumnsText(table, cols)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	for k, row := range db {
		if skipped[k] {
			continue
		}
		if row["tv"] != nil && !c.carried[table][k] {
			report("%s k=%d: its TOASTed tv is on no message of the key", table, k)
		}
		folded, ok := c.folded[table][k]
		if !ok {
			continue // the seq comparison reports it
		}
		for _, col := range cols {
			if got, want := folded[col], row[col]; textOf(got) != textOf(want) {
				report("final state %s k=%d: %s: database %.80s, topic %.80s", table, k, col, textOf(want), textOf(got))
			}
		}
	}
}
