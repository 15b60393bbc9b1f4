package scenario_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// diffEdges is a round's pipeline beside for what a small
// destination.max_message_bytes and a table without columns do (the
// compared pipeline cannot have them: Debezium has no size limit of its
// own, and a limit this small would skip most changes of the other
// tables). Its tables:
//
//   - zz_bigkey (k text PRIMARY KEY, v text; on MariaDB an ascii VARCHAR
//     key): random incompressible keys whose width in JSON is drawn around
//     the limit (some changes fit, some are over only with their value,
//     some keys alone are over it), inserts, updates of v and deletes,
//     with delete_mode record_and_tombstone. Every change is published or
//     recorded as row.skipped, never both, never neither; a delete whose
//     key alone is over the limit is recorded with tombstone_published
//     false and has no tombstone; one whose tombstone fits has it
//     (docs/delivery.md, "Oversized rows").
//   - PostgreSQL only (MariaDB refuses a table without columns): zz_nocols
//     (created without columns) and zz_nocols_dropped (whose only column
//     was dropped, with rows written before the drop): rows inserted with
//     DEFAULT VALUES and deleted. Nothing is published or recorded for
//     them, and the pipeline warns once for each (docs/configuration.md,
//     "Choosing tables and columns").
//
// The pipeline never stops.
type diffEdges struct {
	limit    int
	ddl      []string
	snapshot []string
	stream   [][]string
	// selection is the source.tables entry of the zero-column tables:
	// their names, or an expression that matches them.
	selection string
	// keys are zz_bigkey's keys, by their number in the want maps, and
	// width their length in JSON.
	keys  []string
	width []int
	// changes counts zz_bigkey's changes as "<op><key number>".
	changes map[string]int
	// keyOver: the key's message alone is over the limit; keyFits: the
	// tombstone surely fits (its key is far enough under the limit).
	keyOver, keyFits map[int]bool
	// deleted are the key numbers deleted (once each: keys are not
	// reused).
	deleted map[int]bool
	// fits is the key of a row whose create and delete fit, with room.
	fits int
	// mariadb: a MariaDB round's (no zero-column tables: MariaDB refuses
	// them).
	mariadb bool
	// noColsStatements counts the zero-column tables' statements in the
	// stream.
	noColsStatements int
}

const (
	edgesTable = "zz_bigkey"
	// edgesMaxKey is under the largest key a PostgreSQL btree index entry
	// holds (about 2704 bytes on 8 KiB pages, header included) and
	// InnoDB's 3072 bytes: a longer random key cannot be inserted.
	edgesMaxKey = 2600
	// edgesKeyMargin is more than a key's message adds to the key itself
	// (its schema, the payload's field name, the headers, the record and
	// batch overhead; a few hundred bytes): a key this much under the
	// limit has a tombstone that fits.
	edgesKeyMargin = 700
	// edgesEnvelope is more than a record adds to its row image and its
	// key, which is in it twice (the key's and the envelope's schemas,
	// mostly: about 3 KB).
	edgesEnvelope = 3200
	// edgesEnd is the last change of zz_bigkey, after the round's
	// stream: once it is on the topic, everything before it has been
	// handled (its key is outside the random keys' alphabet).
	edgesEnd = "~end"
)

var pgNoColsTables = []string{"zz_nocols", "zz_nocols_dropped"}

func (g *diffGen) diffEdges(rows, ops int, mariadb bool) *diffEdges {
	s := &diffEdges{changes: map[string]int{}, keyOver: map[int]bool{}, keyFits: map[int]bool{}, deleted: map[int]bool{}, mariadb: mariadb}
	// Above the smallest value message (about 3 KB: the envelope's
	// schema), so that some changes fit.
	s.limit = 4000 + g.r.IntN(1001)
	if mariadb {
		// InnoDB's keys hold up to 3072 bytes; an ascii character is one.
		s.ddl = []string{`CREATE TABLE ` + edgesTable + ` (k VARCHAR(3000) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY, v TEXT CHARACTER SET ascii)`}
	} else {
		s.ddl = []string{
			`CREATE TABLE ` + edgesTable + ` (k text PRIMARY KEY, v text)`,
			`CREATE TABLE zz_nocols ()`,
			`ALTER TABLE zz_nocols REPLICA IDENTITY FULL`,
			fmt.Sprintf(`CREATE TABLE zz_nocols_dropped (a %s)`, g.pick([]string{"integer", "text", "numeric", "boolean"})),
			`ALTER TABLE zz_nocols_dropped REPLICA IDENTITY FULL`,
		}
		// Rows written before the drop keep their (dropped) value on disk.
		for range g.r.IntN(3) {
			s.ddl = append(s.ddl, `INSERT INTO zz_nocols_dropped VALUES (NULL)`)
		}
		s.ddl = append(s.ddl, `ALTER TABLE zz_nocols_dropped DROP COLUMN a`)
		s.selection = "public.zz_nocols, public.zz_nocols_dropped"
		if g.chance(0.5) {
			s.selection = `'public\.zz_nocols.*'`
		}
		for _, tb := range pgNoColsTables {
			for range g.r.IntN(3) {
				s.snapshot = append(s.snapshot, `INSERT INTO `+tb+` DEFAULT VALUES`)
			}
		}
	}

	// Keys of up to edgesMaxKey bytes, some of whose characters are
	// control characters JSON writes as six (\u0001): a key of the
	// table's can be over the limit alone, in the key's message, while a
	// limit above the value message's envelope lets others fit. Random,
	// so that neither the index nor a producer compresses them.
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	const controls = "\x01\x02\x03\x04\x05\x06\x07\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[g.r.IntN(len(alphabet))]
		}
		return string(b)
	}
	// key is a random key of wide bytes in JSON: n characters, c of them
	// control characters.
	key := func(wide int) (string, int) {
		n := (wide + 5) / 6
		if hi := min(wide, edgesMaxKey); hi > n {
			n += g.r.IntN(hi - n + 1)
		}
		c := (wide - n) / 5
		b := []byte(random(n))
		for _, i := range g.r.Perm(n)[:c] {
			b[i] = controls[g.r.IntN(len(controls))]
		}
		return string(b), n + 5*c
	}
	// A key's width in JSON: small enough for the change to fit with a
	// short value, over only with the envelope, near the limit alone (the
	// tombstone may or may not fit), or over it alone. A value: null,
	// short, or of up to half the limit.
	keyWidth := func() int {
		switch g.r.IntN(4) {
		case 0:
			return 1 + g.r.IntN((s.limit-edgesEnvelope)/2)
		case 1:
			lo := (s.limit - edgesEnvelope) / 2
			return lo + g.r.IntN(s.limit-edgesKeyMargin-lo)
		case 2:
			return s.limit - edgesKeyMargin + g.r.IntN(edgesKeyMargin)
		}
		return s.limit + g.r.IntN(2*edgesKeyMargin)
	}
	value := func() string {
		switch {
		case g.chance(0.2):
			return "NULL"
		case g.chance(0.5):
			return "'" + random(g.r.IntN(200)) + "'"
		}
		return "'" + random(g.r.IntN(s.limit/2)) + "'"
	}
	var live []int
	vals := map[int]string{} // each live key's v
	insert := func(op string, wide int, v string) string {
		k := len(s.keys)
		kv, width := key(wide)
		s.keys, s.width = append(s.keys, kv), append(s.width, width)
		s.keyOver[k], s.keyFits[k] = width >= s.limit, width <= s.limit-edgesKeyMargin
		live = append(live, k)
		s.changes[fmt.Sprintf("%s%d", op, k)]++
		vals[k] = v
		return fmt.Sprintf("INSERT INTO %s VALUES ('%s', %s)", edgesTable, s.keys[k], vals[k])
	}
	del := func(i int) string {
		k := live[i]
		live = slices.Delete(live, i, i+1)
		s.changes[fmt.Sprintf("d%d", k)]++
		s.deleted[k] = true
		return fmt.Sprintf("DELETE FROM %s WHERE k = '%s'", edgesTable, s.keys[k])
	}
	for range max(rows, 1) {
		s.snapshot = append(s.snapshot, insert("r", keyWidth(), value()))
	}
	for range max(ops, 6) {
		var stmt string
		switch {
		case !mariadb && g.chance(0.25):
			// A zero-column table's change.
			tb := g.pick(pgNoColsTables)
			switch g.r.IntN(4) {
			case 0:
				stmt = `DELETE FROM ` + tb
			case 1:
				stmt = `DELETE FROM ` + tb + ` WHERE ctid = (SELECT ctid FROM ` + tb + ` LIMIT 1)`
			default:
				stmt = `INSERT INTO ` + tb + ` DEFAULT VALUES`
			}
			s.noColsStatements++
		case len(live) == 0 || g.chance(0.4):
			stmt = insert("c", keyWidth(), value())
		case g.chance(0.5):
			k := live[g.r.IntN(len(live))]
			v := value()
			// MariaDB logs no row of an update that changes nothing.
			if !mariadb || v != vals[k] {
				s.changes[fmt.Sprintf("u%d", k)]++
			}
			vals[k] = v
			stmt = fmt.Sprintf("UPDATE %s SET v = %s WHERE k = '%s'", edgesTable, v, s.keys[k])
		default:
			stmt = del(g.r.IntN(len(live)))
		}
		s.stream = append(s.stream, []string{stmt})
	}
	// Every round deletes a key over the limit alone and one whose
	// tombstone fits, and writes to both zero-column tables; it inserts a
	// row that fits and deletes it.
	for _, over := range []bool{true, false} {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(s.deleted)), func(k int) bool { return s.keyOver[k] == over && (over || s.keyFits[k]) }) {
			wide := s.limit + g.r.IntN(2*edgesKeyMargin)
			if !over {
				wide = 1 + g.r.IntN(s.limit-edgesKeyMargin)
			}
			s.stream = append(s.stream, []string{insert("c", wide, value())}, []string{del(len(live) - 1)})
		}
	}
	s.fits = len(s.keys)
	s.stream = append(s.stream, []string{insert("c", 1+g.r.IntN((s.limit-edgesEnvelope)/2), "NULL")}, []string{del(len(live) - 1)})
	if !mariadb {
		for _, tb := range pgNoColsTables {
			s.stream = append(s.stream, []string{`INSERT INTO ` + tb + ` DEFAULT VALUES`})
			s.noColsStatements++
		}
	}
	return s
}

// interleave puts s's transactions among the round's, and the end
// marker after them.
func (s *diffEdges) interleave(g *diffGen, w *diffWorkload) {
	diffInterleave(g, w, s.stream)
	k := len(s.keys)
	s.keys, s.width = append(s.keys, edgesEnd), append(s.width, len(edgesEnd))
	s.keyFits[k] = true
	s.changes[fmt.Sprintf("c%d", k)]++
	w.stream = append(w.stream, []string{fmt.Sprintf("INSERT INTO %s VALUES ('%s', '')", edgesTable, edgesEnd)})
}

// pgBeside runs the side pipeline of s on e's PostgreSQL database.
func (s *diffEdges) pgBeside(e *itest.Env) *diffBeside {
	side := *e
	side.Name, side.Prefix = e.Name+"_edges", e.Prefix+"-edges"
	cfg := side.WritePipeline(itest.PipelineConfig{
		Source:      "  tables: [public." + edgesTable + ", " + s.selection + "]\n",
		Destination: s.destination(),
		File:        "edges.yaml",
	})
	return s.beside(&side, cfg, "public")
}

// myBeside runs the side pipeline of s on e's MariaDB database.
func (s *diffEdges) myBeside(t *testing.T, e *itest.MyEnv) *diffBeside {
	side := e.Sub(t, "edges")
	cfg := side.WriteConfigWith("  tables: ["+e.DB+"."+edgesTable+"]\n", s.destination())
	return s.beside(side.Env, cfg, e.DB)
}

func (s *diffEdges) destination() string {
	return fmt.Sprintf("  max_message_bytes: %d\n  delete_mode: record_and_tombstone\n", s.limit)
}

// beside runs the side pipeline of s, side's with config cfg, whose
// tables are in schema (PostgreSQL) or database (MariaDB) schema.
func (s *diffEdges) beside(side *itest.Env, cfg, schema string) *diffBeside {
	qualified := schema + "." + edgesTable
	topic := side.Prefix + "." + qualified
	byKey := map[string]int{}
	for i, k := range s.keys {
		byKey[k] = i
	}
	var snapshot int
	for k, n := range s.changes {
		if strings.HasPrefix(k, "r") {
			snapshot += n
		}
	}
	total := 0
	for _, n := range s.changes {
		total += n
	}
	var p *itest.Proc
	b := &diffBeside{}
	b.start = func(t *testing.T) {
		t.Cleanup(func() {
			if t.Failed() && p != nil {
				t.Logf("the pipeline beside (%s) output:\n%s", edgesTable, p.Out)
			}
		})
		p = side.Start("run", "--config", cfg)
	}
	b.ready = func(t *testing.T) bool {
		if p.Exited() {
			t.Fatalf("the side pipeline (%s) exited:\n%s", edgesTable, p.Out)
		}
		return int(itest.TopicEnd(topic))+len(side.SkippedLines(t)) >= snapshot &&
			backfilled(p.Out.String(), qualified) && (s.mariadb || backfilled(p.Out.String(), "public.zz_nocols", "public.zz_nocols_dropped"))
	}
	var msgs []itest.Message
	b.check = func(t *testing.T) {
		itest.WaitOrDump(t, p, 120*time.Second, "the side pipeline's changes (up to "+edgesEnd+")", func() bool {
			skipped := side.SkippedLines(t)
			if slices.ContainsFunc(skipped, func(rs webhook.RowSkipped) bool { return rs.PrimaryKey["k"] == edgesEnd }) {
				t.Fatalf("%s: the end marker (key %q, empty value) recorded as row.skipped: max_message_bytes %d is under the envelope", edgesTable, edgesEnd, s.limit)
			}
			if int(itest.TopicEnd(topic))+len(skipped) < total {
				return false
			}
			msgs = itest.ReadTopicIfAny(t, topic)
			return slices.ContainsFunc(msgs, func(m itest.Message) bool {
				return m.Value != nil && fmt.Sprint(m.Key["payload"].(map[string]any)["k"]) == edgesEnd
			})
		})
		out := p.Out.String()
		if code := p.Stop(t); code != 0 {
			t.Errorf("the side pipeline (%s): exit %d after SIGTERM", edgesTable, code)
		}
		key := func(m map[string]any) int {
			k, ok := byKey[fmt.Sprint(m["k"])]
			if !ok {
				t.Errorf("%s: a key not written: %.40q…", edgesTable, fmt.Sprint(m["k"]))
				return -1
			}
			return k
		}
		published, skipped, tombstones := map[string]int{}, map[string]int{}, map[int]int{}
		for _, m := range msgs {
			k := key(m.Key["payload"].(map[string]any))
			if m.Value == nil {
				tombstones[k]++
				continue
			}
			published[fmt.Sprint(m.Payload()["op"], k)]++
		}
		tombstoneSkipped := map[int]bool{}
		for _, rs := range itest.ReadSkipped(t, side) {
			if rs.Table != qualified {
				t.Errorf("row.skipped of %s (a table without columns, or not of the round): %+v", rs.Table, rs)
				continue
			}
			k := key(rs.PrimaryKey)
			op := fmt.Sprint(rs.Extra["op"])
			skipped[fmt.Sprint(op, k)]++
			if rs.LimitBytes != s.limit || rs.SizeBytes <= rs.LimitBytes {
				t.Errorf("%s: row.skipped of %s%d: size %d, limit %d; want a size over the limit %d", edgesTable, op, k, rs.SizeBytes, rs.LimitBytes, s.limit)
			}
			if op == "d" {
				if tp, _ := rs.Extra["tombstone_published"].(bool); !tp {
					tombstoneSkipped[k] = true
				}
			}
		}
		var bad []string
		for _, c := range slices.Sorted(maps.Keys(s.changes)) {
			var k int
			fmt.Sscan(c[1:], &k)
			pub, skip := published[c], skipped[c]
			if pub+skip != s.changes[c] {
				bad = append(bad, fmt.Sprintf("%s (key of %d bytes in JSON): %d change(s), %d published and %d recorded as row.skipped", c, s.width[k], s.changes[c], pub, skip))
			}
			if s.keyOver[k] && pub > 0 {
				bad = append(bad, fmt.Sprintf("%s: its key alone (%d bytes in JSON) is over the limit, yet published", c, s.width[k]))
			}
		}
		for _, c := range []string{fmt.Sprintf("c%d", s.fits), fmt.Sprintf("d%d", s.fits)} {
			if published[c] != 1 {
				bad = append(bad, fmt.Sprintf("%s (key of %d bytes in JSON, value null): not published, yet twice its key and an envelope of %d bytes are under the limit", c, s.width[s.fits], edgesEnvelope))
			}
		}
		for c := range published {
			if s.changes[c] == 0 {
				bad = append(bad, fmt.Sprintf("%s published, not a change of the round", c))
			}
		}
		for c := range skipped {
			if s.changes[c] == 0 {
				bad = append(bad, fmt.Sprintf("%s recorded as row.skipped, not a change of the round", c))
			}
		}
		for k := range s.keys {
			want := 0
			if s.deleted[k] && !tombstoneSkipped[k] {
				want = 1
			}
			switch {
			case s.deleted[k] && s.keyOver[k] && !tombstoneSkipped[k]:
				bad = append(bad, fmt.Sprintf("d%d: its key alone (%d bytes in JSON) is over the limit, yet not recorded with tombstone_published false", k, s.width[k]))
			case s.deleted[k] && s.keyFits[k] && tombstoneSkipped[k]:
				bad = append(bad, fmt.Sprintf("d%d: its tombstone fits (key of %d bytes in JSON), yet recorded with tombstone_published false", k, s.width[k]))
			}
			if tombstones[k] != want {
				bad = append(bad, fmt.Sprintf("key %d (%d bytes in JSON, deleted %v, recorded with tombstone_published false %v): %d tombstone(s), want %d", k, s.width[k], s.deleted[k], tombstoneSkipped[k], tombstones[k], want))
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s (max_message_bytes %d, delete_mode record_and_tombstone, Tributary alone): %d difference(s) from docs/delivery.md \"Oversized rows\":\n%s",
				edgesTable, s.limit, len(bad), strings.Join(bad, "\n"))
		}
		for _, tb := range pgNoColsTables {
			if s.mariadb {
				break
			}
			if n := itest.TopicEnd(side.Prefix + ".public." + tb); n != 0 {
				t.Errorf("%s (no columns): %d records published, want none", tb, n)
			}
			warned := 0
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, `table has no columns to publish`) && strings.Contains(line, `"public.`+tb+`"`) {
					warned++
				}
			}
			if warned != 1 {
				t.Errorf("%s (no columns): warned %d times, want once (docs/configuration.md)", tb, warned)
			}
		}
		overAlone := 0
		for k := range s.deleted {
			if s.keyOver[k] {
				overAlone++
			}
		}
		t.Logf("%s (max_message_bytes %d): %d changes, %d published, %d recorded as row.skipped (%d deletes, %d of a key over the limit alone), %d tombstones",
			edgesTable, s.limit, total, stateRows(published), stateRows(skipped), len(s.deleted), overAlone, len(msgs)-stateRows(published))
		if !s.mariadb {
			t.Logf("zero-column tables (%s): %d statements, nothing published, warned once each", s.selection, s.noColsStatements)
		}
	}
	return b
}
