package config

import (
	"reflect"
	"slices"
	"strings"
)

// didYouMean suggests the key of t closest to an unknown key, as
// "; did you mean `bootstrap_servers`?", or "" when none is close. It also
// names the section a key belongs to when it was put in the wrong one.
func didYouMean(t reflect.Type, key string) string {
	norm := normalizeKey(key)
	best, bestDist := "", 0
	for _, name := range keysOf(t) {
		d := editDistance(norm, name)
		if best == "" || d < bestDist {
			best, bestDist = name, d
		}
	}
	// A third of the key, at least 1 and at most 3 edits: "bootstrap_server"
	// and "topic-prefix" match, "colour" matches nothing.
	limit := min(max(len(norm)/3, 1), 3)
	if best != "" && bestDist <= limit {
		return "; did you mean `" + best + "`?"
	}
	if section := sectionOf(t, norm); section != "" {
		return "; `" + norm + "` belongs under " + section
	}
	return ""
}

// normalizeKey forgives case and '-' for '_', the commonest slips.
func normalizeKey(k string) string {
	return strings.ReplaceAll(strings.ToLower(k), "-", "_")
}

// sectionOf names the top-level section holding key, when t is another one.
func sectionOf(t reflect.Type, key string) string {
	root := reflect.TypeOf(Config{})
	for i := 0; i < root.NumField(); i++ {
		f := root.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Struct || f.Type == t {
			continue
		}
		if slices.Contains(keysOf(f.Type), key) {
			return yamlName(f)
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, over bytes
// (keys are ASCII; a hostile key is at most a few KiB and this is quadratic
// in it only for the first 64 bytes).
func editDistance(a, b string) int {
	if len(a) > 64 {
		a = a[:64]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
