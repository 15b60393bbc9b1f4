package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"

	"go.yaml.in/yaml/v3"
)

// maxDocumentBytes bounds a configuration document. Real ones are a few
// KiB (PEM certificates included); the bound keeps hostile input cheap.
const maxDocumentBytes = 4 << 20

// maxWalkSteps bounds the work of checking one document, whatever its
// aliases and merge keys expand to.
const maxWalkSteps = 100_000

// decodeDocument reads one YAML or JSON document into cfg. Every key and
// value that cannot become part of a Config is reported with its field path
// (yaml.v3's own errors name the Go type and the line, not the path).
// When the document is clean, yaml.v3 with KnownFields(true) makes the
// final decode; otherwise cfg holds what could be decoded, so validation
// can still report the rest.
func decodeDocument(data []byte, cfg *Config, errs *Errors) map[string]Position {
	if len(data) > maxDocumentBytes {
		errs.add("config", fmt.Sprintf("document is larger than %d MiB", maxDocumentBytes>>20))
		return nil
	}
	data = jsonAsYAML(data)

	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	switch err := dec.Decode(&root); {
	case errors.Is(err, io.EOF):
		return nil // an empty document: validation reports the required fields
	case err != nil:
		errs.add("config", "not valid YAML or JSON: "+yamlMessage(err, data))
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		errs.add("config", "holds more than one YAML document; put one pipeline in each file")
		return nil
	}

	w := walker{errs: errs, merged: map[mergeVisit]bool{}, positions: map[string]Position{}, sourceType: documentSourceType(data)}
	before := len(errs.Problems)
	node := &root
	if node.Kind == yaml.DocumentNode {
		if len(node.Content) == 0 {
			return nil
		}
		node = node.Content[0]
	}
	w.walk(node, reflect.ValueOf(cfg).Elem(), "")
	if len(errs.Problems) > before {
		return w.positions
	}

	if err := strictDecode(data, w.sourceType, cfg); err != nil {
		// The walker should have caught everything yaml.v3 rejects; if it
		// did not, report yaml.v3's words rather than nothing.
		for _, line := range strings.Split(yamlMessage(err, data), "\n") {
			if line = strings.TrimSpace(line); line != "" && line != "unmarshal errors:" {
				errs.add("config", line)
			}
		}
		return w.positions
	}
	return w.positions
}

// yamlMessage is a yaml.v3 error without its "yaml: " prefix. Such errors
// come from parsing, before ${env:…} resolution, so they cannot hold a
// resolved secret.
// yamlMessage is the YAML parser's message, naming a tab on the line it
// points to: the parser only says a character "cannot start any token".
func yamlMessage(err error, data []byte) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var n int
	if _, serr := fmt.Sscanf(msg, "line %d:", &n); serr != nil || strings.Contains(msg, "tab") {
		return msg
	}
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		return msg
	}
	if col := strings.IndexByte(lines[n-1], '\t'); col >= 0 {
		msg += fmt.Sprintf(" (a tab at line %d, column %d: YAML indents with spaces only; replace the tab with spaces)", n, col+1)
	}
	return msg
}

type mergeVisit struct {
	node *yaml.Node
	path string
}

// walker checks a YAML node tree against the Config type and decodes what
// it can. Its messages name the field path and the expected kind, never the
// value.
type walker struct {
	errs      *Errors
	positions map[string]Position // field path -> its key in the document
	steps     int
	halted    bool
	merged    map[mergeVisit]bool
	// sourceType is the document's source.type, which routes the keys
	// of the source mapping that are a kind's settings; settings holds
	// their values while that mapping is read (settings.go).
	sourceType string
	settings   *settingsTarget
}

func (w *walker) step() bool {
	w.steps++
	if w.steps > maxWalkSteps && !w.halted {
		w.halted = true
		w.errs.add("config", "document is too complex (too many aliases or merge keys)")
	}
	return !w.halted
}

// deref follows aliases; the parser guarantees they point backwards, so
// the chain ends, but the step budget bounds it anyway.
func (w *walker) deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && w.step() {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Tag == "tag:yaml.org,2002:null")
}

func isMergeKey(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" &&
		(n.Tag == "" || n.Tag == "!" || n.Tag == "!!merge" || n.Tag == "tag:yaml.org,2002:merge")
}

func (w *walker) walk(n *yaml.Node, out reflect.Value, path string) {
	n = w.deref(n)
	if n == nil || !w.step() || isNull(n) {
		return
	}
	switch out.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.errs.add(fieldOrRoot(path), "must be a mapping of keys to values")
			return
		}
		if out.Type() == sourceType {
			w.settings = newSettingsTarget(w.sourceType)
			defer func() {
				w.settings.store(out.Addr().Interface().(*Source))
				w.settings = nil
			}()
		}
		w.mapping(n, out, path, map[string]bool{})
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.errs.add(path, "must be a list")
			return
		}
		s := reflect.MakeSlice(out.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			field := fmt.Sprintf("%s[%d]", path, i)
			w.positions[field] = Position{item.Line, item.Column}
			w.walk(item, s.Index(i), field)
		}
		out.Set(s)
	case reflect.Map:
		w.tableMap(n, out, path)
	case reflect.Pointer:
		v := reflect.New(out.Type().Elem())
		w.walk(n, v.Elem(), path)
		out.Set(v)
	case reflect.Interface:
		// Recognised only to be rejected (destination.ssh_tunnel, …): any
		// shape will do, Validate says why it is refused.
		var v any
		if err := n.Decode(&v); err != nil {
			w.errs.add(path, "cannot be decoded")
			return
		}
		if v != nil {
			out.Set(reflect.ValueOf(v))
		}
	default:
		if n.Kind != yaml.ScalarNode {
			w.errs.add(path, "must be "+kindName(out.Type())+hintFor(out.Type()))
			return
		}
		v := reflect.New(out.Type())
		if err := n.Decode(v.Interface()); err != nil {
			w.errs.add(path, "must be "+kindName(out.Type()))
			return
		}
		out.Set(v.Elem())
	}
}

// mapping walks the keys of one mapping into a struct. seen holds the keys
// already set explicitly, to report duplicates; keys brought in by a merge
// key (<<) yield to explicit ones, as in yaml.v3.
func (w *walker) mapping(n *yaml.Node, out reflect.Value, path string, seen map[string]bool) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := w.deref(n.Content[i]), n.Content[i+1]
		if k == nil || !w.step() {
			return
		}
		if isMergeKey(k) {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.errs.add(fieldOrRoot(path), "keys must be plain names")
			continue
		}
		field := join(path, k.Value)
		if _, dup := w.positions[field]; !dup {
			w.positions[field] = Position{k.Line, k.Column}
		}
		f, ok := w.field(out, k.Value)
		if !ok {
			w.errs.add(field, "unknown key"+didYouMean(out.Type(), k.Value))
			continue
		}
		if seen[k.Value] {
			w.errs.add(field, "is set more than once")
			continue
		}
		seen[k.Value] = true
		w.walk(v, f, field)
	}
	for _, m := range merges {
		w.merge(m, out, path, seen)
	}
}

func (w *walker) merge(m *yaml.Node, out reflect.Value, path string, seen map[string]bool) {
	m = w.deref(m)
	if m == nil || !w.step() {
		return
	}
	visit := mergeVisit{m, path}
	if w.merged[visit] {
		return
	}
	w.merged[visit] = true
	switch m.Kind {
	case yaml.MappingNode:
		// Copy seen: keys merged from one source do not clash with another.
		inner := make(map[string]bool, len(seen))
		for k := range seen {
			inner[k] = true
		}
		w.mappingMerged(m, out, path, inner)
	case yaml.SequenceNode:
		for _, item := range m.Content {
			if item = w.deref(item); item == nil || item.Kind != yaml.MappingNode {
				w.errs.add(fieldOrRoot(path), "merge key (<<) needs a mapping or a list of mappings")
				continue
			}
			w.merge(item, out, path, seen)
		}
	default:
		w.errs.add(fieldOrRoot(path), "merge key (<<) needs a mapping or a list of mappings")
	}
}

// mappingMerged walks a merged mapping: keys already set are skipped, not
// reported, since an explicit key overrides a merged one.
func (w *walker) mappingMerged(n *yaml.Node, out reflect.Value, path string, seen map[string]bool) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := w.deref(n.Content[i]), n.Content[i+1]
		if k == nil || !w.step() {
			return
		}
		if isMergeKey(k) {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.errs.add(fieldOrRoot(path), "keys must be plain names")
			continue
		}
		if seen[k.Value] {
			continue
		}
		field := join(path, k.Value)
		if _, dup := w.positions[field]; !dup {
			w.positions[field] = Position{k.Line, k.Column}
		}
		f, ok := w.field(out, k.Value)
		if !ok {
			w.errs.add(field, "unknown key"+didYouMean(out.Type(), k.Value))
			continue
		}
		seen[k.Value] = true
		w.walk(v, f, field)
	}
	for _, m := range merges {
		w.merge(m, out, path, seen)
	}
}

// fieldByKey finds the struct field whose yaml tag names key.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if keyed(f) && yamlName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

var plainKey = boundedPattern(`^[A-Za-z0-9_-]+$`, 1, 64, nil)

// join appends a key to a field path. Only a plain key is shown whole: of
// an odd one (a pasted URL, "password hunter2"), only its leading name
// part, quoted, since the rest may be a secret typed in the wrong place.
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		key = strconv.Quote(keyName(key) + "…")
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func fieldOrRoot(path string) string {
	if path == "" {
		return "config"
	}
	return path
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Uint32:
		return "a whole number from 0 to 4294967295"
	default:
		return "a " + t.Kind().String()
	}
}

func hintFor(t reflect.Type) string {
	if t.Kind() == reflect.String {
		return " (quote it if it starts with '[', '{' or holds ': ')"
	}
	return ""
}

// jsonAsYAML lets yaml.v3 read any valid JSON document. JSON is almost
// YAML, but two string escapes are not: "\/" and UTF-16 surrogate pairs
// ("\ud83d\ude00"). They are rewritten in place, keeping every line where
// it was; anything else passes through untouched.
func jsonAsYAML(data []byte) []byte {
	if !bytes.Contains(data, []byte(`\`)) || !json.Valid(data) {
		return data
	}
	out := make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case !inString:
			inString = c == '"'
			out = append(out, c)
		case c == '"':
			inString = false
			out = append(out, c)
		case c != '\\':
			out = append(out, c)
		case data[i+1] == '/': // valid JSON: an escape always follows '\'
			out = append(out, '/')
			i++
		case data[i+1] == 'u':
			r := hex4(data[i+2 : i+6])
			if !utf16.IsSurrogate(r) {
				out = append(out, data[i:i+6]...)
				i += 5
				break
			}
			if i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(data[i+8:i+12])); pair != '\uFFFD' {
					out = fmt.Appendf(out, `\U%08X`, pair)
					i += 11
					break
				}
			}
			out = append(out, `\uFFFD`...) // what encoding/json makes of a lone surrogate
			i += 5
		default:
			out = append(out, c, data[i+1])
			i++
		}
	}
	return out
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 16)
	return rune(n)
}

// tableMap walks a mapping of table name to value (destination.key_columns,
// destination.partition_column); each entry's field is path[table].
func (w *walker) tableMap(n *yaml.Node, out reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		w.errs.add(path, "must be a mapping of schema.table to a value")
		return
	}
	m := reflect.MakeMapWithSize(out.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := w.deref(n.Content[i])
		if k == nil || !w.step() {
			return
		}
		if k.Kind != yaml.ScalarNode {
			w.errs.add(path, "keys must be plain table names (schema.table)")
			continue
		}
		field := path + "[" + k.Value + "]"
		w.positions[field] = Position{k.Line, k.Column}
		if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			w.errs.add(field, "is set more than once")
			continue
		}
		v := reflect.New(out.Type().Elem()).Elem()
		w.walk(n.Content[i+1], v, field)
		m.SetMapIndex(reflect.ValueOf(k.Value), v)
	}
	out.Set(m)
}
