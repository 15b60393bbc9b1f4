package mongodb

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Filter selects collections as Debezium's collection.include.list and
// collection.exclude.list do: each entry a regular expression matched,
// case-insensitively, against the whole "database.collection" name; an
// empty include list selects every collection. The system databases
// (admin, config, local) and system.* collections are never selected.
type Filter struct {
	include, exclude []*regexp.Regexp
	// signal is Tributary's own watermark collection, always let through
	// the stream (never captured as data).
	signal string
}

// NewFilter compiles the lists. field names the configuration key in
// errors (e.g. "source.collections"); every bad entry is reported.
func NewFilter(include, exclude []string) (*Filter, error) {
	f := &Filter{}
	var errs []error
	compile := func(field string, list []string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for i, p := range list {
			p = strings.TrimSpace(p)
			if p == "" {
				errs = append(errs, fmt.Errorf("%s[%d]: empty pattern", field, i))
				continue
			}
			re, err := regexp.Compile("(?i)^(?:" + p + ")$")
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d] %q: %v", field, i, p, err))
				continue
			}
			out = append(out, re)
		}
		return out
	}
	f.include = compile("source.collections", include)
	f.exclude = compile("source.exclude_collections", exclude)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// systemDatabase reports a database Debezium never captures.
func systemDatabase(db string) bool { return db == "admin" || db == "config" || db == "local" }

// Match reports whether the collection db.coll is captured.
func (f *Filter) Match(db, coll string) bool {
	if systemDatabase(db) || strings.HasPrefix(coll, "system.") {
		return false
	}
	ns := db + "." + coll
	if ns == f.signal {
		return false
	}
	if len(f.include) > 0 {
		in := false
		for _, re := range f.include {
			if re.MatchString(ns) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	for _, re := range f.exclude {
		if re.MatchString(ns) {
			return false
		}
	}
	return true
}
