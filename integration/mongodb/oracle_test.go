package mongodb_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/integration/itest"
	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
)

// randomValue is a random BSON value of any type a document can hold,
// nested up to depth.
func randomValue(r *rand.Rand, depth int) any {
	n := 24
	if depth <= 0 {
		n = 20
	}
	if exoticValues && r.IntN(12) == 0 {
		// DBPointer and code with scope, which format.unwrap refuses
		// as not built.
		return valueOfKind(r, 24+r.IntN(2), depth)
	}
	return valueOfKind(r, r.IntN(n), depth)
}

// exoticValues, set by runHarness's caller, adds DBPointers and code with
// scope to the random documents.
var exoticValues bool

// valueOfKind is a random value of one kind: 0 to 19 scalars of each BSON
// type, 20 a document, 21 an array of anything, 22 an array of documents
// alike, 23 an array of arrays.
func valueOfKind(r *rand.Rand, kind, depth int) any {
	switch kind {
	case 0:
		return int32(r.Uint32())
	case 1:
		return []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 53, 1<<53 + 1}[r.IntN(6)]
	case 2:
		return int64(r.Uint64())
	case 3:
		return []float64{0, math.Copysign(0, -1), 1e-3, 9.999e-4, 1e7, 9999999.5, 1e21, 1e22, 5e-324, math.MaxFloat64,
			math.NaN(), math.Inf(1), math.Inf(-1), 0.1, 1.0 / 3}[r.IntN(15)]
	case 4:
		return math.Float64frombits(r.Uint64())
	case 5:
		return randomString(r)
	case 6:
		return bson.NewObjectID()
	case 7:
		return bson.DateTime(r.Int64N(1<<50) - 1<<49)
	case 8:
		return bson.DateTime([]int64{0, -1, 253402300799999, 253402300800000, 1700000000123}[r.IntN(5)])
	case 9:
		d, _ := bson.ParseDecimal128([]string{"0", "-0", "1.50", "1E+6144", "-1.0E-10", "NaN", "-Infinity", "123456789012345678901234567890123",
			"0.000001", "1E-6176"}[r.IntN(10)])
		return d
	case 10:
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		// No subtype 2 (old binary): the Go driver's Extended JSON keeps its
		// inner length prefix, so the harness's input would differ from
		// the BSON we encode.
		return bson.Binary{Subtype: []byte{0, 1, 3, 4, 5, 6, 7, 8, 0x80, 0xff}[r.IntN(10)], Data: b}
	case 11:
		// The Go driver sorts the options as it writes BSON, so these
		// arrive sorted; unsorted options, as a server may hold them,
		// are pkg/source/mongodb's fixed oracle's (unsortRegexOptions).
		return bson.Regex{Pattern: strings.ReplaceAll(randomString(r), "\x00", ""), Options: []string{"", "i", "imsx", "u", "mi", "zyxu", "xsmi"}[r.IntN(7)]}
	case 12:
		return bson.Timestamp{T: r.Uint32(), I: r.Uint32()}
	case 13:
		return r.IntN(2) == 1
	case 14:
		return bson.Null{}
	case 15:
		return bson.MinKey{}
	case 16:
		return bson.MaxKey{}
	case 17:
		return bson.Undefined{}
	case 18:
		return bson.JavaScript(randomString(r))
	case 19:
		return bson.Symbol(randomString(r))
	case 20:
		return randomDoc(r, depth-1, r.IntN(4))
	case 22:
		return docArray(r, randomTemplate(r, depth-1), depth-1)
	case 23:
		return arrayOfArrays(r, depth-1)
	case 24:
		// A plain namespace: the Go driver's Extended JSON of a
		// $dbPointer's $ref is one the Java parser refuses for some
		// characters, so the harness's input would not be ours.
		return bson.DBPointer{DB: fmt.Sprintf("db.c%d", r.IntN(3)), Pointer: bson.NewObjectID()}
	case 25:
		return bson.CodeWithScope{Code: bson.JavaScript(randomString(r)), Scope: randomDoc(r, depth-1, r.IntN(3))}
	default:
		a := bson.A{}
		for range r.IntN(4) {
			a = append(a, randomValue(r, depth-1))
		}
		return a
	}
}

// workableKinds are the scalar kinds the unwrap transform writes inside
// the documents of an array (not regex, MinKey, MaxKey, undefined,
// symbol).
var workableKinds = []int{0, 1, 2, 3, 5, 6, 7, 9, 10, 12, 13, 14, 18}

const (
	kindSubDoc = -1 - iota
	kindDocArray
	kindScalarArray
)

// tfield is a field of a template: the shape of the documents of one
// array, as a collection's documents usually share one.
type tfield struct {
	key  string
	kind int      // a kind of valueOfKind, or kindSubDoc…
	elem int      // kindScalarArray: its elements' kind
	sub  []tfield // kindSubDoc, kindDocArray: their documents' template
}

func randomTemplate(r *rand.Rand, depth int) []tfield {
	var t []tfield
	for i := range 1 + r.IntN(4) {
		f := tfield{key: fmt.Sprintf("g%d", i), kind: workableKinds[r.IntN(len(workableKinds))]}
		switch r.IntN(12) {
		case 0:
			f.kind = r.IntN(20)
		case 1, 2:
			if depth > 0 {
				f.kind, f.sub = kindSubDoc, randomTemplate(r, depth-1)
			}
		case 3:
			if depth > 0 {
				f.kind, f.sub = kindDocArray, randomTemplate(r, depth-1)
			}
		case 4:
			f.kind, f.elem = kindScalarArray, workableKinds[r.IntN(len(workableKinds))]
		}
		t = append(t, f)
	}
	return t
}

// fromTemplate is a document of template t: some fields left out, some
// null, now and then one of another type or the fields in another order.
func fromTemplate(r *rand.Rand, t []tfield, depth int) bson.D {
	d := bson.D{}
	for _, f := range t {
		if r.IntN(4) == 0 {
			continue
		}
		var v any
		switch {
		case r.IntN(12) == 0:
			v = bson.Null{}
		case r.IntN(20) == 0:
			v = randomValue(r, depth)
		case f.kind == kindSubDoc:
			v = fromTemplate(r, f.sub, depth-1)
		case f.kind == kindDocArray:
			v = docArray(r, f.sub, depth-1)
		case f.kind == kindScalarArray:
			a := bson.A{}
			for range r.IntN(4) {
				a = append(a, valueOfKind(r, f.elem, 0))
			}
			v = a
		default:
			v = valueOfKind(r, f.kind, depth)
		}
		d = append(d, bson.E{Key: f.key, Value: v})
	}
	if r.IntN(6) == 0 {
		r.Shuffle(len(d), func(i, j int) { d[i], d[j] = d[j], d[i] })
	}
	return d
}

// docArray is an array of documents of template t, with now and then a
// null or an empty document.
func docArray(r *rand.Rand, t []tfield, depth int) bson.A {
	a := bson.A{}
	for range r.IntN(5) {
		switch r.IntN(12) {
		case 0:
			a = append(a, bson.Null{})
		case 1:
			a = append(a, bson.D{})
		default:
			a = append(a, fromTemplate(r, t, depth))
		}
	}
	return a
}

// arrayOfArrays is an array of arrays of one scalar kind or of documents
// of one template, with now and then a null.
func arrayOfArrays(r *rand.Rand, depth int) bson.A {
	kind := workableKinds[r.IntN(len(workableKinds))]
	var t []tfield
	if r.IntN(3) == 0 {
		t = randomTemplate(r, depth-1)
	}
	a := bson.A{}
	for range 1 + r.IntN(3) {
		if r.IntN(8) == 0 {
			a = append(a, bson.Null{})
			continue
		}
		in := bson.A{}
		for range r.IntN(4) {
			switch {
			case r.IntN(8) == 0:
				in = append(in, bson.Null{})
			case t != nil:
				in = append(in, fromTemplate(r, t, depth-1))
			default:
				in = append(in, valueOfKind(r, kind, 0))
			}
		}
		a = append(a, in)
	}
	return a
}

// complexEvent reports whether the documents of an event (or a read's
// document) hold an array holding a document or an array.
func complexEvent(raw bson.Raw, read bool) bool {
	if read {
		return holdsComplexArray(raw)
	}
	for _, path := range [][]string{{"fullDocument"}, {"fullDocumentBeforeChange"}, {"documentKey"}, {"updateDescription", "updatedFields"}} {
		if d, ok := raw.Lookup(path...).DocumentOK(); ok && holdsComplexArray(d) {
			return true
		}
	}
	return false
}

// holdsComplexArray reports whether doc holds, at any depth, an array
// holding a document or an array.
func holdsComplexArray(doc bson.Raw) bool {
	vals, err := doc.Values()
	if err != nil {
		return false
	}
	for _, v := range vals {
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			if holdsComplexArray(v.Document()) {
				return true
			}
		case bson.TypeArray:
			elems, _ := v.Array().Values()
			for _, e := range elems {
				if e.Type == bson.TypeEmbeddedDocument || e.Type == bson.TypeArray {
					return true
				}
			}
			if holdsComplexArray(bson.Raw(v.Array())) {
				return true
			}
		}
	}
	return false
}

// runePool mixes the characters the two JSON writers escape differently
// if they disagree at all: controls, DEL, combining and modifier letters,
// format characters, line and paragraph separators, private use,
// supplementary characters, and plain text.
var runePool = []rune{'a', 'Z', '0', ' ', '"', '\\', '/', '\b', '\f', '\n', '\r', '\t', 0, 0x1f, 0x7f, 0x80, 0x9f, 0xa0,
	'é', 'ß', 'Ω', 'ж', '中', '日', 0x0301, 0x02b0, 0x3005, 0x200b, 0x200d, 0x2028, 0x2029, 0xfeff, 0xe000, 0xfffd,
	'€', '¥', '±', '≠', '«', '»', '¡', 'ǅ', 'Ⅻ', '½', 0x1f600, 0x1d11e, 0x10ffff, '<', '&', '\''}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteRune(runePool[r.IntN(len(runePool))])
	}
	return b.String()
}

func randomDoc(r *rand.Rand, depth, n int) bson.D {
	d := bson.D{}
	for i := range n {
		// A key cannot hold NUL.
		key := strings.ReplaceAll(fmt.Sprintf("f%d%s", i, randomString(r)), "\x00", "")
		d = append(d, bson.E{Key: key, Value: randomValue(r, depth)})
	}
	return d
}

// randomEvent is a random insert, update (with pre-image and update
// description), replace or delete on a random _id.
func randomEvent(r *rand.Rand, i int) bson.D {
	var id any
	switch r.IntN(5) {
	case 0:
		id = bson.NewObjectID()
	case 1:
		id = randomString(r)
	case 2:
		id = int64(r.Uint64())
	case 3:
		id = randomDoc(r, 1, 2)
	default:
		id = r.Float64() * 1e9
	}
	full := append(bson.D{{Key: "_id", Value: id}}, randomDoc(r, 3, r.IntN(6))...)
	ev := bson.D{
		{Key: "_id", Value: bson.D{{Key: "_data", Value: fmt.Sprintf("82%08X", i)}}},
		{Key: "operationType", Value: ""},
		{Key: "clusterTime", Value: bson.Timestamp{T: 1700000000 + uint32(i), I: uint32(r.IntN(50))}},
		{Key: "ns", Value: bson.D{{Key: "db", Value: "shop"}, {Key: "coll", Value: "c" + fmt.Sprint(r.IntN(3))}}},
		{Key: "documentKey", Value: bson.D{{Key: "_id", Value: id}}},
	}
	if r.IntN(2) == 0 {
		ev = append(ev, bson.E{Key: "wallTime", Value: bson.DateTime(1700000000000 + int64(i))})
	}
	if r.IntN(4) == 0 {
		ev = append(ev, bson.E{Key: "lsid", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}},
			bson.E{Key: "txnNumber", Value: int64(r.IntN(100))})
	}
	switch r.IntN(4) {
	case 0:
		ev[1].Value = "insert"
		ev = append(ev, bson.E{Key: "fullDocument", Value: full})
	case 1:
		ev[1].Value = "update"
		removed := bson.A{}
		for range r.IntN(3) {
			removed = append(removed, randomString(r))
		}
		trunc := bson.A{}
		for range r.IntN(2) {
			trunc = append(trunc, bson.D{{Key: "field", Value: randomString(r)}, {Key: "newSize", Value: int32(r.IntN(9))}})
		}
		ev = append(ev, bson.E{Key: "updateDescription", Value: bson.D{
			{Key: "updatedFields", Value: randomDoc(r, 2, r.IntN(4))}, {Key: "removedFields", Value: removed}, {Key: "truncatedArrays", Value: trunc}}})
		if r.IntN(2) == 0 {
			ev = append(ev, bson.E{Key: "fullDocument", Value: full})
		}
		if r.IntN(2) == 0 {
			ev = append(ev, bson.E{Key: "fullDocumentBeforeChange", Value: append(bson.D{{Key: "_id", Value: id}}, randomDoc(r, 2, 2)...)})
		}
	case 2:
		ev[1].Value = "replace"
		ev = append(ev, bson.E{Key: "fullDocument", Value: full})
	default:
		ev[1].Value = "delete"
		if r.IntN(2) == 0 {
			ev = append(ev, bson.E{Key: "fullDocumentBeforeChange", Value: full})
		}
	}
	return ev
}

// oracleRun is a randomized run of MongoHarness: the events (a fifth of
// them snapshot reads of a document, reads[i]) and the harness's output,
// two lines per event.
type oracleRun struct {
	events []bson.Raw
	reads  map[int]bool
	out    *bufio.Scanner
	major  int // the harness JVM's major version
}

// runHarness builds MongoHarness (integration/debezium/build.sh; set
// DEBEZIUM_HOME to build it apart from the shared .services), makes
// MONGODB_ORACLE_N random events (default 400) from MONGODB_ORACLE_SEED
// and runs the harness on them with args after the topic prefix "p".
func runHarness(t *testing.T, args ...string) oracleRun {
	t.Helper()
	if b, err := exec.Command("bash", "debezium/build.sh", "mongodb").CombinedOutput(); err != nil {
		t.Fatalf("integration/debezium/build.sh mongodb: %v\n%s", err, b)
	}
	home, err := filepath.Abs("../.services/debezium")
	if err != nil {
		t.Fatal(err)
	}
	if h := os.Getenv("DEBEZIUM_HOME"); h != "" {
		home = h
	}
	home += "/mongodb"
	n, seed := 400, uint64(os.Getpid())
	fmt.Sscan(os.Getenv("MONGODB_ORACLE_N"), &n)
	fmt.Sscan(os.Getenv("MONGODB_ORACLE_SEED"), &seed)
	t.Logf("seed %d (MONGODB_ORACLE_SEED), %d events", seed, n)
	r := rand.New(rand.NewPCG(seed, 1))
	var in bytes.Buffer
	run := oracleRun{reads: map[int]bool{}}
	for i := range n {
		raw, err := bson.Marshal(randomEvent(r, i))
		if err != nil {
			t.Fatal(err)
		}
		run.events = append(run.events, raw)
		wrap := bson.D{{Key: "event", Value: bson.Raw(raw)}}
		if doc, ok := bson.Raw(raw).Lookup("fullDocument").DocumentOK(); ok && i%5 == 0 {
			// A snapshot read of the same document.
			wrap = bson.D{{Key: "read", Value: bson.D{{Key: "ns", Value: "shop.snap"}, {Key: "doc", Value: doc}}}}
			run.events[len(run.events)-1] = doc
			run.reads[i] = true
		}
		line, err := bson.MarshalExtJSON(wrap, true, false)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
	}
	java, major := newestJava(t)
	cmd := exec.Command(java, append([]string{"-Xmx256m", "-cp", home + "/classes:" + home + "/lib/*", "io.debezium.connector.mongodb.MongoHarness", "p"}, args...)...)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("MongoHarness: %v\n%s", err, tail(stderr.String()))
	}
	run.out = bufio.NewScanner(bytes.NewReader(out))
	run.out.Buffer(nil, 16<<20)
	run.major = major
	return run
}

// encode is our record for event i.
func (run oracleRun) encode(i int, opt mongodb.MessageOptions) (mongodb.Message, error) {
	opt.Name, opt.Version = "p", mongodb.DefaultVersion
	if run.reads[i] {
		return mongodb.EncodeRead("shop", "snap", run.events[i], bson.Timestamp{}, "true", opt, 0)
	}
	return mongodb.EncodeRawChange(run.events[i], opt, 0)
}

// Randomized documents of every BSON type, in every event kind, through
// Debezium's MongoDB connector classes (integration/debezium/mongodb) and
// through ours (a fifth of them as snapshot reads): the key and value
// are the same bytes. MONGODB_ORACLE_N
// sets the number of events (default 400), MONGODB_ORACLE_SEED the seed.
func TestRandomEventsMatchDebezium(t *testing.T) {
	itest.SkipShort(t)
	exoticValues = true
	run := runHarness(t)
	exoticValues = false
	sc, major := run.out, run.major
	bad, jdk17 := 0, 0
	for i, raw := range run.events {
		m, err := run.encode(i, mongodb.MessageOptions{Schemas: true})
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		for _, got := range [][]byte{m.Key, m.Value} {
			if !sc.Scan() {
				t.Fatalf("harness output ends at event %d", i)
			}
			if want := sc.Bytes(); !bytes.Equal(got, want) {
				if major < 19 && sameDoubles(got, want) {
					if os.Getenv("MONGODB_ORACLE_SHOW") != "" {
						t.Logf("double digits:\n got %s\nwant %s", got, want)
					}
					// JDK before 19 prints some doubles with more digits
					// than the shortest that round-trips (JDK-4511638);
					// we write the JDK 19+ form, as Debezium's images run
					// on JDK 21.
					jdk17++
					continue
				}
				bad++
				if bad <= 3 {
					js, _ := bson.MarshalExtJSON(raw, true, false)
					t.Errorf("event %d %s:\n got %s\nwant %s", i, js, got, want)
				}
			}
		}
	}
	if jdk17 > 0 {
		t.Logf("%d records differ only in the digits of a double (the harness's JDK is older than 19)", jdk17)
	}
	if bad > 0 {
		t.Errorf("%d of %d records differ", bad, 2*len(run.events))
	}
}

// The same random events through Debezium's ExtractNewDocumentState
// (format.unwrap), schemas on with the default delete handling, and
// schemas off with rewrite and added fields: where the transform writes a
// record ours is the same bytes (or the same tombstone, or none); where
// it fails on a document (mixed-type arrays, MinKey, symbols…) ours
// fails too. The events hold arrays of documents alike and arrays of
// arrays (valueOfKind 22 and 23), which the transform writes in its own
// way; none is refused as not built.
func TestRandomEventsUnwrapMatchDebezium(t *testing.T) {
	itest.SkipShort(t)
	for _, c := range []struct {
		args []string
		opt  mongodb.MessageOptions
	}{
		{[]string{"unwrap"}, mongodb.MessageOptions{Schemas: true, Unwrap: &mongodb.UnwrapOptions{}}},
		{[]string{"schemas.enable=false", "unwrap", "unwrap.delete.tombstone.handling.mode=rewrite", "unwrap.add.fields=op,source.ts_ms"},
			mongodb.MessageOptions{Unwrap: &mongodb.UnwrapOptions{DeleteHandling: "rewrite", AddFields: []string{"op", "source.ts_ms"}}}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			run := runHarness(t, c.args...)
			same, complexSame, failed, notBuilt, bad, jdk17 := 0, 0, 0, 0, 0, 0
			for i, raw := range run.events {
				var lines [2][]byte
				for j := range lines {
					if !run.out.Scan() {
						t.Fatalf("harness output ends at event %d", i)
					}
					lines[j] = bytes.Clone(run.out.Bytes())
				}
				m, err := run.encode(i, c.opt)
				key, value := string(lines[0]), string(lines[1])
				var ok bool
				switch {
				case errors.Is(err, mongodb.ErrUnwrapNotBuilt):
					ok = true
					notBuilt++
				case strings.HasPrefix(key, "<error>"):
					ok = err != nil
					failed++
				case err != nil:
				case key == "<dropped>":
					ok = m.Dropped
				case !bytes.Equal(m.Key, lines[0]):
				case value == "<tombstone>":
					ok = m.Tombstone
				default:
					ok = bytes.Equal(m.Value, lines[1])
					if !ok && run.major < 19 && sameDoubles(m.Value, lines[1]) {
						ok = true
						jdk17++
					}
				}
				if ok && !strings.HasPrefix(key, "<error>") && err == nil {
					same++
					if complexEvent(raw, run.reads[i]) {
						complexSame++
					}
				}
				if !ok {
					bad++
					if bad <= 3 {
						js, _ := bson.MarshalExtJSON(raw, true, false)
						t.Errorf("event %d %s:\n got %s\n     %s (err %v)\nwant %s\n     %s", i, js, m.Key, m.Value, err, key, value)
					}
				}
			}
			t.Logf("%d records the same (%d of them holding arrays of documents or arrays), %d failed in both; %d differ only in a double's digits (JDK < 19)",
				same, complexSame, failed, jdk17)
			if bad > 0 {
				t.Errorf("%d of %d events differ", bad, len(run.events))
			}
			if notBuilt > 0 {
				t.Errorf("%d events refused as not built", notBuilt)
			}
			if complexSame == 0 {
				t.Error("no record holding an array of documents or arrays was written the same")
			}
			if same == 0 || failed == 0 {
				t.Error("the run did not cover both written and failing documents")
			}
		})
	}
}

// newestJava is the java of the newest JDK under /usr/lib/jvm (JDK 19+
// prints doubles as Debezium's JDK 21 images do), else the one on PATH.
func newestJava(t *testing.T) (string, int) {
	best, bestMajor := "java", 0
	paths, _ := filepath.Glob("/usr/lib/jvm/*/bin/java")
	for _, p := range paths {
		out, err := exec.Command(p, "-version").CombinedOutput()
		if err != nil {
			continue
		}
		m := regexp.MustCompile(`version "(\d+)`).FindSubmatch(out)
		if m == nil {
			continue
		}
		if major, _ := strconv.Atoi(string(m[1])); major > bestMajor {
			best, bestMajor = p, major
		}
	}
	t.Logf("harness JVM: %s (major %d)", best, bestMajor)
	return best, bestMajor
}

// javaDouble matches a double as Java prints it inside the JSON.
var javaDouble = regexp.MustCompile(`-?[0-9]+\.[0-9]+(E-?[0-9]+)?`)

// sameDoubles reports whether a and b differ only in how doubles of the
// same value are printed.
func sameDoubles(a, b []byte) bool {
	norm := func(s []byte) string {
		return javaDouble.ReplaceAllStringFunc(string(s), func(d string) string {
			f, err := strconv.ParseFloat(d, 64)
			if err != nil {
				return d
			}
			return strconv.FormatFloat(f, 'g', -1, 64)
		})
	}
	return norm(a) == norm(b)
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}

// The random events with field.exclude.list and field.renames set on the
// connector (source.exclude_columns and source.rename_fields): the random
// documents' fields are f<i> followed by random characters, so the paths
// name the fields whose suffix came out empty, at the top, nested, and in
// updatedFields. The envelope is the same bytes; where a rename meets an
// existing field both fail.
func TestRandomEventsFieldsMatchDebezium(t *testing.T) {
	itest.SkipShort(t)
	exclude := []string{"shop.c0.f0", "shop.*.f1.f0", "shop.snap.f2"}
	renames := []string{"shop.c1.f2:renamed", "shop.c*.f3.f1:g", "shop.snap.f0:f1"}
	sel, err := mongodb.NewFieldSelector(exclude, renames)
	if err != nil {
		t.Fatal(err)
	}
	run := runHarness(t, "connector.field.exclude.list="+strings.Join(exclude, ","), "connector.field.renames="+strings.Join(renames, ","))
	same, failed, bad, changed := 0, 0, 0, 0
	for i, raw := range run.events {
		var lines [2][]byte
		for j := range lines {
			if !run.out.Scan() {
				t.Fatalf("harness output ends at event %d", i)
			}
			lines[j] = bytes.Clone(run.out.Bytes())
		}
		m, err := run.encode(i, mongodb.MessageOptions{Schemas: true, Fields: sel})
		var ok bool
		if bytes.HasPrefix(lines[0], []byte("<error>")) {
			ok = err != nil
			failed++
		} else {
			ok = err == nil && bytes.Equal(m.Key, lines[0]) && (bytes.Equal(m.Value, lines[1]) || run.major < 19 && sameDoubles(m.Value, lines[1]))
			if ok {
				same++
				if plain, err := run.encode(i, mongodb.MessageOptions{Schemas: true}); err == nil && !bytes.Equal(plain.Value, m.Value) {
					changed++
				}
			}
		}
		if !ok {
			bad++
			if bad <= 3 {
				js, _ := bson.MarshalExtJSON(raw, true, false)
				t.Errorf("event %d %s:\n got %s\n     %s (err %v)\nwant %s\n     %s", i, js, m.Key, m.Value, err, lines[0], lines[1])
			}
		}
	}
	t.Logf("%d records the same (%d of them changed by the paths), %d failed in both", same, changed, failed)
	if bad > 0 {
		t.Errorf("%d of %d events differ", bad, len(run.events))
	}
	if changed == 0 {
		t.Error("no record was changed by the paths")
	}
}
