// Package route renames a table's topic as Kafka Connect's RegexRouter
// (org.apache.kafka.connect.transforms.RegexRouter) and Debezium's
// ByLogicalTableRouter (io.debezium.transforms.ByLogicalTableRouter) do:
// a regular expression matched against the whole topic and a
// replacement in java.util.regex.Matcher's syntax. Everything here runs
// once per table version, when the encoder builds its plan, never per
// event.
package route

import (
	"fmt"
	"regexp"
)

// DefaultKeyFieldName is ByLogicalTableRouter's key.field.name: the key
// field that tells the physical tables of one logical topic apart.
const DefaultKeyFieldName = "__dbz__physicalTableIdentifier"

// Rename is a regex and its replacement. A topic the regex matches as a
// whole (Java's Matcher.matches) becomes the replacement, with $n and
// ${name} the regex's groups; any other topic is left alone.
type Rename struct {
	re   *regexp.Regexp
	repl replacement
}

// NewRename compiles regex (Go's RE2 syntax, which Java's shares except
// for look-around and back references) and replacement. The error says
// which of the two is wrong and why, without naming a field: the caller
// knows which setting it came from.
func NewRename(regex, replacement string) (*Rename, error) {
	re, err := regexp.Compile(`^(?:` + regex + `)$`)
	if err != nil {
		return nil, &Error{Part: PartRegex, Err: err}
	}
	repl, err := parseReplacement(re, replacement)
	if err != nil {
		return nil, &Error{Part: PartReplacement, Err: err}
	}
	return &Rename{re: re, repl: repl}, nil
}

// Apply returns topic renamed, and whether the regex matched it.
func (r *Rename) Apply(topic string) (string, bool) {
	m := r.re.FindStringSubmatchIndex(topic)
	if m == nil {
		return topic, false
	}
	return string(r.repl.expand(nil, topic, m)), true
}

// Part names the half of a Rename an Error is about.
type Part int

const (
	PartRegex Part = iota
	PartReplacement
)

// Error is a regex or a replacement that does not compile.
type Error struct {
	Part Part
	Err  error
}

func (e *Error) Error() string {
	if e.Part == PartRegex {
		return "not a valid regular expression: " + e.Err.Error()
	}
	return "not a valid replacement: " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Logical is ByLogicalTableRouter: topics that topic.regex matches go to
// topic.replacement, and, with EnforceUniqueness, their key gains a
// string field KeyFieldName holding the original topic (or KeyField's
// rename of it) so that rows of two physical tables with the same primary
// key keep two keys. The key, value and envelope schemas are renamed
// after the new topic (<topic>.Key, <topic>.Value, <topic>.Envelope).
type Logical struct {
	Topic             *Rename
	EnforceUniqueness bool
	KeyFieldName      string
	// KeyField renames the original topic into the key field's value
	// (key.field.regex / key.field.replacement); nil: the original topic.
	// A topic it does not match is the value as it is.
	KeyField *Rename
}

// Routes are the routing transforms of a pipeline, applied in the order
// transforms=reroute,route: Logical first, then Regex on its result.
type Routes struct {
	Logical *Logical // nil: none
	Regex   *Rename  // nil: none
}

// Routed is where a table's records go.
type Routed struct {
	// Topic is the record's topic.
	Topic string
	// SchemaBase is the base of the key, value and envelope schema names:
	// the logical router's topic, or the original one.
	SchemaBase string
	// KeyField and KeyValue are the field the logical router adds to the
	// key, and its value; KeyField "": none.
	KeyField, KeyValue string
	// Changed tells whether a transform renamed the topic.
	Changed bool
}

// Route returns where the records of the table whose topic (and schema
// names' base) would be topic go. A nil *Routes leaves it alone.
func (r *Routes) Route(topic string) Routed {
	out := Routed{Topic: topic, SchemaBase: topic}
	if r == nil {
		return out
	}
	if l := r.Logical; l != nil {
		// An empty result leaves the record alone, as the Debezium
		// transform does (it logs a warning).
		if to, ok := l.Topic.Apply(topic); ok && to != "" {
			out.Topic, out.SchemaBase, out.Changed = to, to, true
			if l.EnforceUniqueness {
				out.KeyField, out.KeyValue = l.KeyFieldName, topic
				if l.KeyField != nil {
					out.KeyValue, _ = l.KeyField.Apply(topic)
				}
			}
		}
	}
	if r.Regex != nil {
		if to, ok := r.Regex.Apply(out.Topic); ok {
			out.Topic, out.Changed = to, true
		}
	}
	return out
}

// replacement is a parsed java.util.regex.Matcher replacement: literal
// runs and group references.
type replacement []replacementPart

type replacementPart struct {
	lit   string
	group int // -1: lit
}

// parseReplacement reads s as Matcher.appendReplacement does: '\' takes
// the next character literally, "$n" is group n (further digits join
// while the number stays a group of re), "${name}" a named group;
// anything else is literal.
func parseReplacement(re *regexp.Regexp, s string) (replacement, error) {
	var out replacement
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			out = append(out, replacementPart{lit: string(lit), group: -1})
			lit = nil
		}
	}
	groups := re.NumSubexp()
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '\\':
			i++
			if i == len(s) {
				return nil, fmt.Errorf("a '\\' at the end escapes nothing (write \\\\ for a backslash)")
			}
			lit = append(lit, s[i])
			i++
		case '$':
			i++
			if i == len(s) {
				return nil, fmt.Errorf("a '$' at the end names no group (write \\$ for a dollar sign)")
			}
			var g int
			if s[i] == '{' {
				end := i + 1
				for end < len(s) && isNameByte(s[end], end == i+1) {
					end++
				}
				if end == i+1 || end == len(s) || s[end] != '}' {
					return nil, fmt.Errorf("${ at offset %d is not a group name in braces (letters and digits, starting with a letter)", i-1)
				}
				name := s[i+1 : end]
				if g = re.SubexpIndex(name); g < 0 {
					return nil, fmt.Errorf("${%s}: the regex has no group named %s", name, name)
				}
				i = end + 1
			} else {
				if s[i] < '0' || s[i] > '9' {
					return nil, fmt.Errorf("'$' at offset %d is followed by %q, not a group number or {name} (write \\$ for a dollar sign)", i-1, s[i])
				}
				g = int(s[i] - '0')
				i++
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					next := g*10 + int(s[i]-'0')
					if next > groups {
						break
					}
					g = next
					i++
				}
				if g > groups {
					return nil, fmt.Errorf("$%d: the regex has %d group(s)", g, groups)
				}
			}
			flush()
			out = append(out, replacementPart{group: g})
		default:
			lit = append(lit, c)
			i++
		}
	}
	flush()
	return out, nil
}

func isNameByte(c byte, first bool) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

// expand appends the replacement for the match m of s (a group that took
// no part in the match adds nothing, as in Java).
func (r replacement) expand(dst []byte, s string, m []int) []byte {
	for _, p := range r {
		if p.group < 0 {
			dst = append(dst, p.lit...)
			continue
		}
		if a, b := m[2*p.group], m[2*p.group+1]; a >= 0 {
			dst = append(dst, s[a:b]...)
		}
	}
	return dst
}
