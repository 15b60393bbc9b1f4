package config

import "fmt"

// Warnings lists the settings of a valid configuration that have no effect
// (a password with authentication NONE, a slot on a mysql source, …): not
// errors, since the pipeline runs, but almost always a mistake. Like
// Problems they name the field and never hold a value; Line and Column are
// set when the Config came from a document.
func (c *Config) Warnings() []Problem {
	var out []Problem
	warn := func(field, format string, args ...any) {
		p := Problem{Field: field, Message: fmt.Sprintf(format, args...)}
		if pos, ok := c.positions[field]; ok {
			p.Line, p.Column = pos.Line, pos.Column
		}
		out = append(out, p)
	}
	inDocument := func(field string) bool { _, ok := c.positions[field]; return ok }

	d := c.Destination
	switch d.Authentication {
	case AuthNone, AuthAWSMSKIAM:
		if d.Username != "" {
			warn("destination.username", "has no effect with authentication %s (PLAIN and SCRAM use it)", d.Authentication)
		}
		if d.Password != "" {
			warn("destination.password", "has no effect with authentication %s (PLAIN and SCRAM use it)", d.Authentication)
		}
	}

	if k, ok := sourceKind(c.Source.Type); ok {
		c.Source.foreignSettings(func(key string, owner SourceKind, _ SourceSettings) {
			if _, refused := k.Refuses[key]; !refused {
				warn("source."+key, "has no effect on a %s source (%s only)", k.Type, owner.Database)
			}
		})
		if k.Warn != nil {
			s := c.Source
			k.Warn(&s, func(field, message string) { warn(field, "%s", message) })
		}
	}

	cp := c.Checkpoint
	if cp.Store == StoreFile {
		if inDocument("checkpoint.table") {
			warn("checkpoint.table", "has no effect with store file (DynamoDB only)")
		}
		if cp.CreateTable {
			warn("checkpoint.create_table", "has no effect with store file (DynamoDB only)")
		}
	}

	w := c.Webhooks
	if w.SigningSecret != "" && w.RowSkippedURL == "" {
		warn("webhooks.signing_secret", "has no effect without row_skipped_url")
	}
	return out
}
