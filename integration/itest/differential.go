package itest

import (
	"encoding/json"
	"fmt"
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
