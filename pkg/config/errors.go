package config

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a configuration: the field path, with
// dots ("destination.topic_prefix"), and the rule it breaks. Messages never
// carry a secret or a value read through a reference (a typo typed in the
// document may be quoted back), so a Problem is safe to log.
type Problem struct {
	Field   string
	Message string
	// Line and Column (1-based) point at the key in the document that the
	// problem is about, or at the nearest enclosing key that is there (a
	// required key that is missing points at its section). 0 when unknown.
	Line, Column int
}

// String returns "field: message", with " (line L, column C)" when known.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s: %s (line %d, column %d)", p.Field, p.Message, p.Line, p.Column)
	}
	return p.Field + ": " + p.Message
}

// Position is where a key is in a document (1-based).
type Position struct{ Line, Column int }

// locate fills in the position of every problem that has none from the
// positions of the keys in the document, walking up to the enclosing key.
func locate(problems []Problem, positions map[string]Position) {
	for i := range problems {
		if problems[i].Line > 0 {
			continue
		}
		if p, ok := positionOf(problems[i].Field, positions); ok {
			problems[i].Line, problems[i].Column = p.Line, p.Column
		}
	}
}

func positionOf(field string, positions map[string]Position) (Position, bool) {
	for field != "" {
		if p, ok := positions[field]; ok {
			return p, true
		}
		cut := strings.LastIndexAny(field, ".[")
		if cut < 0 {
			break
		}
		field = field[:cut]
	}
	return Position{}, false
}

// Errors is every problem found in a configuration; Parse, Load and
// Validate report all of them at once rather than stopping at the first.
type Errors struct {
	Problems []Problem
}

// Error lists the problems one per line, as "field: rule".
func (e *Errors) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// ssmNeedsLoad is the rule broken by a ${ssm:…} reference given to Parse,
// which reads no AWS service.
const ssmNeedsLoad = "${ssm:…} references are read from SSM by Load (--config), not by Parse"

func (e *Errors) add(field, message string) {
	e.Problems = append(e.Problems, Problem{Field: field, Message: message})
}

// errOrNil returns e as an error, or nil (not a typed nil) when empty.
func (e *Errors) errOrNil() error {
	if e == nil || len(e.Problems) == 0 {
		return nil
	}
	return e
}

// covers reports whether a problem at field already explains field f: the
// same field or one inside it. Later checks skip such fields so one mistake
// is reported once.
func covers(field, f string) bool {
	if field == "config" || field == f {
		return true
	}
	return strings.HasPrefix(f, field) && (f[len(field)] == '.' || f[len(field)] == '[')
}
