package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// SourceKind is what the configuration knows of one source.type: its
// name and aliases and the rules of its own settings. The drivers declare
// theirs (pkg/source/<driver>/kind.go) and pkg/capture registers them
// (RegisterSource), so that this package names no database's rules: a
// new database brings its own. Every hook may be nil.
type SourceKind struct {
	// Type is the source.type value; Aliases are other spellings taken
	// for it (mariadb for mysql), in any case.
	Type    string
	Aliases []string
	// TimePrecisions are the format.time_precision modes its Debezium
	// connector has, its default first; nil: adaptive (the default),
	// adaptive_time_microseconds and connect. Connectors names the
	// connector in messages ("Debezium's MySQL and MariaDB connectors").
	TimePrecisions []string
	Connectors     string
	// Database names the database in messages ("PostgreSQL"): a key of
	// its Settings on another type's source "has no effect on a mysql
	// source (PostgreSQL only)".
	Database string
	// Settings is the zero value of the kind's own settings struct
	// (postgres.Settings{}), or nil for none. Its exported fields, by
	// their yaml tags, are keys of the source mapping beside Source's
	// own (source.slot); Parse decodes them into a value of this type in
	// Source.Settings (SettingsOf reads it), resolving references and
	// reporting every problem by field as for any other key. A key of
	// one kind set on another's source is decoded and checked by its own
	// type, then warned about (Warnings), unless Refuses names it.
	Settings any
	// Refuses are other kinds' settings keys that are errors on this
	// kind's source rather than warnings, each with the reason ("source.
	// signal_table: is for mysql sources only (<reason>)"); the owning
	// kind's Validate judges the value first.
	Refuses map[string]string
	// Defaults fills the source's own settings the document leaves out
	// (a slot name, a server id); name is the pipeline's name, valid.
	// Source.Settings holds the kind's type (zero when none was given).
	Defaults func(s *Source, name string)
	// ValidateURL reports what is wrong with source.url (set); the
	// message never quotes it (it may hold a password).
	ValidateURL func(url string, r Report)
	// Validate reports what is wrong with the source's own settings
	// (source.slot, source.signal_table, …), by field.
	Validate func(s *Source, name string, r Report)
	// Warn reports settings of a valid document that have no effect on
	// this source (a slot on a mysql source).
	Warn func(s *Source, warn func(field, message string))
	// URLTLS says what source.url alone asks of TLS when no certificate
	// field is set: on (the sources build their own *tls.Config) and
	// whether the host name is verified (SourceTLS). A URL that does not
	// parse asks for nothing.
	URLTLS func(url string) (enabled, hostName bool)
	// CheckTLS reports contradictions between source.url and the
	// certificate fields (TLS switched off in the URL, a CA file there).
	// It runs only when a certificate field is set.
	CheckTLS func(s *Source, r Report)
}

var sourceKinds struct {
	sync.RWMutex
	list []SourceKind
}

// RegisterSource adds a source type's rules; pkg/capture registers every
// driver it builds in. A second registration of a type replaces the first.
// It panics on Settings that are not a struct, or whose keys are Source's.
func RegisterSource(k SourceKind) {
	if k.Settings != nil {
		t := reflect.TypeOf(k.Settings)
		if t.Kind() != reflect.Struct {
			panic(fmt.Sprintf("config: source type %s: Settings must be a struct, not %s", k.Type, t))
		}
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); keyed(f) {
				if _, clash := fieldByKey(sourceType, yamlName(f)); clash {
					panic(fmt.Sprintf("config: source type %s: setting %s is a key every source has", k.Type, yamlName(f)))
				}
			}
		}
	}
	sourceKinds.Lock()
	defer sourceKinds.Unlock()
	sourceKinds.list = slices.DeleteFunc(sourceKinds.list, func(o SourceKind) bool { return o.Type == k.Type })
	sourceKinds.list = append(sourceKinds.list, k)
}

// SourceTypes are the registered source types, in registration order.
func SourceTypes() []string {
	sourceKinds.RLock()
	defer sourceKinds.RUnlock()
	out := make([]string, len(sourceKinds.list))
	for i, k := range sourceKinds.list {
		out[i] = k.Type
	}
	return out
}

// UnregisterSource removes a source type's rules (a test's own kind).
func UnregisterSource(typ string) {
	sourceKinds.Lock()
	defer sourceKinds.Unlock()
	sourceKinds.list = slices.DeleteFunc(sourceKinds.list, func(o SourceKind) bool { return o.Type == typ })
}

// registeredKinds are the registered kinds, in registration order.
func registeredKinds() []SourceKind {
	sourceKinds.RLock()
	defer sourceKinds.RUnlock()
	return slices.Clone(sourceKinds.list)
}

// sourceKind is the registered kind of typ (canonical spelling).
func sourceKind(typ string) (SourceKind, bool) {
	sourceKinds.RLock()
	defer sourceKinds.RUnlock()
	for _, k := range sourceKinds.list {
		if k.Type == typ {
			return k, true
		}
	}
	return SourceKind{}, false
}

// canonicalSourceType rewrites a registered type or alias, in any case,
// to the type's spelling.
func canonicalSourceType(typ *string) {
	sourceKinds.RLock()
	defer sourceKinds.RUnlock()
	for _, k := range sourceKinds.list {
		for _, name := range append([]string{k.Type}, k.Aliases...) {
			if strings.EqualFold(*typ, name) {
				*typ = k.Type
				return
			}
		}
	}
}

// sourceTypesText words the registered types for a message: "postgres or
// mysql".
func sourceTypesText() string {
	types := SourceTypes()
	switch len(types) {
	case 0:
		return "a source type this program registers (it registers none)"
	case 1:
		return types[0]
	}
	return strings.Join(types[:len(types)-1], ", ") + " or " + types[len(types)-1]
}

// Report is how a source kind's hooks report problems: by field, with
// the validator's care for values that came through a reference (a
// secret put in the wrong field is never read back from the error).
type Report struct{ v validator }

// Add reports a problem of field.
func (r Report) Add(field, format string, args ...any) { r.v.add(field, format, args...) }

// Quote is how a message shows field's value: quoted, or a note that
// it came through a reference and is not shown.
func (r Report) Quote(field, value string) string { return r.v.quote(field, value) }

// BadCharacter names the first character of value that ok refuses
// ("character 'S' is not allowed"), or "".
func (r Report) BadCharacter(field, value string, ok func(rune) bool) string {
	return r.v.badCharacter(field, value, ok)
}

// ValidName reports whether a pipeline name is valid (the defaults a
// source derives from it are only made from a valid one).
func ValidName(name string) bool { return validName.MatchString(name) }
