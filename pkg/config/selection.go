package config

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Table and column selection (docs/configuration.md, "Choosing tables and
// columns"): source.tables and source.exclude_tables hold plain names or
// Debezium-style regular expressions (table.include.list /
// table.exclude.list), source.exclude_columns and source.mask_columns
// regular expressions over fully qualified column names
// (column.exclude.list, column.mask.hash.<alg>.with.salt.<salt>,
// column.mask.with.<n>.chars).

// MaskColumns is one entry of source.mask_columns: the columns it masks
// and how, either a salted hash (Hash, Salt, HashVersion) or a fixed
// replacement (Replacement, or Chars asterisks).
type MaskColumns struct {
	// Columns are regular expressions matched against schema.table.column
	// (MySQL: database.table.column), anchored and case-insensitive.
	Columns []string `yaml:"columns" json:"columns"`
	// Hash is a digest algorithm by its Java name, as Debezium's
	// column.mask.hash.<alg>: MD5, SHA-1, SHA-224, SHA-256, SHA-384,
	// SHA-512, SHA3-256, SHA3-512.
	Hash string `yaml:"hash" json:"hash"`
	// Salt is prepended to each value before hashing. A secret.
	Salt string `yaml:"salt" json:"salt"`
	// HashVersion is v1 (default: Debezium's column.mask.hash.<alg>, which
	// hashes the Java serialization of the string) or v2
	// (column.mask.hash.v2.<alg>: the UTF-8 bytes).
	HashVersion string `yaml:"hash_version" json:"hash_version"`
	// Replacement replaces every value, null included.
	Replacement string `yaml:"replacement" json:"replacement"`
	// Chars replaces every value with that many '*' (Debezium's
	// column.mask.with.<n>.chars).
	Chars int `yaml:"chars" json:"chars"`
}

// Selection is the compiled table and column selection of a source. A nil
// *Selection is the default: every table by the source's default rule,
// every column kept.
type Selection struct {
	plain   []string // source.tables entries that are plain names
	include []pattern
	exclude []pattern
	columns []columnRule
}

type pattern struct {
	text string
	re   *regexp.Regexp
}

type columnRule struct {
	pattern
	mask *Mask // nil: excluded
}

// Mask turns a column's text into its masked text.
type Mask struct {
	algorithm   string
	newHash     func() hash.Hash
	salt        []byte
	v1          bool
	replacement string
	fixed       bool
}

// hashes are the digests source.mask_columns offers, by their Java names.
var hashes = map[string]func() hash.Hash{
	"MD5": md5.New, "SHA-1": sha1.New, "SHA-224": sha256.New224, "SHA-256": sha256.New,
	"SHA-384": sha512.New384, "SHA-512": sha512.New,
	"SHA3-256": func() hash.Hash { return sha3.New256() }, "SHA3-512": func() hash.Hash { return sha3.New512() },
}

// IsPlainTable reports whether a source.tables entry names one table
// rather than being a regular expression: two names of letters, digits,
// '_' and '-' joined by one dot. Such an entry matches that table exactly,
// as before regular expressions were accepted. (A loop, not a regular
// expression: the Unicode classes of one cost every process about 1.5 MB
// of heap for good.)
func IsPlainTable(entry string) bool {
	schema, table, ok := strings.Cut(entry, ".")
	return ok && plainPart(schema) && plainPart(table)
}

func plainPart(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '_' && r != '-' {
			return false
		}
	}
	return s != ""
}

// compilePattern anchors a Debezium regular expression as Debezium does:
// it must match the whole name, in any case.
func compilePattern(p string) (pattern, error) {
	re, err := regexp.Compile(`(?i)^(?:` + p + `)$`)
	if err != nil {
		return pattern{}, err
	}
	return pattern{text: p, re: re}, nil
}

// Selection compiles the source's selection; Validate reports the same
// problems with their fields.
func (s Source) Selection() (*Selection, error) {
	var errs Errors
	sel := s.selection(validator{errs: &errs})
	if err := errs.errOrNil(); err != nil {
		return nil, err
	}
	return sel, nil
}

func (s Source) selection(v validator) *Selection {
	sel := &Selection{}
	for i, t := range s.Tables {
		field := fmt.Sprintf("source.tables[%d]", i)
		if j := slices.Index(s.Tables, t); j < i {
			v.add(field, "repeats source.tables[%d]", j)
			continue
		}
		if IsPlainTable(t) {
			sel.plain = append(sel.plain, t)
			continue
		}
		if p, ok := tablePattern(v, field, t); ok {
			sel.include = append(sel.include, p)
		}
	}
	for i, t := range s.ExcludeTables {
		if p, ok := tablePattern(v, fmt.Sprintf("source.exclude_tables[%d]", i), t); ok {
			sel.exclude = append(sel.exclude, p)
		}
	}
	for i, c := range s.ExcludeColumns {
		if s.Type == SourceMongoDB {
			// Debezium's field.exclude.list paths, which the mongodb
			// driver checks and applies itself.
			break
		}
		if p, ok := columnPattern(v, fmt.Sprintf("source.exclude_columns[%d]", i), c); ok {
			sel.columns = append(sel.columns, columnRule{pattern: p})
		}
	}
	for i, m := range s.MaskColumns {
		field := fmt.Sprintf("source.mask_columns[%d]", i)
		mask := m.compile(v, field)
		if len(m.Columns) == 0 {
			v.add(field+".columns", "must list at least one column (schema.table.column, a regular expression)")
		}
		for j, c := range m.Columns {
			if p, ok := columnPattern(v, fmt.Sprintf("%s.columns[%d]", field, j), c); ok && mask != nil {
				sel.columns = append(sel.columns, columnRule{pattern: p, mask: mask})
			}
		}
	}
	return sel
}

func tablePattern(v validator, field, t string) (pattern, bool) {
	if strings.TrimSpace(t) == "" {
		v.add(field, "is empty; name a table (schema.table) or give a regular expression matching schema.table")
		return pattern{}, false
	}
	if !strings.Contains(t, ".") {
		v.add(field, "must be schema.table (MySQL: database.table), or a regular expression matching the whole schema.table name, such as public\\.order_.*")
		return pattern{}, false
	}
	p, err := compilePattern(t)
	if err != nil {
		v.add(field, "is neither schema.table nor a valid regular expression (%s); escape a literal dot as \\.", reError(err))
		return pattern{}, false
	}
	return p, true
}

func columnPattern(v validator, field, c string) (pattern, bool) {
	if strings.Count(c, ".") < 2 {
		v.add(field, "must match fully qualified column names, schema.table.column (MySQL: database.table.column), such as public.customers.email")
		return pattern{}, false
	}
	p, err := compilePattern(c)
	if err != nil {
		v.add(field, "is not a valid regular expression (%s)", reError(err))
		return pattern{}, false
	}
	return p, true
}

// reError is a regexp error without the pattern, which it quotes after
// the anchors compilePattern added.
func reError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": `"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimPrefix(msg, "error parsing regexp: ")
}

func (m MaskColumns) compile(v validator, field string) *Mask {
	hashing := m.Hash != "" || m.Salt != "" || m.HashVersion != ""
	fixed := m.Replacement != "" || m.Chars != 0
	switch {
	case hashing && fixed:
		v.add(field, "sets both a hash (hash, salt, hash_version) and a replacement (replacement, chars); choose one")
		return nil
	case !hashing && !fixed:
		v.add(field, "says neither how to mask: set hash (with salt), replacement, or chars")
		return nil
	case fixed:
		switch {
		case m.Replacement != "" && m.Chars != 0:
			v.add(field+".chars", "is set with replacement; choose one")
			return nil
		case m.Chars < 0 || m.Chars > 1024:
			v.add(field+".chars", "must be from 1 to 1024 (the number of '*' that replace each value)")
			return nil
		case m.Chars > 0:
			return &Mask{fixed: true, replacement: strings.Repeat("*", m.Chars)}
		}
		return &Mask{fixed: true, replacement: m.Replacement}
	}
	newHash, ok := hashes[m.Hash]
	if !ok {
		v.add(field+".hash", "must be one of %s (Java's names, as in Debezium's column.mask.hash.<algorithm>)", strings.Join(sortedKeys(hashes), ", "))
		return nil
	}
	if m.Salt == "" {
		v.add(field+".salt", "required with hash: without a salt, a hashed value is looked up in a table of hashes of likely values")
		return nil
	}
	switch m.HashVersion {
	case "", "v1", "v2":
	default:
		v.add(field+".hash_version", "must be v1 (Debezium's default) or v2 (Debezium's column.mask.hash.v2)")
		return nil
	}
	return &Mask{algorithm: m.Hash, newHash: newHash, salt: []byte(m.Salt), v1: m.HashVersion != "v2"}
}

// Listed reports whether source.tables is set: the tables it selects are
// captured whether or not they have a primary key.
func (s *Selection) Listed() bool { return s != nil && (len(s.plain) > 0 || len(s.include) > 0) }

// Named reports whether source.tables names table as a plain name.
func (s *Selection) Named(table string) bool { return s != nil && slices.Contains(s.plain, table) }

// PlainNames are the source.tables entries that name one table each.
func (s *Selection) PlainNames() []string {
	if s == nil {
		return nil
	}
	return s.plain
}

// Excluded reports whether source.exclude_tables matches table.
func (s *Selection) Excluded(table string) bool {
	return s != nil && slices.ContainsFunc(s.exclude, func(p pattern) bool { return p.re.MatchString(table) })
}

// Wants reports whether table (schema.table, MySQL database.table) is
// captured: named or matched by source.tables, or, without a list, when
// byDefault (the source's default selection: a table with a primary
// key); never when source.exclude_tables matches it.
func (s *Selection) Wants(table string, byDefault bool) bool {
	if s.Excluded(table) {
		return false
	}
	if !s.Listed() {
		return byDefault
	}
	return s.Named(table) || slices.ContainsFunc(s.include, func(p pattern) bool { return p.re.MatchString(table) })
}

// Patterns are the source.tables entries that are regular expressions.
func (s *Selection) Patterns() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.include))
	for i, p := range s.include {
		out[i] = p.text
	}
	return out
}

// Unmatched returns the regular expressions of source.tables that match
// none of tables: a warning, as Debezium gives none.
func (s *Selection) Unmatched(tables []string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, p := range s.include {
		if !slices.ContainsFunc(tables, p.re.MatchString) {
			out = append(out, p.text)
		}
	}
	return out
}

// Column says what becomes of column of table: excluded (left out of
// every message), masked (mask non-nil), or kept. The first rule that
// matches wins; exclusions come first.
func (s *Selection) Column(table, column string) (excluded bool, mask *Mask) {
	if s == nil {
		return false, nil
	}
	name := table + "." + column
	for _, r := range s.columns {
		if r.re.MatchString(name) {
			return r.mask == nil, r.mask
		}
	}
	return false, nil
}

// HasColumnRules reports whether any column is excluded or masked.
func (s *Selection) HasColumnRules() bool { return s != nil && len(s.columns) > 0 }

// Null is what a masked null becomes: a fixed replacement replaces it
// too (Debezium's mask converter runs on nulls), a hash keeps it null.
func (m *Mask) Null() (string, bool) { return m.replacement, m.fixed }

// Apply masks the text of a value. A hash is hex, cut to maxLen
// characters when maxLen > 0 (Debezium truncates it to the column's
// length).
func (m *Mask) Apply(text []byte, maxLen int) string {
	if m.fixed {
		return m.replacement
	}
	h := m.newHash()
	h.Write(m.salt)
	if m.v1 {
		h.Write(javaSerializedString(text))
	} else {
		h.Write(text)
	}
	out := hex.EncodeToString(h.Sum(nil))
	if maxLen > 0 && len(out) > maxLen {
		out = out[:maxLen]
	}
	return out
}

// Describe words the mask for `tributary tables`, never showing the salt.
func (m *Mask) Describe() string {
	if m.fixed {
		return "replaced"
	}
	return "hashed " + m.algorithm
}

// javaSerializedString is what Java's ObjectOutputStream writes for one
// String (the stream header, TC_STRING or TC_LONGSTRING, the length and
// the modified UTF-8 bytes), which Debezium's default hash
// (MaskStrings.HashingByteArrayStrategy.V1) digests.
func javaSerializedString(text []byte) []byte {
	var mod []byte
	for len(text) > 0 {
		r, n := utf8.DecodeRune(text)
		text = text[n:]
		switch {
		case r == 0:
			mod = append(mod, 0xC0, 0x80)
		case r < 0x80:
			mod = append(mod, byte(r))
		case r < 0x800:
			mod = append(mod, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		case r < 0x10000:
			mod = append(mod, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
		default: // a surrogate pair, each half as three bytes
			r -= 0x10000
			for _, s := range []rune{0xD800 + r>>10, 0xDC00 + r&0x3FF} {
				mod = append(mod, 0xE0|byte(s>>12), 0x80|byte(s>>6&0x3F), 0x80|byte(s&0x3F))
			}
		}
	}
	out := []byte{0xAC, 0xED, 0x00, 0x05}
	if len(mod) <= 0xFFFF {
		out = append(out, 0x74)
		out = binary.BigEndian.AppendUint16(out, uint16(len(mod)))
	} else {
		out = append(out, 0x7C)
		out = binary.BigEndian.AppendUint64(out, uint64(len(mod)))
	}
	return append(out, mod...)
}

// Closest returns the candidate nearest to name, for "did you mean": at
// most a third of name's length in edits (at least 1, at most 3), case
// forgiven; "" when none is that close.
func Closest(name string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	if best != "" && bestDist <= min(max(len(name)/3, 1), 3) {
		return best
	}
	return ""
}
