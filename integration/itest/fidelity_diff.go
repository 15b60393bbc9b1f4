package itest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// RawKeyText is the canonical text of a record's key ("null" for none).
func RawKeyText(r RawRecord) string {
	m, _ := r.Key.(map[string]any)
	b, _ := json.Marshal(m["payload"])
	return string(b)
}

// CompareByKey compares two sides' records of a topic key by key, each
// key's records in the order written, and returns the number of pairs
// compared. Schemas are compared under the topic's name alone, so that a
// schema difference is reported once for all keys.
func (d *FidelityDiffs) CompareByKey(topic string, dbz, trib []RawRecord) int {
	group := func(recs []RawRecord) ([]string, map[string][]RawRecord) {
		var keys []string
		m := map[string][]RawRecord{}
		for _, r := range recs {
			k := RawKeyText(r)
			if m[k] == nil {
				keys = append(keys, k)
			}
			m[k] = append(m[k], r)
		}
		return keys, m
	}
	// Each side reads a table's snapshot in its own order (Debezium the
	// heap, Tributary the key): the snapshot markers (first,
	// last_in_data_collection, …) are compared as the topic's sequence,
	// then left out of the per-key comparison.
	markers := func(recs []RawRecord) []any {
		var out []any
		for _, r := range recs {
			if p := valuePayload(r.Value); p != nil && p["op"] == "r" {
				out = append(out, p["source"].(map[string]any)["snapshot"])
			}
		}
		return out
	}
	d.compare(topic, -1, "snapshot markers in order", markers(dbz), markers(trib))
	clean := d.Sanitize
	d.Sanitize = func(v any) any {
		v = clean(v)
		if p := valuePayload(v); p != nil && p["op"] == "r" {
			p["source"].(map[string]any)["snapshot"] = "<compared in order>"
		}
		return v
	}
	defer func() { d.Sanitize = clean }()
	dk, dm := group(dbz)
	tk, tm := group(trib)
	for _, k := range tk {
		if dm[k] == nil {
			dk = append(dk, k)
		}
	}
	n := 0
	for _, k := range dk {
		a, b := dm[k], tm[k]
		label := topic + " key=" + k
		if len(a) != len(b) {
			d.Add(label, -1, "count", fmt.Sprintf("%d messages %s", len(a), summary(a)), fmt.Sprintf("%d messages %s", len(b), summary(b)))
		}
		for i := 0; i < len(a) && i < len(b); i++ {
			n++
			ak, _ := a[i].Key.(map[string]any)
			bk, _ := b[i].Key.(map[string]any)
			d.compare(topic, i, "key.schema", ak["schema"], bk["schema"])
			d.compare(label, i, "key.payload", ak["payload"], bk["payload"])
			av, _ := d.Sanitize(a[i].Value).(map[string]any)
			bv, _ := d.Sanitize(b[i].Value).(map[string]any)
			if (av == nil) != (bv == nil) {
				d.Add(label, i, "value", brief(av), brief(bv))
				continue
			}
			d.compare(topic, i, "value.schema", av["schema"], bv["schema"])
			d.compare(label, i, "value.payload", av["payload"], bv["payload"])
		}
	}
	return n
}

func valuePayload(v any) map[string]any {
	m, _ := v.(map[string]any)
	p, _ := m["payload"].(map[string]any)
	return p
}

// FidelityDiffs collects differences; a schema difference repeated on
// every message of a table version is reported once with a count.
type FidelityDiffs struct {
	// Sanitize masks the volatile fields of a value; nil: sanitize (PostgreSQL's).
	Sanitize func(v any) any
	Lines    []string
	seen     map[string]int // line → index in lines
	count    []int
}

func (d *FidelityDiffs) Add(topic string, i int, path, dbz, trib string) {
	line := fmt.Sprintf("%s %s\n      debezium:  %s\n      tributary: %s", topic, path, dbz, trib)
	if strings.Contains(path, ".schema") {
		if j, ok := d.seen[line]; ok {
			d.count[j]++
			return
		}
	}
	if d.seen == nil {
		d.seen = map[string]int{}
	}
	d.seen[line] = len(d.Lines)
	d.Lines = append(d.Lines, fmt.Sprintf("#%d ", i)+line)
	d.count = append(d.count, 1)
}

func (d *FidelityDiffs) String() string {
	var b strings.Builder
	for i, l := range d.Lines {
		if i == 60 {
			fmt.Fprintf(&b, "... and %d more\n", len(d.Lines)-i)
			break
		}
		b.WriteString("  ")
		b.WriteString(l)
		if d.count[i] > 1 {
			fmt.Fprintf(&b, "\n      (same in %d messages)", d.count[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (d *FidelityDiffs) compareTopic(topic string, dbz, trib []RawRecord) {
	if len(dbz) != len(trib) {
		d.Add(topic, -1, "count", fmt.Sprintf("%d messages %s", len(dbz), summary(dbz)), fmt.Sprintf("%d messages %s", len(trib), summary(trib)))
	}
	for i := 0; i < len(dbz) && i < len(trib); i++ {
		d.compare(topic, i, "key", dbz[i].Key, trib[i].Key)
		clean := d.Sanitize
		if clean == nil {
			clean = Sanitize
		}
		d.compare(topic, i, "value", clean(dbz[i].Value), clean(trib[i].Value))
	}
}

// summary lists the ops of records ("r r c u d ∅") to explain a count mismatch.
func summary(recs []RawRecord) string {
	var ops []string
	for _, r := range recs {
		op := "∅"
		if m, ok := r.Value.(map[string]any); ok {
			if p, ok := m["payload"].(map[string]any); ok {
				op, _ = p["op"].(string)
			}
		}
		ops = append(ops, op)
	}
	return "[" + strings.Join(ops, " ") + "]"
}

// compare walks two decoded JSON values and records each difference by path.
func (d *FidelityDiffs) compare(topic string, i int, path string, a, b any) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			d.Add(topic, i, path, brief(a), brief(b))
			return
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				d.Add(topic, i, path+"."+k, "(absent)", brief(y))
			case !inB:
				d.Add(topic, i, path+"."+k, brief(x), "(absent)")
			default:
				d.compare(topic, i, path+"."+k, x, y)
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok {
			d.Add(topic, i, path, brief(a), brief(b))
			return
		}
		// Schema field lists: name elements by their "field" for a readable path.
		for j := 0; j < len(av) || j < len(bv); j++ {
			label := fmt.Sprintf("[%d]", j)
			if j < len(av) {
				if m, ok := av[j].(map[string]any); ok && m["field"] != nil {
					label = fmt.Sprintf("[%v]", m["field"])
				}
			}
			switch {
			case j >= len(av):
				d.Add(topic, i, path+label, "(absent)", brief(bv[j]))
			case j >= len(bv):
				d.Add(topic, i, path+label, brief(av[j]), "(absent)")
			default:
				d.compare(topic, i, path+label, av[j], bv[j])
			}
		}
	default:
		if !reflect.DeepEqual(a, b) {
			d.Add(topic, i, path, brief(a), brief(b))
		}
	}
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// KeepFidelityOutput writes both sides of topic as JSON lines to the
// folder $FIDELITY_KEEP names, when set, for a look at whole messages.
func KeepFidelityOutput(t *testing.T, topic string, dbz, trib []RawRecord) {
	dir := os.Getenv("FIDELITY_KEEP")
	if dir == "" {
		return
	}
	for side, recs := range map[string][]RawRecord{"debezium": dbz, "tributary": trib} {
		var b []byte
		for _, r := range recs {
			line, _ := json.Marshal(map[string]any{"key": r.Key, "value": r.Value})
			b = append(append(b, line...), '\n')
		}
		path := filepath.Join(dir, topic+"."+side+".jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Errorf("FIDELITY_KEEP: %v", err)
		}
	}
	t.Logf("FIDELITY_KEEP: both sides of %s written to %s", topic, dir)
}

// CheckSourceVersions records a difference unless every Debezium message
// says mariadbPeerVersion and every Tributary message debeziumVersion.
func CheckSourceVersions(d *FidelityDiffs, topic string, dbz, trib []RawRecord) {
	check := func(recs []RawRecord, want, who string) {
		for i, r := range recs {
			m, _ := r.Value.(map[string]any)
			p, _ := m["payload"].(map[string]any)
			s, _ := p["source"].(map[string]any)
			if s == nil {
				continue
			}
			if got := fmt.Sprint(s["version"]); got != want {
				d.Add(topic, i, "value.payload.source.version ("+who+")", want, got)
				return
			}
		}
	}
	check(dbz, mariadbPeerVersion, "debezium")
	check(trib, debeziumVersion, "tributary")
}
