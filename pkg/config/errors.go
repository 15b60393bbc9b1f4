package config

import (
	"strings"
)

// Problem is one thing wrong with a configuration: the field path, with
// dots ("destination.topic_prefix"), and the rule it breaks. Messages never
// carry a configured value, so a Problem is safe to log.
type Problem struct {
	Field   string
	Message string
}

// String returns "field: message".
func (p Problem) String() string { return p.Field + ": " + p.Message }

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
