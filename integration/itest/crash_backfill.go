package itest

import (
	"testing"
)

// MustExecOn runs sql on b, or fails the test.
func MustExecOn(t *testing.T, b Backend, sql string) {
	t.Helper()
	if err := b.Exec(sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
