package scenario_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/twmb/franz-go/pkg/kgo"
)

// oracleFindings counts what checkOracle found; everything but dups and
// tombstones is a failure.
type oracleFindings struct {
	messages, dups, tombstones, skipped                      int
	gaps, rolledBackPublished, reversals, finalState, values int
	afterRemoval                                             int
	// Exactly once: splitDups are duplicates of a source transaction
	// larger than a Kafka transaction (split, README "Transaction
	// sizing": at least once), eosDups every other duplicate (a failure).
	splitDups, eosDups int
}

func (f oracleFindings) failed() bool {
	return f.gaps+f.rolledBackPublished+f.reversals+f.finalState+f.values+f.afterRemoval+f.eosDups > 0
}

// checkOracle reads every topic of run, the row.skipped records and the
// database, and reports against the workload's model:
//   - gaps: a committed change (or an initial row's r event) of a table
//     configured from start to end that is on no topic (oversized changes
//     need a row.skipped record instead; a row of a table created again
//     while the publisher was down, dropstopped, may come as op r; on
//     PostgreSQL one that table took with it when it was dropped again
//     before its backfill is counted apart, lostWithTable);
//   - rolled-back changes published (whole transactions and savepoint
//     rollbacks);
//   - order reversals: per key, the first occurrences of seq decreasing;
//   - values: a message whose texts are not the ones its seq wrote;
//   - final state: per key, the state the topic leaves (first occurrences
//     applied in order) against the database, for every table configured
//     at the end, the added one included. TRUNCATE publishes nothing, so a
//     key whose last message is older than its table's last TRUNCATE is
//     expected gone from the database; a skipped (oversized) key is not
//     compared;
//   - after removal: changes of a removed table committed after it left
//     source.tables that were published anyway.
//
// Duplicates (replays after a kill) are counted, not errors, at least
// once. Exactly once (run.exactlyOnce) the topics are read read_committed
// and a duplicate is an error, but of the big transaction when it is
// larger than a Kafka transaction (split: seen at least once, as the
// README says). With switch the topics are read read_committed too, and a
// duplicate is an error only where no at_least_once publisher ran between
// it and its previous transactional copy (run.dupAllowed).
func checkOracle(t *testing.T, run *oracleRun, seed uint64) oracleFindings {
	t.Helper()
	w, b := run.w, run.b
	var f oracleFindings
	report := func(count *int, format string, args ...any) {
		*count++
		if *count <= 10 {
			t.Errorf(format, args...)
		}
	}

	skippedKeys := map[string]map[int64]bool{} // table → keys with a row.skipped record
	skippedIDs := map[string][]string{}        // table → the records' event ids
	oversizedKeys := map[string]map[int64]bool{}
	for _, c := range w.log {
		if c.oversized {
			if oversizedKeys[c.table] == nil {
				oversizedKeys[c.table] = map[int64]bool{}
			}
			oversizedKeys[c.table][c.k] = true
		}
	}
	for _, rs := range itest.ReadSkipped(t, run.b.Env()) {
		tb := rs.Table[strings.LastIndex(rs.Table, ".")+1:]
		k, keyed := rs.PrimaryKey["k"].(float64)
		if keyed && !oversizedKeys[tb][int64(k)] {
			// Only an oversized row is skipped, never one a topic refused
			// for a while (refuse).
			report(&f.values, "%s k=%d: a row.skipped record, yet no change of the key was oversized (%s)", tb, int64(k), rs.Reason)
		}
		if skippedKeys[tb] == nil {
			skippedKeys[tb] = map[int64]bool{}
		}
		skippedKeys[tb][int64(k)] = true
		skippedIDs[tb] = append(skippedIDs[tb], rs.EventID)
		f.skipped++
	}

	type pubKey struct {
		op     string
		k, seq int64
	}
	published := map[string]map[pubKey]bool{} // table → first occurrences
	shapes := newShapeCheck(w)
	topicState := map[string]map[int64]int64{}
	began, bytesRead := time.Now(), 0
	defer func() {
		t.Logf("checker: read %d messages, %d MB uncompressed, in %s", f.messages, bytesRead>>20, time.Since(began).Round(time.Second))
	}()
	for _, tb := range w.tables {
		published[tb], topicState[tb] = map[pubKey]bool{}, map[int64]int64{}
		topic := b.Topic(tb)
		if itest.TopicEnd(topic) == 0 {
			continue
		}
		seen := map[string]bool{}
		lastTxn := map[string]time.Time{} // the newest transactional copy of each id (switch)
		last := map[int64]int64{}
		dead := map[int64]bool{} // keyless: keys whose newest message is a delete
		keyless := w.shapes[tb].Keyless
		var opts []kgo.Opt
		if run.readsCommitted() {
			opts = []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}
		}
		itest.EachRawRecordWithin(t, topic, 30*time.Minute, opts, func(r *kgo.Record) {
			f.messages++
			bytesRead += len(r.Key) + len(r.Value)
			if r.Value == nil {
				f.tombstones++
				return
			}
			m, err := oracleRecordOf(r)
			if err != nil {
				t.Fatalf("%s %d/%d: %v", topic, r.Partition, r.Offset, err)
			}
			if why := shapes.key(tb, &m); why != "" {
				report(&f.values, "%s %d/%d: %s: key %s value %.300s", topic, r.Partition, r.Offset, why, r.Key, r.Value)
				return
			}
			op, row := m.op, m.row
			if m.k == nil || row == nil || row.Seq == nil {
				report(&f.values, "%s %d/%d: op %s without k or seq: key %s value %.300s", topic, r.Partition, r.Offset, op, r.Key, r.Value)
				return
			}
			k, seq := *m.k, *row.Seq
			id := m.id
			if id == "" {
				id = fmt.Sprintf("%s/%d/%d", op, k, seq)
			}
			prevTxn, dup := lastTxn[id], seen[id]
			if r.Attrs.IsTransactional() {
				lastTxn[id] = r.Timestamp
			}
			if dup {
				f.dups++
				switch {
				case !run.readsCommitted():
				case splitTx(w, seq):
					f.splitDups++
				case run.dupAllowed(r.Attrs.IsTransactional(), r.Timestamp, prevTxn):
				default:
					report(&f.eosDups, "%s: duplicate read read_committed: op %s k=%d seq=%d (%s)", topic, op, k, seq, id)
				}
				return
			}
			seen[id] = true
			published[tb][pubKey{op, k, seq}] = true
			if seq == 0 { // a key-only delete (shapeTable.keyOnly): no image to check
				delete(topicState[tb], k)
				shapes.message(tb, m, k, seq, nil)
				return
			}
			if w.rolledBack[seq] {
				report(&f.rolledBackPublished, "%s: rolled-back change published: op %s k=%d seq=%d", tb, op, k, seq)
			}
			// A null key spreads a keyless table's messages over the
			// partitions: no order per row, the newest seq is its state (a
			// delete carries the seq it deleted; keys are not reused).
			stale := seq < last[k] || keyless && seq == last[k] && dead[k]
			if stale && !keyless {
				report(&f.reversals, "%s: key %d: seq %d (op %s) published after seq %d", tb, k, seq, op, last[k])
			}
			if !stale || !keyless {
				last[k], dead[k] = seq, op == "d"
			}
			if x, ok := w.vOf[seq]; !ok {
				report(&f.values, "%s: key %d: seq %d was never written (op %s)", tb, k, seq, op)
			} else {
				if got := textValue(row.V); !sameText(got, x.v) {
					report(&f.values, "%s: key %d seq %d: v = %v, want %s", tb, k, seq, got, textOf(x.v))
				}
				if b.Latin1() {
					if got := textValue(row.VL); !sameText(got, x.vl) {
						report(&f.values, "%s: key %d seq %d: vl (latin1) = %v, want %s", tb, k, seq, got, textOf(x.vl))
					}
				}
			}
			if at, ok := run.removed[tb]; ok && seq > at && op != "r" {
				report(&f.afterRemoval, "%s: removed from source.tables at seq %d, yet op %s k=%d seq=%d was published", tb, at, op, k, seq)
			}
			if stale && keyless {
				return
			}
			shapes.message(tb, m, k, seq, func(format string, args ...any) { report(&f.values, format, args...) })
			if op == "d" {
				delete(topicState[tb], k)
			} else {
				topicState[tb][k] = seq
			}
		})
	}

	// An initial row changed inside its backfill chunk's window is
	// published by the stream instead of its r event (docs/snapshot.md):
	// its changes are checked, not its r. Only the toast table's backfill
	// meets the writer (the others' ends before it starts).
	touched := map[string]map[int64]bool{}
	for _, c := range w.log {
		if c.op != "r" && w.shapes[c.table].Feature == "toast" {
			if touched[c.table] == nil {
				touched[c.table] = map[int64]bool{}
			}
			touched[c.table][c.k] = true
		}
	}
	changes := 0
	oversizedKeyless := map[string]int{}
	for _, c := range w.log {
		if c.op != "r" {
			changes++
		}
		if !run.fromStart[c.table] {
			continue
		}
		if c.oversized && w.shapes[c.table].Keyless {
			// Its row.skipped record names no key: counted by table below.
			oversizedKeyless[c.table]++
			if skippedKeys[c.table] == nil {
				skippedKeys[c.table] = map[int64]bool{}
			}
			skippedKeys[c.table][c.k] = true
			continue
		}
		if c.oversized {
			if !skippedKeys[c.table][c.k] {
				report(&f.gaps, "%s: oversized op %s k=%d seq=%d has no row.skipped record", c.table, c.op, c.k, c.seq)
			}
			continue
		}
		keyOnly := c.op == "d" && w.shapes[c.table].KeyOnly && published[c.table][pubKey{c.op, c.k, 0}]
		inWindow := c.op == "r" && touched[c.table][c.k]
		readAgain := c.recreated && published[c.table][pubKey{"r", c.k, c.seq}]
		missing := !published[c.table][pubKey{c.op, c.k, c.seq}] && !keyOnly && !inWindow && !readAgain
		if missing && lostWithTable(w, c) {
			if c.outside {
				w.lostOutside++
			} else {
				w.lostWithTable++
			}
			continue
		}
		if missing {
			report(&f.gaps, "gap: %s op %s k=%d seq=%d committed, never published", c.table, c.op, c.k, c.seq)
		}
		shapes.change(c, func(format string, args ...any) { report(&f.values, format, args...) })
	}
	for tb, n := range oversizedKeyless {
		if got := len(slices.Compact(slices.Sorted(slices.Values(skippedIDs[tb])))); got < n {
			report(&f.gaps, "%s: %d oversized changes, %d row.skipped records", tb, n, got)
		}
	}

	for tb := range run.configured {
		db, err := b.State(tb)
		if err != nil {
			t.Fatalf("read %s: %v", tb, err)
		}
		ts := topicState[tb]
		keys := make([]int64, 0, len(db))
		for k := range db {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			if skippedKeys[tb][k] {
				continue
			}
			if got, ok := ts[k]; !ok || got != db[k].Seq {
				report(&f.finalState, "final state %s k=%d: database seq %d, topic %s", tb, k, db[k].Seq, topicSeq(got, ok))
			}
		}
		for k, seq := range ts {
			if _, ok := db[k]; !ok && seq > w.truncSeq[tb] {
				report(&f.finalState, "final state %s k=%d: topic seq %d, not in the database", tb, k, seq)
			}
		}
		shapes.final(t, b, tb, skippedKeys[tb], func(format string, args ...any) { report(&f.finalState, format, args...) })
	}

	t.Logf("oracle %s seed=%d: %d transactions (%d rolled back, %d with savepoints), %d changes, %d truncates, %d ddl, "+
		"%d large (%d oversized), %d kills, %d crashes, %d messages, %d duplicates, %d tombstones, %d row.skipped | "+
		"gaps=%d rolled_back_published=%d reversals=%d final_state=%d values=%d after_removal=%d%s",
		b.Kind(), seed, w.txs, w.rollbacks, w.savepoints, changes, w.truncates, w.ddls, w.larges, w.oversized,
		run.kills, len(run.crashes), f.messages, f.dups, f.tombstones, f.skipped,
		f.gaps, f.rolledBackPublished, f.reversals, f.finalState, f.values, f.afterRemoval, eosSummary(run, f)+switchSummary(run)+dropSummary(w))
	return f
}

func topicSeq(seq int64, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("seq %d", seq)
}

func sameText(got any, want *string) bool {
	if want == nil {
		return got == nil
	}
	s, ok := got.(string)
	return ok && s == *want
}

func textOf(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// oracleRecord is what the checker reads of a message: its op, its key's
// k, the row (after, or before for a delete) and the event id. A soak's
// topics hold gigabytes, mostly schemas and the "big" column's values;
// encoding/json scans every byte of them through its state machine (about
// 2 MB/s of compressed topic), so payloadOf finds the payload without
// reading the schema, and jsonFields splits objects by their quotes and
// brackets, the "big" column's strings skipped unread.
type oracleRecord struct {
	op     string
	k      *int64
	row    *oracleRow
	before *oracleRow // of an update
	id     string
}

type oracleRow struct {
	K      *int64          `json:"k"`
	Seq    *int64          `json:"seq"`
	V      json.RawMessage `json:"v"`
	VL     json.RawMessage `json:"vl"`
	fields map[string][]byte
}

func oracleRecordOf(r *kgo.Record) (oracleRecord, error) {
	var key struct {
		K *int64 `json:"k"`
	}
	if r.Key != nil { // nil: a table without a primary key
		kp, err := payloadOf(r.Key)
		if err == nil && string(kp) != "null" {
			err = json.Unmarshal(kp, &key)
		}
		if err != nil {
			return oracleRecord{}, fmt.Errorf("key is not JSON: %v: %s", err, r.Key)
		}
	}
	vp, err := payloadOf(r.Value)
	if err != nil {
		return oracleRecord{}, fmt.Errorf("value is not JSON: %v", err)
	}
	var op string
	fields, err := jsonFields(vp)
	if err == nil {
		err = json.Unmarshal(fields["op"], &op)
	}
	if err != nil {
		return oracleRecord{}, fmt.Errorf("value payload: %v", err)
	}
	m := oracleRecord{op: op, k: key.K}
	image := fields["after"]
	if m.op == "d" {
		image = fields["before"]
	}
	if m.row, err = rowFields(image); err != nil {
		return oracleRecord{}, fmt.Errorf("value payload row: %v", err)
	}
	if m.op == "u" {
		if m.before, err = rowFields(fields["before"]); err != nil {
			return oracleRecord{}, fmt.Errorf("value payload before: %v", err)
		}
	}
	for _, h := range r.Headers {
		if h.Key == "tributary-event-id" {
			m.id = string(h.Value)
		}
	}
	return m, nil
}

// payloadOf is the raw "payload" of a Debezium JSON message. The bytes
// "payload": can only be a member's name in valid JSON (inside a string
// the quotes would be escaped), and no member of a Connect schema has that
// name: the first is the envelope's, found without walking the schema.
func payloadOf(msg []byte) ([]byte, error) {
	if at := bytes.Index(msg, []byte(`"payload":`)); at >= 0 {
		start := skipSpace(msg, at+len(`"payload":`))
		end, err := skipJSON(msg, start)
		if err != nil {
			return nil, err
		}
		return msg[start:end], nil
	}
	fields, err := jsonFields(msg)
	if err != nil {
		return nil, err
	}
	p, ok := fields["payload"]
	if !ok {
		return nil, fmt.Errorf("no payload in %.200s", msg)
	}
	return p, nil
}

// rowFields reads k, seq, v and vl of a row image (nil for null or
// absent), and keeps its fields.
func rowFields(image []byte) (*oracleRow, error) {
	if len(image) == 0 || string(image) == "null" {
		return nil, nil
	}
	fields, err := jsonFields(image)
	if err != nil {
		return nil, err
	}
	row := &oracleRow{V: fields["v"], VL: fields["vl"], fields: fields}
	for name, dst := range map[string]**int64{"k": &row.K, "seq": &row.Seq} {
		if raw, ok := fields[name]; ok && string(raw) != "null" {
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s %.40s: %v", name, raw, err)
			}
			*dst = &n
		}
	}
	return row, nil
}

// jsonFields splits a JSON object into its members' raw values, skipping
// each value by its brackets and quotes rather than validating it.
func jsonFields(obj []byte) (map[string][]byte, error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, fmt.Errorf("not an object: %.80s", obj)
	}
	fields := map[string][]byte{}
	for i = skipSpace(obj, i+1); i < len(obj) && obj[i] != '}'; {
		if obj[i] != '"' {
			return nil, fmt.Errorf("member name expected at %d: %.80s", i, obj[i:])
		}
		end, err := skipJSON(obj, i)
		if err != nil {
			return nil, err
		}
		name := string(obj[i+1 : end-1])
		if bytes.IndexByte(obj[i:end], '\\') >= 0 {
			if err := json.Unmarshal(obj[i:end], &name); err != nil {
				return nil, err
			}
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, fmt.Errorf("':' expected after %q", name)
		}
		start := skipSpace(obj, i+1)
		if end, err = skipJSON(obj, start); err != nil {
			return nil, err
		}
		fields[name] = obj[start:end]
		if i = skipSpace(obj, end); i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	if i >= len(obj) {
		return nil, fmt.Errorf("unterminated object: %.80s", obj)
	}
	return fields, nil
}

// skipJSON returns the end of the JSON value that starts at b[i].
func skipJSON(b []byte, i int) (int, error) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			for j := i + 1; ; {
				q := bytes.IndexByte(b[j:], '"')
				if q < 0 {
					return 0, fmt.Errorf("unterminated string at %d", i)
				}
				j += q
				escapes := 0
				for k := j - 1; k > i && b[k] == '\\'; k-- {
					escapes++
				}
				j++
				if escapes%2 == 0 {
					i = j
					break
				}
			}
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		default:
			i++
			if depth == 0 {
				for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
					i++
				}
			} else {
				// Inside brackets only quotes and brackets matter.
				n := bytes.IndexAny(b[i:], `"{}[]`)
				if n < 0 {
					return 0, fmt.Errorf("unterminated value")
				}
				i += n
			}
		}
		if depth == 0 {
			return i, nil
		}
		if depth < 0 {
			return 0, fmt.Errorf("unbalanced bracket at %d", i-1)
		}
	}
	return 0, fmt.Errorf("unterminated value")
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// textValue is a raw JSON value as sameText compares it: nil for null or
// absent, the string for a string, the raw text otherwise.
func textValue(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}

// oracleRecordOf's skipping reader must read what encoding/json reads,
// escapes and nesting included.
func TestOracleRecordOfReadsLikeJSON(t *testing.T) {
	big := strings.Repeat(`x\"}{][`, 5000)
	for _, tc := range []struct{ op, before, after string }{
		{"c", `null`, `{"k":7,"seq":41,"v":"caf\u00e9 \"q\" \\","vl":null,"big":"` + big + `\\\\"}`},
		{"u", `{"k":7,"seq":41,"v":"old"}`, `{"big":null,"k":7,"seq":42,"v":"{[\"]}","vl":"ÿ"}`},
		{"d", `{"k":7,"seq":43,"v":null,"vl":"a\\"}`, `null`},
		{"r", `null`, `{"k":7,"seq":44}`},
	} {
		value := `{"schema":{"type":"struct","fields":[{"field":"before","type":"struct","fields":[{"field":"v","type":"string","optional":true,"default":"\"payload\":{"}]}],"name":"x.Envelope"},"payload":{"before":` +
			tc.before + `,"after":` + tc.after + `,"source":{"version":"2.7.0.Final","name":"p","snapshot":"false","db":"d"},"op":"` + tc.op + `","ts_ms":1}}`
		key := `{"schema":{"type":"struct","fields":[{"field":"k","type":"int64"}]},"payload":{"k":7}}`
		r := &kgo.Record{Key: []byte(key), Value: []byte(value), Headers: []kgo.RecordHeader{{Key: "tributary-event-id", Value: []byte("e1")}}}
		got, err := oracleRecordOf(r)
		if err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		var want struct {
			Payload struct {
				Op            string
				Before, After *oracleRow
			}
		}
		if err := json.Unmarshal(r.Value, &want); err != nil {
			t.Fatal(err)
		}
		row := want.Payload.After
		if tc.op == "d" {
			row = want.Payload.Before
		}
		if got.op != tc.op || got.k == nil || *got.k != 7 || got.id != "e1" {
			t.Fatalf("%s: read op %q k %v id %q", tc.op, got.op, got.k, got.id)
		}
		if *got.row.Seq != *row.Seq || textValue(got.row.V) != textValue(row.V) || textValue(got.row.VL) != textValue(row.VL) {
			t.Fatalf("%s: read seq %d v %s vl %s, encoding/json: seq %d v %s vl %s", tc.op, *got.row.Seq, got.row.V, got.row.VL, *row.Seq, row.V, row.VL)
		}
	}
	for _, bad := range []string{`{"schema":{},"payload":{"op":"c","after":{"seq":1}`, `{"payload":{"op":"c","after":{"seq":"x"}}}`, `[1]`} {
		if _, err := oracleRecordOf(&kgo.Record{Key: []byte(`{"payload":{"k":1}}`), Value: []byte(bad)}); err == nil {
			t.Errorf("%s: read without error", bad)
		}
	}
}
