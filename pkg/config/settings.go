package config

import (
	"bytes"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// A source type's own settings (a PostgreSQL slot, a MySQL server id) are
// not fields of Source: each SourceKind declares a struct of them, and its
// keys sit at the top of the source mapping beside the common ones
// (source.slot), as they always have. The walker and the final decode
// route each such key to the struct of the document's source.type; a key
// of another registered type is decoded into that type's struct, checked
// as usual, and reported by Warnings as having no effect (or refused, when
// the kind says so: SourceKind.Refuses).

// SourceSettings is a source kind's own settings: a value of the struct
// type its SourceKind.Settings declares (postgres.Settings), or nil.
type SourceSettings any

var (
	sourceType   = reflect.TypeOf(Source{})
	settingsType = reflect.TypeOf((*SourceSettings)(nil)).Elem()
)

// SettingsOf is s's settings as its kind's type T: the zero T when s has
// none (a Source built in code without them) or holds another type's.
func SettingsOf[T any](s Source) T {
	t, _ := s.Settings.(T)
	return t
}

// settingsKey is one key a source mapping may hold beyond Source's fields:
// a field of a registered kind's settings struct.
type settingsKey struct {
	key   string
	kind  SourceKind
	field reflect.StructField
}

// settingsKeys are the keys of every registered kind's settings, those of
// the kind typ first; a key two kinds declare belongs to the first listed.
func settingsKeys(typ string) []settingsKey {
	kinds := registeredKinds()
	for i, k := range kinds {
		if k.Type == typ {
			kinds = append(append([]SourceKind{k}, kinds[:i]...), kinds[i+1:]...)
			break
		}
	}
	var out []settingsKey
	seen := map[string]bool{}
	for _, k := range kinds {
		if k.Settings == nil {
			continue
		}
		t := reflect.TypeOf(k.Settings)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if name := yamlName(f); keyed(f) && !seen[name] {
				seen[name] = true
				out = append(out, settingsKey{key: name, kind: k, field: f})
			}
		}
	}
	return out
}

// settingsTarget holds, while the walker reads one source mapping, the
// settings values its keys decode into: one per kind that has a key there.
type settingsTarget struct {
	keys   []settingsKey
	values map[string]reflect.Value // kind type → addressable settings value
	order  []string
}

func newSettingsTarget(typ string) *settingsTarget {
	return &settingsTarget{keys: settingsKeys(typ), values: map[string]reflect.Value{}}
}

// field is where key decodes to, if a kind declares it.
func (t *settingsTarget) field(key string) (reflect.Value, bool) {
	for _, sk := range t.keys {
		if sk.key != key {
			continue
		}
		v, ok := t.values[sk.kind.Type]
		if !ok {
			v = reflect.New(reflect.TypeOf(sk.kind.Settings)).Elem()
			t.values[sk.kind.Type] = v
			t.order = append(t.order, sk.kind.Type)
		}
		return v.FieldByIndex(sk.field.Index), true
	}
	return reflect.Value{}, false
}

// store puts the decoded settings in s: all of them in foreign, where
// settle finds the kind's own.
func (t *settingsTarget) store(s *Source) {
	for _, typ := range t.order {
		s.foreign = append(s.foreign, t.values[typ].Interface())
	}
}

// settle makes s.Settings the value of kind's settings type, from foreign
// (where the document's keys were decoded) or zero, and leaves in foreign
// only other kinds' values. A Source built in code keeps its Settings.
func (s *Source) settle(k SourceKind) {
	if k.Settings == nil {
		return
	}
	want := reflect.TypeOf(k.Settings)
	var rest []SourceSettings
	for _, f := range s.foreign {
		if reflect.TypeOf(f) == want && (s.Settings == nil || reflect.TypeOf(s.Settings) != want) {
			s.Settings = f
			continue
		}
		rest = append(rest, f)
	}
	if s.Settings != nil && reflect.TypeOf(s.Settings) != want {
		rest = append(rest, s.Settings)
		s.Settings = nil
	}
	if s.Settings == nil {
		s.Settings = reflect.Zero(want).Interface()
	}
	s.foreign = rest
}

// field is where key of the mapping being read into out decodes to: a
// field of out or, for the source section, of a kind's settings.
func (w *walker) field(out reflect.Value, key string) (reflect.Value, bool) {
	if f, ok := fieldByKey(out.Type(), key); ok {
		return out.FieldByIndex(f.Index), true
	}
	if out.Type() == sourceType && w.settings != nil {
		return w.settings.field(key)
	}
	return reflect.Value{}, false
}

// keyed reports whether f is a key of the document: exported, not
// skipped, not the settings (whose keys are the source mapping's own).
func keyed(f reflect.StructField) bool {
	return f.IsExported() && yamlName(f) != "-" && f.Type != settingsType
}

// keysOf are the keys a mapping read into t may hold: its fields' and,
// for the source section, every registered kind's settings keys.
func keysOf(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); keyed(f) {
			out = append(out, yamlName(f))
		}
	}
	if t == sourceType {
		for _, sk := range settingsKeys("") {
			out = append(out, sk.key)
		}
	}
	return out
}

// strictType is Config's type for the final decode of a document with
// yaml.v3: the same fields, the source section's widened with every
// registered kind's settings keys (the kind typ's first), so that
// KnownFields still refuses any other key. Field i of the widened source
// beyond Source's own is keys[i-len(common)].
func strictType(keys []settingsKey) (reflect.Type, []int) {
	var common []int // indexes in Source of its keyed fields
	var fields []reflect.StructField
	for i := 0; i < sourceType.NumField(); i++ {
		if f := sourceType.Field(i); keyed(f) {
			common = append(common, i)
			fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		}
	}
	for i, sk := range keys {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("Setting%d", i), Type: sk.field.Type, Tag: sk.field.Tag})
	}
	src := reflect.StructOf(fields)
	var top []reflect.StructField
	configType := reflect.TypeOf(Config{})
	for i := 0; i < configType.NumField(); i++ {
		f := configType.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Type == sourceType {
			f.Type = src
		}
		top = append(top, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
	}
	return reflect.StructOf(top), common
}

// strictDecode decodes data with yaml.v3 and KnownFields into cfg,
// through strictType.
func strictDecode(data []byte, typ string, cfg *Config) error {
	keys := settingsKeys(typ)
	t, common := strictType(keys)
	doc := reflect.New(t)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(doc.Interface()); err != nil {
		return err
	}
	var clean Config
	out := reflect.ValueOf(&clean).Elem()
	d := doc.Elem()
	for i := 0; i < out.NumField(); i++ {
		f := out.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		from := d.FieldByName(f.Name)
		if f.Type != sourceType {
			out.Field(i).Set(from)
			continue
		}
		for j, idx := range common {
			out.Field(i).Field(idx).Set(from.Field(j))
		}
		target := &settingsTarget{keys: keys, values: map[string]reflect.Value{}}
		for j, sk := range keys {
			v := from.Field(len(common) + j)
			if v.IsZero() {
				continue
			}
			dst, _ := target.field(sk.key)
			dst.Set(v)
		}
		target.store(&clean.Source)
	}
	*cfg = clean
	return nil
}

// documentSourceType is the source.type of a document as yaml.v3 reads
// it (merge keys included), canonical; "" when it has none as a plain
// string (a ${…} reference is resolved later: settle then finds the
// settings by their type). It runs before the walker, which routes each
// settings key by it.
func documentSourceType(data []byte) string {
	var doc struct {
		Source struct {
			Type any `yaml:"type"`
		} `yaml:"source"`
	}
	_ = yaml.Unmarshal(data, &doc) // what decodes is enough; the walker reports the rest
	typ, _ := doc.Source.Type.(string)
	canonicalSourceType(&typ)
	return typ
}

// foreignSettings calls fn with each setting a document gave that belongs
// to another kind than the source's own and is set (not its zero value),
// in the order of the kinds' registration and their fields.
func (s *Source) foreignSettings(fn func(key string, owner SourceKind, value SourceSettings)) {
	for _, f := range s.foreign {
		t := reflect.TypeOf(f)
		owner, ok := kindWithSettings(t)
		if !ok {
			continue
		}
		v := reflect.ValueOf(f)
		for i := 0; i < t.NumField(); i++ {
			if fld := t.Field(i); keyed(fld) && !v.Field(i).IsZero() {
				fn(yamlName(fld), owner, f)
			}
		}
	}
}

func kindWithSettings(t reflect.Type) (SourceKind, bool) {
	for _, k := range registeredKinds() {
		if k.Settings != nil && reflect.TypeOf(k.Settings) == t {
			return k, true
		}
	}
	return SourceKind{}, false
}

// foreignSources reports the settings of other kinds: an error where the
// source's kind refuses the key (after the owner's own rules for it, so a
// malformed value is named as such), else nothing (Warnings warns).
func (v validator) foreignSources(s *Source, kind SourceKind, name string) {
	s.foreignSettings(func(key string, owner SourceKind, value SourceSettings) {
		reason, refused := kind.Refuses[key]
		if !refused {
			return
		}
		field := "source." + key
		if owner.Validate != nil {
			var own Errors
			other := *s
			other.Settings = value
			owner.Validate(&other, name, Report{validator{errs: &own, refs: v.refs}})
			var reported bool
			for _, p := range own.Problems {
				if p.Field == field {
					v.errs.Problems = append(v.errs.Problems, p)
					reported = true
				}
			}
			if reported {
				return
			}
		}
		v.add(field, "is for %s sources only (%s)", owner.Type, reason)
	})
}
