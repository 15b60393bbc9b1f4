package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneRuntime: a pipeline's collector runs at gcPercent within the
// soft memory limit unless GOGC and GOMEMLIMIT say otherwise, as the docs
// and the CDK's task definition (GOMEMLIMIT) count on. An empty variable is
// not set, as the runtime reads it; with no memory limit Go's GOGC stays.
func TestTuneRuntime(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })
	for _, c := range []struct {
		name         string
		gogc, memlim *string // nil: unset
		runtimeGC    int     // what the runtime took from the environment
		runtimeLimit int64
		wantGC       int
		wantLimit    int64
	}{
		{"neither set", nil, nil, 100, math.MaxInt64, gcPercent, softMemoryLimit},
		{"both empty", ptr(""), ptr(""), 100, math.MaxInt64, gcPercent, softMemoryLimit},
		{"both set", ptr("150"), ptr("1GiB"), 150, 1 << 30, 150, 1 << 30},
		{"GOGC off", ptr("off"), nil, -1, math.MaxInt64, -1, softMemoryLimit},
		{"a task's limit", nil, ptr("768MiB"), 100, 768 << 20, gcPercent, 768 << 20},
		{"no limit", nil, ptr("off"), 100, math.MaxInt64, 100, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			setenv(t, "GOGC", c.gogc)
			setenv(t, "GOMEMLIMIT", c.memlim)
			debug.SetGCPercent(c.runtimeGC)
			debug.SetMemoryLimit(c.runtimeLimit)
			tuneRuntime()
			if got := debug.SetGCPercent(100); got != c.wantGC {
				t.Errorf("GC percent %d, want %d", got, c.wantGC)
			}
			if got := debug.SetMemoryLimit(-1); got != c.wantLimit {
				t.Errorf("memory limit %d, want %d", got, c.wantLimit)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// setenv sets key to *v for the rest of the test, or unsets it (nil).
func setenv(t *testing.T, key string, v *string) {
	t.Setenv(key, "")
	if v != nil {
		os.Setenv(key, *v)
	} else if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
