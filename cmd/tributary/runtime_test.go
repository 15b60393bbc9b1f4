package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
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
			tuneRuntime(softMemoryLimit)
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

// A MongoDB pipeline's default soft limit is its source's (72 MiB, which
// holds its backfill's resident memory under 100 MB); the relational
// sources keep the product's; GOMEMLIMIT overrides either. The limit
// that follows the live heap keeps the source's while 1.5 times the live
// heap is under the product's, and follows it above.
func TestSourceMemoryFloor(t *testing.T) {
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(limit) })
	for typ, want := range map[string]int64{"mongodb": 72 << 20, "postgres": softMemoryLimit, "mysql": softMemoryLimit} {
		if got := memoryFloor(&config.Config{Source: config.Source{Type: typ}}); got != want {
			t.Errorf("%s: default soft limit %d MiB, want %d MiB", typ, got>>20, want>>20)
		}
	}
	setenv(t, "GOMEMLIMIT", nil)
	if tuneRuntime(72 << 20); debug.SetMemoryLimit(-1) != 72<<20 {
		t.Errorf("limit %d MiB, want the source's 72 MiB", debug.SetMemoryLimit(-1)>>20)
	}
	runtime.GC()
	if adjustMemoryLimit(0, 72<<20); debug.SetMemoryLimit(-1) != 72<<20 {
		t.Errorf("limit %d MiB with a small live heap, want the source's 72 MiB", debug.SetMemoryLimit(-1)>>20)
	}
	for _, c := range []struct{ live, want int64 }{{40 << 20, 72 << 20}, {64 << 20, 72 << 20}, {65 << 20, 104 << 20}, {80 << 20, 120 << 20}} {
		if got := memoryLimitFor(uint64(c.live), 72<<20); got != c.want {
			t.Errorf("live heap %d MiB under a floor of 72 MiB: limit %d MiB, want %d", c.live>>20, got>>20, c.want>>20)
		}
	}
	setenv(t, "GOMEMLIMIT", ptr("768MiB"))
	debug.SetMemoryLimit(768 << 20)
	if tuneRuntime(72 << 20); debug.SetMemoryLimit(-1) != 768<<20 {
		t.Errorf("GOMEMLIMIT=768MiB: limit %d MiB", debug.SetMemoryLimit(-1)>>20)
	}
}

// setenv sets key to *v for the rest of the test, or unsets it (nil).
func setenv(t *testing.T, key string, v *string) {
	t.Setenv(key, "")
	if v != nil {
		os.Setenv(key, *v)
	} else if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryLimitFollowsLiveHeap: the default soft limit stays at least
// 1.5 times what the program keeps live, so that a pipeline of many tables'
// shapes is not collected all the time, and comes back to the default
// when the live heap shrinks.
func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	limit := debug.SetMemoryLimit(softMemoryLimit)
	t.Cleanup(func() { debug.SetMemoryLimit(limit) })
	runtime.GC()
	adjustMemoryLimit(0, softMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got != softMemoryLimit {
		t.Fatalf("limit %d MiB with a small live heap, want the default %d MiB", got>>20, softMemoryLimit>>20)
	}
	kept := make([][]byte, 150)
	for i := range kept {
		kept[i] = bytes.Repeat([]byte{byte(i)}, 1<<20)
	}
	runtime.GC()
	adjustMemoryLimit(0, softMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got < 225<<20 || got > 260<<20 {
		t.Errorf("limit %d MiB with 150 MiB live, want about 1.5 times that", got>>20)
	}
	// In a container of 256 MiB the limit stays under three quarters of it,
	// and never below the default.
	adjustMemoryLimit(192<<20, softMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got != 192<<20 {
		t.Errorf("limit %d MiB with 150 MiB live in a container of 256 MiB, want 192", got>>20)
	}
	adjustMemoryLimit(64<<20, softMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got != softMemoryLimit {
		t.Errorf("limit %d MiB under a ceiling below the default, want the default %d MiB", got>>20, softMemoryLimit>>20)
	}
	runtime.KeepAlive(kept)
	runtime.GC()
	adjustMemoryLimit(0, softMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got != softMemoryLimit {
		t.Errorf("limit %d MiB once the live heap shrank, want the default %d MiB", got>>20, softMemoryLimit>>20)
	}
	if memoryLimitFor(80<<20, softMemoryLimit) != 120<<20 || memoryLimitFor(80<<20+1, softMemoryLimit) != 128<<20 {
		t.Errorf("limits for 80 MiB and a byte more: %d, %d", memoryLimitFor(80<<20, softMemoryLimit), memoryLimitFor(80<<20+1, softMemoryLimit))
	}
}

// containerMemory reads cgroup v2's memory.max, or v1's limit, and says 0
// where the container has no limit.
func TestContainerMemory(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		name  string
		files []string
		want  int64
	}{
		{"v2 limit", []string{file("v2", "268435456\n"), missing}, 256 << 20},
		{"v2 none", []string{file("v2max", "max\n")}, 0},
		{"v1 limit", []string{missing, file("v1", "536870912\n")}, 512 << 20},
		{"v1 none", []string{missing, file("v1max", "9223372036854771712\n")}, 0},
		{"neither", []string{missing}, 0},
	} {
		if got := containerMemory(c.files...); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
