package change

import (
	"strings"
	"unicode/utf8"
)

// maxTopicLen is Kafka's limit on topic name length.
const maxTopicLen = 249

// Topic is the table's topic under prefix as Debezium's default topic naming
// strategy does: <prefix>.<schema>.<table> (PostgreSQL; a table unified
// across schemas has schema "_"), <prefix>.<db>.<table> for a table without
// a schema (MySQL, MongoDB collections), <prefix>.<db>.<schema>.<table>
// when the database is part of the name (SQL Server; unified across
// databases, the db is blank). Blank parts are skipped, then every
// character outside [A-Za-z0-9._-] becomes '_' (one per UTF-16 unit, as
// Java iterates a String's chars), the name is cut to 249 characters, and
// "." / ".." become "_" / "__". Debezium logs a warning when it changes a
// name; callers that care can compare Topic with the raw name.
func (id TableID) Topic(prefix string) string {
	if prefix != "" && id.DB != "" && id.Name != "" && id.Schema == "" && !id.DBInTopic {
		// <prefix>.<db>.<table> that Kafka accepts as it is: one
		// concatenation (the MongoDB driver names each message's
		// schemas after its topic).
		if s := prefix + "." + id.DB + "." + id.Name; ValidTopic(s) {
			return s
		}
	}
	parts := [...]string{prefix, "", id.Schema, id.Name}
	switch {
	case id.DBInTopic:
		parts[1] = id.DB
	case id.Schema == "":
		parts[2] = id.DB
	}
	var b strings.Builder
	for _, part := range parts {
		if strings.TrimSpace(part) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return sanitizeTopic(b.String())
}

func sanitizeTopic(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if validTopicByte(c) {
				b = append(b, c)
			} else {
				b = append(b, '_')
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b = append(b, '_')
		if r > 0xFFFF { // a surrogate pair in Java: two chars
			b = append(b, '_')
		}
		i += size
	}
	if len(b) > maxTopicLen {
		b = b[:maxTopicLen]
	}
	switch string(b) {
	case ".":
		return "_"
	case "..":
		return "__"
	}
	return string(b)
}

// ValidTopic tells whether Kafka accepts s as a topic name.
func ValidTopic(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > maxTopicLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !validTopicByte(s[i]) {
			return false
		}
	}
	return true
}

func validTopicByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' ||
		'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}
