package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestCPUProfileWritten: with TRIBUTARY_CPUPROFILE set, startCPUProfile (what `run`
// calls) leaves a pprof profile (gzipped protobuf) named by its pid in that directory,
// and a directory it cannot write into is an error, not a run without its profile.
func TestCPUProfileWritten(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cpuProfileEnv, dir)
	stop, err := startCPUProfile()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for i := range 50_000_000 {
		sum += i % 7
	}
	stop()
	b, err := os.ReadFile(filepath.Join(dir, "cpu-"+strconv.Itoa(os.Getpid())+".pprof"))
	if err != nil {
		t.Fatalf("no profile (sum %d): %v", sum, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the profile is not gzipped protobuf: %v", err)
	}
	if raw, err := io.ReadAll(zr); err != nil || len(raw) == 0 {
		t.Fatalf("the profile is empty or cut short: %d bytes, %v", len(raw), err)
	}

	t.Setenv(cpuProfileEnv, filepath.Join(dir, "missing", "dir"))
	if _, err := startCPUProfile(); err == nil {
		t.Error("a directory that does not exist was accepted")
	}
}

// TestTraceWritten: the same for TRIBUTARY_TRACE's execution trace, which
// go tool trace reads (it starts "go 1.").
func TestTraceWritten(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(traceEnv, dir)
	stop, err := startTrace()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { time.Sleep(10 * time.Millisecond); close(done) }()
	<-done
	stop()
	b, err := os.ReadFile(filepath.Join(dir, "trace-"+strconv.Itoa(os.Getpid())+".out"))
	if err != nil {
		t.Fatalf("no trace: %v", err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) || len(b) < 100 {
		t.Fatalf("not an execution trace: %d bytes, starting %q", len(b), b[:min(len(b), 16)])
	}
	t.Setenv(traceEnv, filepath.Join(dir, "missing", "dir"))
	if _, err := startTrace(); err == nil {
		t.Error("a directory that does not exist was accepted")
	}
}

// TestHeapProfileKeepsPeak: with TRIBUTARY_HEAPPROFILE set, the profile left
// behind is the one taken while a large allocation was live, though it was
// freed before the profile stopped: the peak, not the end.
func TestHeapProfileKeepsPeak(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(heapProfileEnv, dir)
	stop, err := startHeapProfile()
	if err != nil {
		t.Fatal(err)
	}
	big := make([][]byte, 64)
	for i := range big {
		big[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	time.Sleep(3 * heapProfileEvery)
	runtime.KeepAlive(big)
	big = nil
	runtime.GC()
	time.Sleep(3 * heapProfileEvery)
	stop()
	b, err := os.ReadFile(filepath.Join(dir, "heap-"+strconv.Itoa(os.Getpid())+".pprof"))
	if err != nil {
		t.Fatalf("no profile: %v", err)
	}
	// The text form's first line: "heap profile: <objects>: <bytes> [...".
	var objects, total int64
	if _, err := fmt.Sscanf(string(b), "heap profile: %d: %d", &objects, &total); err != nil {
		t.Fatalf("the profile does not start as go tool pprof's text form: %v: %.60q", err, b)
	}
	if total < 32<<20 {
		t.Errorf("the profile holds %d bytes in use; the peak held 64 MiB", total)
	}

	t.Setenv(heapProfileEnv, filepath.Join(dir, "missing", "dir"))
	if _, err := startHeapProfile(); err == nil {
		t.Error("a directory that does not exist was accepted")
	}
}
