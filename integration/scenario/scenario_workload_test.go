package scenario_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The randomized workload of TestRandomOracle. One writer, one connection:
// every decision comes from the seeded generator and the model, so a seed
// replays the same transactions (the kill moments are wall-clock and
// differ between runs). Every change carries a unique, increasing seq;
// the model records what was committed, what was rolled back and what
// each seq's text values are, for the checker.

// ochange is one committed change as the topic must show it. A key update
// is a delete of the old key and a create of the new one, as Debezium
// publishes it.
type ochange struct {
	table     string
	op        string // r (initial row), c, u, d
	k, seq    int64  // for d: the seq of the deleted row image
	prev      int64  // for u: the seq of the row image it replaced
	oversized bool   // over max_message_bytes: a row.skipped record, no message
	// recreated: an insert into a table created again while the publisher
	// was down (dropstopped): published by the stream (op c) or by the
	// backfill of the new table (op r). gen is the table's incarnation
	// (w.drops when it was created).
	recreated bool
	gen       int
	// outside: a change to the dropstopped table written while it was in
	// no publication (PostgreSQL; see lostWithTable).
	outside bool
}

// vexp is the text a seq wrote: v (any script), vl (latin1 only) and,
// in a table with charset columns (charsets), cs (text of the column's
// character set), en (an ENUM member) and st (SET members).
type vexp struct{ v, vl, cs, en, st *string }

// workload is the writer and its model. mu is held for each transaction,
// so the controller can act between transactions (while the publisher is
// down) by taking it.
type workload struct {
	mu       sync.Mutex
	b        itest.Backend
	rng      *rand.Rand
	f        features
	tables   []string
	maxBytes int // max_message_bytes of the pipeline (large values)
	bigRows  int // rows of the one big transaction (0: none)
	bigAt    int // the transaction number that is the big one

	live       map[string]map[int64]int64 // table → key → seq, keys that may be changed
	nextKey    int64
	seq        int64
	log        []ochange
	rolledBack map[int64]bool
	vOf        map[int64]vexp
	truncSeq   map[string]int64 // table → seq at its last TRUNCATE
	ddlStep    map[string]int
	shifted    map[string]string           // table → column added by shiftColumn while down
	bigDone    chan struct{}               // closed when the big transaction committed
	bigSeqs    [2]int64                    // the big transaction's first and last seq
	shapes     map[string]itest.ShapeTable // table → the shape feature's table it is
	charset    map[string]string           // table → its cs column's character set (charsets)

	txs, rollbacks, savepoints, truncates, ddls, larges, oversized, toastRounds, drops int
	lostWithTable, lostOutside                                                         int // dropstopped changes excused by lostWithTable (outside: written while in no publication)
}

func newWorkload(b itest.Backend, seed uint64, f features, tables []string, maxBytes, bigRows int) *workload {
	return &workload{
		b: b, rng: rand.New(rand.NewPCG(seed, 0x7a11)), f: f, tables: tables, maxBytes: maxBytes,
		bigRows: bigRows, bigAt: 120, live: map[string]map[int64]int64{}, nextKey: 1,
		rolledBack: map[int64]bool{}, vOf: map[int64]vexp{}, truncSeq: map[string]int64{},
		ddlStep: map[string]int{}, shifted: map[string]string{}, bigDone: make(chan struct{}),
		shapes: map[string]itest.ShapeTable{}, charset: map[string]string{},
	}
}

// Texts: several scripts for v; for MariaDB's latin1 column vl, texts that
// latin1 can hold. No backslashes (MariaDB escapes with them).
var (
	utf8Texts   = []string{"plain ascii", "héllo wörld", "日本語のテキスト", "emoji 😀🚀 and 𝄞", "Ελληνικά", "עברית ومرحبا", "combining é ñ", "ß€£ 'quoted'"}
	latin1Texts = []string{"plain ascii", "héllo wörld", "ÆØÅ æøå", "£¥©® ±", "ñandú 'q'", "Ünïcödé"}
)

// text is the value a seq writes in table t: NULL for some seqs (nulls),
// a script from the lists (encodings) or plain ASCII; text of t's charset
// and ENUM and SET members when t has charset columns (charsets).
func (w *workload) text(t string, seq int64) vexp {
	if w.f.on("nulls") && seq%7 == 3 {
		return vexp{}
	}
	v, vl := fmt.Sprintf("v%d", seq), fmt.Sprintf("l%d", seq)
	if w.f.on("encodings") {
		v = fmt.Sprintf("%s %d", utf8Texts[seq%int64(len(utf8Texts))], seq)
		vl = fmt.Sprintf("%s %d", latin1Texts[seq%int64(len(latin1Texts))], seq)
	}
	x := vexp{v: &v}
	if w.b.Latin1() {
		x.vl = &vl
	}
	if cs := w.charset[t]; cs != "" {
		x.cs, x.en, x.st = charsetValues(cs, seq)
	}
	return x
}

// insertSQL inserts key k with seq's texts; big, when set, is the SQL
// expression of the big column.
func (w *workload) insertSQL(table string, k, seq int64, x vexp, big string) string {
	cols, vals := w.insertValues(table, k, seq, x, big)
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, cols, vals)
}

// insertValues are insertSQL's column list and values: the texts, and the
// toast table's tv (toast).
func (w *workload) insertValues(table string, k, seq int64, x vexp, big string) (string, string) {
	cols, vals := []string{"k", "seq"}, []string{fmt.Sprint(k), fmt.Sprint(seq)}
	tc, tv := w.texts(table, x)
	cols, vals = append(cols, tc...), append(vals, tv...)
	if big != "" {
		cols, vals = append(cols, "big"), append(vals, big)
	}
	if w.shapes[table].Feature == "toast" {
		s := toastValue(k)
		cols, vals = append(cols, "tv"), append(vals, itest.SQLText(&s))
	}
	return strings.Join(cols, ", "), strings.Join(vals, ", ")
}

// texts are table's text columns and x's values for them as SQL.
func (w *workload) texts(table string, x vexp) (cols, vals []string) {
	cols, vals = []string{"v"}, []string{itest.SQLText(x.v)}
	if w.b.Latin1() {
		cols, vals = append(cols, "vl"), append(vals, itest.SQLText(x.vl))
	}
	if w.charset[table] != "" {
		cols, vals = append(cols, "cs", "en", "st"), append(vals, itest.SQLText(x.cs), itest.SQLText(x.en), itest.SQLText(x.st))
	}
	return cols, vals
}

// setSQL is the SET list that gives a row of table seq and seq's texts
// (never the toast table's tv: its updates leave the TOASTed value alone).
func (w *workload) setSQL(table string, seq int64, x vexp) string {
	s := fmt.Sprintf("seq = %d", seq)
	cols, vals := w.texts(table, x)
	for i, c := range cols {
		s += ", " + c + " = " + vals[i]
	}
	return s
}

// seedRows inserts n rows into each table (the toast table: toastSeedRows)
// before the pipeline starts, 100 a statement: they are published as r
// events by the backfill.
func (w *workload) seedRows(n int) error {
	for _, t := range w.tables {
		w.live[t] = map[int64]int64{}
		rows := n
		if w.shapes[t].Feature == "toast" {
			rows = toastSeedRows
		}
		var cols string
		var vals []string
		for i := 0; i < rows; i++ {
			k, seq := w.nextKey, w.seq+1
			w.nextKey, w.seq = k+1, seq
			x := w.text(t, seq)
			c, v := w.insertValues(t, k, seq, x, "")
			cols, vals = c, append(vals, "("+v+")")
			if len(vals) == 100 || i == rows-1 {
				if err := w.b.Exec(fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t, cols, strings.Join(vals, ", "))); err != nil {
					return err
				}
				vals = vals[:0]
			}
			w.vOf[seq] = x
			w.live[t][k] = seq
			w.log = append(w.log, ochange{table: t, op: "r", k: k, seq: seq})
		}
	}
	return nil
}

// txState is a transaction's view of the model, copied so that a
// rollback (whole or to a savepoint) drops it.
type txState struct {
	live    map[string]map[int64]int64
	nextKey int64
	changes []ochange
}

func (s *txState) clone() *txState {
	c := &txState{live: map[string]map[int64]int64{}, nextKey: s.nextKey, changes: append([]ochange(nil), s.changes...)}
	for t, m := range s.live {
		c.live[t] = make(map[int64]int64, len(m))
		for k, v := range m {
			c.live[t][k] = v
		}
	}
	return c
}

// step runs one unit of work: usually a transaction of 1-6 changes, now
// and then a TRUNCATE, a DDL statement, a large row or the big transaction.
func (w *workload) step() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.txs++
	switch r := w.rng.IntN(1000); {
	case w.f.on("bigtx") && w.bigRows > 0 && w.txs == w.bigAt:
		return w.bigTx()
	case w.toastRounds < toastRounds && w.txs%20 == 1 && w.toastTable() != "":
		return w.toastRound(w.toastTable())
	case w.f.on("truncate") && r < 6:
		return w.truncate(w.pick())
	case w.f.on("ddl") && r < 25:
		return w.ddl(w.pick())
	case w.f.on("large") && r < 40 && w.larges < 300: // capped: a soak would fill the disk
		return w.large(w.pick())
	}
	return w.Tx()
}

// pick is a table the writer changes: any but the dropstopped table,
// which changes only while the publisher is down.
func (w *workload) pick() string {
	for {
		if t := w.tables[w.rng.IntN(len(w.tables))]; t != dropTable {
			return t
		}
	}
}

func (w *workload) Tx() error { return w.txIn(w.pick(), false) }

// txIn is a transaction whose changes are in home, and with multitable in
// other tables too unless only.
func (w *workload) txIn(home string, only bool) error {
	st := (&txState{live: w.live, nextKey: w.nextKey}).clone()
	seq := w.seq
	rollback := w.f.on("rollback") && w.rng.IntN(10) == 0
	savepoint := w.f.on("savepoint") && w.rng.IntN(5) == 0
	var undone []int64 // seqs rolled back to a savepoint
	if err := w.b.Exec("BEGIN"); err != nil {
		return err
	}
	run := func(n int) error {
		for ; n > 0; n-- {
			t := home
			if w.f.on("multitable") && !only && w.rng.IntN(3) == 0 {
				t = w.pick()
			}
			seq++
			if err := w.change(st, t, seq); err != nil {
				w.b.Exec("ROLLBACK")
				return err
			}
		}
		return nil
	}
	if err := run(1 + w.rng.IntN(3)); err != nil {
		return err
	}
	if savepoint {
		w.savepoints++
		saved := st.clone()
		if err := w.b.Exec("SAVEPOINT sp1"); err != nil {
			return err
		}
		from := seq
		if err := run(1 + w.rng.IntN(4)); err != nil {
			return err
		}
		for s := from + 1; s <= seq; s++ {
			undone = append(undone, s)
		}
		if err := w.b.Exec("ROLLBACK TO SAVEPOINT sp1"); err != nil {
			return err
		}
		st = saved
		if err := run(1 + w.rng.IntN(3)); err != nil {
			return err
		}
	}
	for _, s := range undone {
		w.rolledBack[s] = true
	}
	w.seq = seq // seqs are never reused, rolled back or not
	if rollback {
		w.rollbacks++
		for _, c := range st.changes {
			if c.op != "d" {
				w.rolledBack[c.seq] = true
			}
		}
		return w.b.Exec("ROLLBACK")
	}
	if err := w.b.Exec("COMMIT"); err != nil {
		return err
	}
	w.live, w.nextKey = st.live, st.nextKey
	w.log = append(w.log, st.changes...)
	return nil
}

// change makes one insert, update, key update or delete in t.
func (w *workload) change(st *txState, t string, seq int64) error {
	live := st.live[t]
	x := w.text(t, seq)
	w.vOf[seq] = x
	r := w.rng.IntN(10)
	if len(live) < 30 || r < 4 || (len(live) < 1500 && r < 5) {
		k := st.nextKey
		st.nextKey++
		live[k] = seq
		st.changes = append(st.changes, ochange{table: t, op: "c", k: k, seq: seq})
		return w.b.Exec(w.insertSQL(t, k, seq, x, ""))
	}
	k := itest.AnyKey(live, w.rng)
	switch {
	case r < 7:
		st.changes = append(st.changes, ochange{table: t, op: "u", k: k, seq: seq, prev: live[k]})
		live[k] = seq
		return w.b.Exec(fmt.Sprintf("UPDATE %s SET %s WHERE k = %d", t, w.setSQL(t, seq, x), k))
	case r < 8 && w.f.on("keyupdate") && !w.shapes[t].NoKeyUpdate:
		nk := st.nextKey
		st.nextKey++
		st.changes = append(st.changes, ochange{table: t, op: "d", k: k, seq: live[k]}, ochange{table: t, op: "c", k: nk, seq: seq})
		delete(live, k)
		live[nk] = seq
		return w.b.Exec(fmt.Sprintf("UPDATE %s SET k = %d, %s WHERE k = %d", t, nk, w.setSQL(t, seq, x), k))
	default:
		st.changes = append(st.changes, ochange{table: t, op: "d", k: k, seq: live[k]})
		delete(live, k)
		return w.b.Exec(fmt.Sprintf("DELETE FROM %s WHERE k = %d", t, k))
	}
}

// truncate empties t. Like Debezium's defaults (PostgreSQL skips op t
// events, MySQL ignores TRUNCATE), nothing is published for it.
func (w *workload) truncate(t string) error {
	if err := w.b.Exec("TRUNCATE TABLE " + t); err != nil {
		return err
	}
	w.truncates++
	w.truncSeq[t] = w.seq
	w.live[t] = map[int64]int64{}
	return nil
}

// ddl moves t one step along add → rename → change type → drop of a
// column the writer does not use.
func (w *workload) ddl(t string) error {
	n := w.ddlStep[t]
	w.ddlStep[t]++
	col := fmt.Sprintf("x%d", n/4)
	var sql string
	switch n % 4 {
	case 0:
		sql = fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s INT", t, col)
	case 1:
		sql = fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO y%d", t, col, n/4)
	case 2:
		sql = w.b.ChangeType(t, fmt.Sprintf("y%d", n/4))
	default:
		sql = fmt.Sprintf("ALTER TABLE %s DROP COLUMN y%d", t, n/4)
	}
	w.ddls++
	return w.b.Exec(sql)
}

// shiftWhileDown adds (or drops again) a column that moves the columns of
// t where the dialect can; the controller runs it while the publisher is
// down, between committed transactions, so rows written before it must be
// decoded with the shape they were written with.
func (w *workload) shiftWhileDown(t string) error {
	w.ddls++
	if col, ok := w.shifted[t]; ok {
		delete(w.shifted, t)
		return w.b.Exec(fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", t, col))
	}
	col := fmt.Sprintf("z%d", w.ddls)
	w.shifted[t] = col
	return w.b.Exec(w.b.ShiftColumn(t, col))
}

// large inserts a row whose message is just under max_message_bytes, or
// over it (a row.skipped record instead of a message). The key is not
// changed later: an update or delete would carry the large image too.
func (w *workload) large(t string) error {
	w.larges++
	size, over := w.maxBytes-16<<10, w.rng.IntN(2) == 0
	if over {
		size, w.oversized = w.maxBytes+8<<10, w.oversized+1
	}
	w.seq++
	k, seq := w.nextKey, w.seq
	w.nextKey++
	x := w.text(t, seq)
	w.vOf[seq] = x
	if err := w.b.Exec(w.insertSQL(t, k, seq, x, fmt.Sprintf("REPEAT('x', %d)", size))); err != nil {
		return err
	}
	w.log = append(w.log, ochange{table: t, op: "c", k: k, seq: seq, oversized: over})
	return nil
}

// bigTx is the one large transaction: a row, a savepoint (savepoint
// feature), then bigRows rows in one statement. A kill is aimed at the
// moment its rows stream.
func (w *workload) bigTx() error {
	t := w.tables[0]
	if err := w.b.Exec("BEGIN"); err != nil {
		return err
	}
	w.seq++
	k0, seq0 := w.nextKey, w.seq
	x := w.text(t, seq0)
	w.vOf[seq0] = x
	if err := w.b.Exec(w.insertSQL(t, k0, seq0, x, "")); err != nil {
		return err
	}
	if w.f.on("savepoint") {
		if err := w.b.Exec("SAVEPOINT big"); err != nil {
			return err
		}
	}
	if err := w.b.Exec(w.b.BulkInsert(t, k0, seq0, w.bigRows)); err != nil {
		w.b.Exec("ROLLBACK")
		return err
	}
	if err := w.b.Exec("COMMIT"); err != nil {
		return err
	}
	w.nextKey = k0 + int64(w.bigRows) + 1
	w.seq = seq0 + int64(w.bigRows)
	w.bigSeqs = [2]int64{seq0, w.seq}
	w.log = append(w.log, ochange{table: t, op: "c", k: k0, seq: seq0})
	bulk := "bulk"
	bx := vexp{v: &bulk}
	if w.b.Latin1() {
		bx.vl = &bulk
	}
	for i := int64(1); i <= int64(w.bigRows); i++ {
		w.vOf[seq0+i] = bx
		w.log = append(w.log, ochange{table: t, op: "c", k: k0 + i, seq: seq0 + i})
	}
	close(w.bigDone)
	return nil
}
