package capture

import "github.com/tributary-cdc/tributary/pkg/source"

// What the commands ask a driver without capturing (docs/operations.md):
// each capability is a small interface of pkg/source that a driver
// implements or not, asked for where a command uses it. A driver without
// it answers *source.UnsupportedError ("source type X does not support
// drop"). Each call of a capability connects, reads and disconnects.

// Checker is the driver's connection test (test-connection, validate).
func (c *Capture) Checker() (source.Checker, error) {
	return capability[source.Checker](c, "connection checks")
}

// Describer reads the shapes of the tables the driver would capture
// (test-connection's "column types" line).
func (c *Capture) Describer() (source.Describer, error) {
	return capability[source.Describer](c, "describing tables")
}

// Lister lists what the driver would capture (tables, test-connection).
func (c *Capture) Lister() (source.Lister, error) {
	return capability[source.Lister](c, "listing tables")
}

// Lagger measures the log after a checkpointed position (status).
func (c *Capture) Lagger() (source.Lagger, error) {
	return capability[source.Lagger](c, "measuring lag")
}

// Dropper lists and removes what the pipeline left on its database
// (drop).
func (c *Capture) Dropper() (source.Dropper, error) {
	return capability[source.Dropper](c, "drop")
}

func capability[T any](c *Capture, what string) (T, error) {
	if v, ok := c.db.(T); ok {
		return v, nil
	}
	var zero T
	return zero, &source.UnsupportedError{Type: c.opts.Config.Type, What: what}
}
