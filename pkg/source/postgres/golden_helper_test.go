package postgres

import "testing"

// cursorOf is the driver's part of a checkpoint's position.
func cursorOf(t *testing.T, doc string) string {
	t.Helper()
	return doc
}
