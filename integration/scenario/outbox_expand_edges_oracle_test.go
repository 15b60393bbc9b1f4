package scenario_test

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The outbox router's table_expand_json_payload beside Debezium's
// EventRouter on payloads at the edges of the JSON it is given: deep
// nesting, large arrays, numbers at the limits of their Connect types,
// escapes and surrogate pairs in keys and strings, repeated keys, keys
// with dots whose struct names collide, a payload near a megabyte, and
// one route whose payload changes shape from event to event (each event's
// schema is its own, named as Debezium names it). Left out: an array of
// objects of three or more field sets, or of two where neither begins
// with the other's fields: EventRouter merges their schemas in the order
// of a HashSet of Connect schemas, whose hashes follow the JVM's identity
// hashes of the type constants, so its field order is not one Tributary
// can follow (it keeps the order the fields are first seen in).

// nested is depth objects {"a": ... {"a": leaf}}.
func nested(depth int, open, close, leaf string) string {
	return strings.Repeat(open, depth) + leaf + strings.Repeat(close, depth)
}

func numberList(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(itoa(i * 7919))
	}
	return b.String()
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

var edgePayloads = []string{
	`{"n1": 1.0, "nz": -0, "e": 1E2, "z": 0e0, "p": 1.0E-0, "big": 9007199254740993, "neg": -9007199254740993, "d": 0.1, "x": 123456789012345678, "m": -2147483649, "i": -2147483648}`,
	nested(100, `{"a":`, `}`, `1`),
	`{"x":` + nested(100, `[`, `]`, `1`) + `}`,
	`{"nums": [` + numberList(20000) + `]}`,
	`{"objs": [` + strings.Repeat(`{"a": 1, "b": "x"},`, 2000) + `{"a": 5, "b": "y", "c": [true]}]}`,
	`{"\u00e9\u4e2d\ud83d\ude00": "\ud83d\ude00 \u0000 \u001f \u007f \u2028\u2029 \ufeff", "k\"q": 1, "a\\b": 2, "\/": 3, "tab\there": "\b\f\r"}`,
	`{"o": {"a": 1}, "o": {"b": "x"}, "p": 1, "p": null, "q": [1], "q": []}`,
	`{"a.b": {"c": 1}, "a": {"b": {"c": "x"}}}`,
	`{"r": [{"a": 1}, {"a": 3, "c": [true]}, {"a": 4}]}`,
	`{"s": "` + strings.Repeat("abcdefghij", 60000) + `"}`,
	`{"m": [1, "x"]}`,
}

// TestOutboxExpandEdgesOraclePostgres: a text payload as written, with
// schemas; the order route's last events change shape one after another.
func TestOutboxExpandEdgesOraclePostgres(t *testing.T) {
	e := itest.NewEnv(t, "outboxexpedge")
	evs := orderEvents(edgePayloads)
	for _, s := range []string{`{"a": 1}`, `{"a": "x"}`, `{"a": 1, "b": [1]}`, `{"b": [1], "a": 1}`, `{"a": 2}`} {
		evs = append(evs, expandEvent{route: "order", payload: jsonText(s)})
		evs = append(evs, expandEvent{route: "customer", payload: jsonText(s)})
	}
	runExpandOracle(t, pgExpandSource(t, e, "text"), e.Prefix, evs, "", nil)
}

// TestOutboxExpandLimitsOraclePostgres: numbers beyond a double, objects
// nested one past Jackson's depth limit, the last level an empty object
// or a number (kept as the string). Left out: a
// lone surrogate escape ("\ud800"), which Debezium writes back as the
// escape and Tributary as U+FFFD; and objects nested 999 or 1,000 deep,
// which Debezium's converter cannot write (a StackOverflowError stops the
// engine) and whose schema Tributary writes past max_message_bytes (the
// row is skipped).
func TestOutboxExpandLimitsOraclePostgres(t *testing.T) {
	e := itest.NewEnv(t, "outboxexplim")
	payloads := []string{
		`{"inf": 1e400, "ninf": -1e400, "under": 1e-400, "nunder": -1e-400, "max": 1.7976931348623157e308}`,
		nested(1001, `{"a":`, `}`, `1`),
		`{"x":` + nested(999, `[`, `]`, `{}`) + `}`,
		`{"m": [1, "x"]}`,
	}
	evs := orderEvents(payloads)
	runExpandOracle(t, pgExpandSource(t, e, "text"), e.Prefix, evs, "", nil)
}
