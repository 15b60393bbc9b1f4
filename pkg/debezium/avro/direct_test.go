package avro_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// memRegistry gives each distinct schema of a subject its own id, so that
// two Recoders sharing it frame the same schema alike and different
// schemas differently.
type memRegistry struct {
	mu  sync.Mutex
	ids map[string]uint32
}

func (m *memRegistry) Register(_ context.Context, subject, schema string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil {
		m.ids = map[string]uint32{}
	}
	id, ok := m.ids[subject+"\x00"+schema]
	if !ok {
		id = uint32(len(m.ids) + 1)
		m.ids[subject+"\x00"+schema] = id
	}
	return avro.ConfluentHeader(id), nil
}

func (m *memRegistry) Kind() string { return "confluent" }

// TestDirectEqualsRecoded: for random tables of every column kind the
// encoder supports, in every decimal, time and binary mode, and random
// rows, sources and transactions, the key and value the Recoder writes
// straight from the event (AppendKey, AppendValue) are byte for byte the
// Avro the recoder makes of the encoder's JSON, and fail where it fails.
// AVRO_SEED=<seed> repeats a run.
func TestDirectEqualsRecoded(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AVRO_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("AVRO_SEED: %v", err)
		}
	}
	t.Logf("seed %d (AVRO_SEED=%d repeats this run)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ctx := context.Background()
	rounds, events := 300, 30
	if testing.Short() {
		rounds = 60
	}
	var compared, failed, fallback int
	for round := range rounds {
		format := randomFormat(rng)
		enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "p" + strconv.Itoa(round), Format: format, IncludeUnknownTypes: rng.IntN(2) == 0})
		tbl := randomTable(rng, "t"+strconv.Itoa(round))
		blocks := []*change.SourceBlock{postgres.SourceBlock, mysql.MySQLSourceBlock, mysql.MariaDBSourceBlock}
		block := blocks[rng.IntN(len(blocks))]
		reg := &memRegistry{}
		direct := &avro.Recoder{Registry: reg, Key: true, Value: true}
		oracle := &avro.Recoder{Registry: reg, Key: true, Value: true}
		topic := enc.Topic(tbl)
		for i := range events {
			ev := randomEvent(rng, tbl, block)
			what := func(part string) string {
				return "round " + strconv.Itoa(round) + " event " + strconv.Itoa(i) + " " + part
			}
			js, jok, jerr := enc.AppendKey(nil, ev)
			var want []byte
			var werr error
			if jerr == nil && jok {
				want, werr = oracle.RecodeKey(ctx, topic, js)
			}
			got, gok, gerr := direct.AppendKey(ctx, []byte("pre"), enc, topic, ev)
			checkSame(t, what("key"), js, want, got, jok, gok, jerr, werr, gerr)

			now := rng.Int64N(1 << 52)
			jv, jerr := enc.AppendValue(nil, ev, now)
			want, werr = nil, nil
			if jerr == nil {
				want, werr = oracle.RecodeValue(ctx, topic, jv)
			}
			got, _, null, gerr := direct.AppendValue(ctx, []byte("pre"), enc, topic, ev, now)
			if null {
				if gerr != nil || want != nil || !bytes.Equal(got, []byte("pre")) {
					t.Fatalf("%s: a null value, but the recoder wrote %x (err %v)", what("value"), want, gerr)
				}
				continue
			}
			checkSame(t, what("value"), jv, want, got, true, true, jerr, werr, gerr)
			switch {
			case jerr != nil || werr != nil:
				failed++
			case format.Unwrap && ev.Op == change.OpDelete:
				fallback++
			default:
				compared++
			}
		}
	}
	t.Logf("%d values compared field by field, %d deletes under format.unwrap, %d failing alike", compared, fallback, failed)
	if compared < rounds*events/4 {
		t.Errorf("only %d of %d values encoded: the random rows fail too often to test much", compared, rounds*events)
	}
}

func checkSame(t *testing.T, what string, js, want, got []byte, jok, gok bool, jerr, werr, gerr error) {
	t.Helper()
	if jerr != nil || werr != nil {
		if gerr == nil {
			t.Fatalf("%s: the JSON path fails (%v, %v), the direct one does not\nJSON: %s", what, jerr, werr, js)
		}
		if jerr != nil && gerr.Error() != jerr.Error() {
			t.Fatalf("%s: error %q, the JSON encoder's is %q", what, gerr, jerr)
		}
		if !bytes.Equal(got, []byte("pre")) {
			t.Fatalf("%s: dst changed on error: %q", what, got)
		}
		return
	}
	if gerr != nil {
		t.Fatalf("%s: %v; the JSON path wrote\n%s", what, gerr, js)
	}
	if jok != gok {
		t.Fatalf("%s: ok %v, the JSON encoder's %v", what, gok, jok)
	}
	if !jok {
		return
	}
	if !bytes.HasPrefix(got, []byte("pre")) || !bytes.Equal(got[3:], want) {
		t.Fatalf("%s: direct and recoded Avro differ\ndirect  %x\nrecoded %x\nJSON: %s", what, got, want, js)
	}
}

func randomFormat(rng *rand.Rand) debezium.Format {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	f := debezium.Format{
		Decimal: pick("", "precise", "double", "string"),
		Time:    pick("", "adaptive", "adaptive_time_microseconds", "connect"),
		Binary:  pick("", "bytes", "base64", "hex"),
	}
	if rng.IntN(8) == 0 {
		f.Unwrap = true
		f.DeleteHandling = pick(debezium.DeleteTombstone, debezium.DeleteRewrite, debezium.DeleteRewriteWithTombstone)
		if rng.IntN(2) == 0 {
			f.AddFields = []string{"op", "table", "source.ts_ms"}
		}
	}
	return f
}

// kinds are the column kinds a random table draws from.
var kinds = []change.Kind{
	change.KindBool, change.KindInt16, change.KindInt32, change.KindInt64, change.KindFloat32, change.KindFloat64,
	change.KindDecimal, change.KindString, change.KindJSON, change.KindUUID, change.KindBytes, change.KindDate,
	change.KindTime, change.KindTimestamp, change.KindTimestampTZ, change.KindYear, change.KindEnum, change.KindSet,
	change.KindBits, change.KindXML, change.KindTimeTZ, change.KindDuration, change.KindArray, change.KindTsvector,
	change.KindLtree, change.KindPoint, change.KindGeometry, change.KindGeography, change.KindUnknown,
}

var arrayElems = []change.Kind{
	change.KindBool, change.KindInt16, change.KindInt32, change.KindInt64, change.KindFloat64, change.KindDecimal,
	change.KindString, change.KindJSON, change.KindUUID, change.KindDate, change.KindTimestampTZ, change.KindEnum,
	change.KindTsvector, change.KindBytes, change.KindTime,
}

func randomType(rng *rand.Rand, k change.Kind) change.Type {
	t := change.Type{Kind: k, Precision: -1, Scale: -1, Length: -1}
	switch k {
	case change.KindDecimal:
		if rng.IntN(3) > 0 {
			t.Scale = rng.IntN(6)
			t.Precision = t.Scale + 1 + rng.IntN(30)
			if rng.IntN(8) == 0 {
				t.Precision = -1
			}
		}
	case change.KindTime, change.KindTimestamp, change.KindTimestampTZ:
		t.Precision = []int{-1, 0, 3, 6, 9}[rng.IntN(5)]
	case change.KindEnum, change.KindSet:
		t.Values = "a,b,c"
	case change.KindBits:
		t.Length = 2 + rng.IntN(63)
	case change.KindJSON:
		if rng.IntN(3) == 0 {
			t.Zero = "{}"
		}
	case change.KindUnknown:
		t.Name = "mystery"
		t.JavaDoubles = rng.IntN(2) == 0
	case change.KindArray:
		e := randomType(rng, arrayElems[rng.IntN(len(arrayElems))])
		t.Elem = &e
	}
	return t
}

func randomTable(rng *rand.Rand, name string) *change.Table {
	n := 1 + rng.IntN(12)
	tbl := &change.Table{ID: change.TableID{DB: "db", Schema: "public", Name: name}}
	for i := range n {
		col := change.Column{Name: "c" + strconv.Itoa(i), Type: randomType(rng, kinds[rng.IntN(len(kinds))]), Optional: rng.IntN(3) > 0}
		if i == 0 {
			col.Name = "odd name-0" // adjusted for Avro
		}
		if rng.IntN(4) == 0 {
			d := randomValue(rng, &col.Type, false)
			col.Default = &d
		}
		tbl.Columns = append(tbl.Columns, col)
	}
	for i := range rng.IntN(3) {
		if i < n {
			tbl.Key = append(tbl.Key, i)
		}
	}
	return tbl
}

func randomRow(rng *rand.Rand, tbl *change.Table) change.Row {
	row := make(change.Row, len(tbl.Columns))
	for i := range tbl.Columns {
		c := &tbl.Columns[i]
		switch r := rng.IntN(40); {
		case r < 4 && (c.Optional || r == 0):
			row[i] = change.Value{}
		case r == 5:
			row[i] = change.Value{Kind: change.Unavailable}
		default:
			row[i] = randomValue(rng, &c.Type, true)
		}
	}
	return row
}

func randomEvent(rng *rand.Rand, tbl *change.Table, block *change.SourceBlock) *change.Event {
	ev := &change.Event{Table: tbl, Op: []change.Op{change.OpCreate, change.OpUpdate, change.OpDelete, change.OpRead}[rng.IntN(4)]}
	switch ev.Op {
	case change.OpCreate, change.OpRead:
		ev.After = randomRow(rng, tbl)
	case change.OpUpdate:
		ev.After = randomRow(rng, tbl)
		if rng.IntN(2) == 0 {
			ev.Before = randomRow(rng, tbl)
		}
	case change.OpDelete:
		ev.Before = randomRow(rng, tbl)
	}
	s := &ev.Source
	s.Block = block
	s.CommitMicros = rng.Int64N(1<<52) - 1<<40
	if rng.IntN(3) == 0 {
		s.Name = randomString(rng)
	}
	if rng.IntN(3) == 0 {
		s.Snapshot = []string{"true", "last", "first"}[rng.IntN(3)]
	}
	if rng.IntN(3) == 0 {
		s.Sequence = `["1","2"]`
	}
	for i := range s.Ints {
		if rng.IntN(2) == 0 {
			s.Ints[i] = rng.Int64()
		}
	}
	for i := range s.Strings {
		if rng.IntN(2) == 0 {
			s.Strings[i] = randomString(rng)
		}
	}
	if rng.IntN(3) == 0 {
		ev.Tx = change.Tx{ID: randomString(rng) + "x", Total: rng.Int64N(1000), Table: rng.Int64N(1000)}
	}
	return ev
}

// randomString mixes ASCII, escapes, multi-byte and 4-byte characters
// and bytes that are not UTF-8.
func randomString(rng *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", "\"", "\\", "\n", "\x01", "\x7f", "é", "☃", "😀", "\xff", "\xed\xa0\x80", "\xc3", "<&>", "\u2028", "\uFFFD"}
	var b strings.Builder
	for range rng.IntN(12) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func randomDecimal(rng *rand.Rand, t *change.Type) string {
	switch rng.IntN(30) {
	case 0:
		return "NaN"
	case 1:
		return "Infinity"
	case 2:
		return "-Infinity"
	}
	var b strings.Builder
	if rng.IntN(2) == 0 {
		b.WriteByte('-')
	}
	for range 1 + rng.IntN(20) {
		b.WriteByte(byte('0' + rng.IntN(10)))
	}
	frac := rng.IntN(8)
	if t.Scale >= 0 && rng.IntN(4) > 0 {
		frac = t.Scale
	}
	if frac > 0 {
		b.WriteByte('.')
		for range frac {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	return b.String()
}

func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(10) {
	case 0:
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.SmallestNonzeroFloat64, math.MaxFloat64}[rng.IntN(7)]
	case 1:
		return math.Float64frombits(rng.Uint64())
	case 2:
		return float64(math.Float32frombits(rng.Uint32()))
	}
	return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(20)-8))
}

func pointWKB(x, y float64) []byte {
	b := []byte{1, 1, 0, 0, 0}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

func randomBytes(rng *rand.Rand) []byte {
	b := make([]byte, rng.IntN(20))
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// randomValue is a value of t, now and then of a kind or range that
// does not fit it (when wrong).
func randomValue(rng *rand.Rand, t *change.Type, wrong bool) change.Value {
	if wrong && rng.IntN(60) == 0 {
		return []change.Value{change.IntValue(1), change.TextValue("x"), change.FloatValue(1), change.BinaryValue([]byte{1})}[rng.IntN(4)]
	}
	anyInt := func(lo, hi int64) change.Value {
		if wrong && rng.IntN(40) == 0 {
			return change.IntValue(hi + 1)
		}
		return change.IntValue(lo + rng.Int64N(hi-lo))
	}
	switch t.Kind {
	case change.KindBool:
		return change.IntValue(rng.Int64N(2))
	case change.KindInt16:
		return anyInt(math.MinInt16, math.MaxInt16)
	case change.KindInt32:
		return anyInt(math.MinInt32, math.MaxInt32)
	case change.KindInt64, change.KindDuration:
		return change.IntValue(int64(rng.Uint64()))
	case change.KindFloat32, change.KindFloat64:
		return change.FloatValue(randomFloat(rng))
	case change.KindDecimal:
		return change.TextValue(randomDecimal(rng, t))
	case change.KindString, change.KindJSON, change.KindXML, change.KindTsvector, change.KindLtree, change.KindUUID:
		return change.TextValue(randomString(rng))
	case change.KindEnum:
		return change.TextValue([]string{"a", "b", "c"}[rng.IntN(3)])
	case change.KindSet:
		return change.TextValue([]string{"", "a", "a,c"}[rng.IntN(3)])
	case change.KindBytes, change.KindBits:
		return change.BinaryValue(randomBytes(rng))
	case change.KindUnknown:
		return change.BinaryValue([]byte("(1.50, " + strconv.Itoa(rng.IntN(1000)) + "e3)"))
	case change.KindDate:
		return anyInt(-1_000_000, 1_000_000)
	case change.KindYear:
		return anyInt(1901, 2155)
	case change.KindTime, change.KindTimeTZ:
		if wrong && rng.IntN(20) == 0 {
			return change.IntValue(-rng.Int64N(1e9))
		}
		return change.IntValue(rng.Int64N(86400e6 + 1))
	case change.KindTimestamp, change.KindTimestampTZ:
		switch rng.IntN(20) {
		case 0:
			return change.TextValue("253402300800." + strconv.Itoa(rng.IntN(1e6)))
		case 1:
			return change.IntValue([]int64{math.MaxInt64, math.MinInt64, -1, 0}[rng.IntN(4)])
		}
		return change.IntValue(rng.Int64N(1<<53) - 1<<52)
	case change.KindPoint:
		srid := int64(change.NoSRID)
		if rng.IntN(2) == 0 {
			srid = 4326
		}
		return change.GeometryValue(pointWKB(randomFloat(rng), randomFloat(rng)), srid)
	case change.KindGeometry, change.KindGeography:
		return change.GeometryValue(randomBytes(rng), int64(rng.IntN(5000))-1)
	case change.KindArray:
		n := rng.IntN(5)
		elems := make([]change.Value, n)
		for i := range elems {
			if rng.IntN(6) == 0 {
				continue // null element
			}
			elems[i] = randomValue(rng, t.Elem, wrong)
		}
		return change.Value{Kind: change.Array, Elems: elems}
	}
	return change.Value{}
}
