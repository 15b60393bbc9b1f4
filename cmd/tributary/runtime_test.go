package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneRuntime: a pipeline's collector runs at gcPercent within the
// soft memory limit unless GOGC and GOMEMLIMIT say otherwise, as docs
// and the CDK's task definition (GOMEMLIMIT) count on.
func TestTuneRuntime(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 40)
	tuneRuntime()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GC percent %d, want it left at 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("GOMEMLIMIT set: memory limit %d, want it left", got)
	}

	unset(t, "GOGC")
	unset(t, "GOMEMLIMIT")
	tuneRuntime()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != softMemoryLimit {
		t.Errorf("memory limit %d, want %d", got, softMemoryLimit)
	}
}

// unset removes key from the environment for the rest of the test
// (t.Setenv first, so that it is restored).
func unset(t *testing.T, key string) {
	t.Setenv(key, "")
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
