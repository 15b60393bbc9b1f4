package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// cpuProfileEnv names a directory into which `run` writes a CPU profile of
// itself, cpu-<pid>.pprof, from its start until the pipeline stops: `make
// profile` merges those of make bench's drains (docs/hot-path.md).
const cpuProfileEnv = "TRIBUTARY_CPUPROFILE"

// traceEnv names a directory into which `run` writes an execution trace of
// itself, trace-<pid>.out, from its start until the pipeline stops: where
// its goroutines wait, which a CPU profile does not show (`go tool trace
// -pprof=net`, docs/hot-path.md).
const traceEnv = "TRIBUTARY_TRACE"

// heapProfileEnv names a directory into which `run` writes the heap
// profile of itself, heap-<pid>.pprof, taken when its live heap was
// largest: what a peak of resident memory holds, which a profile at exit
// does not show (docs/hot-path.md, "The runtime's settings").
const heapProfileEnv = "TRIBUTARY_HEAPPROFILE"

// heapProfileEvery is how often the live heap is looked at; the profile
// is rewritten whenever it is larger than at every look before.
const heapProfileEvery = 250 * time.Millisecond

// startCPUProfile starts the profile cpuProfileEnv asks for; stop ends it
// and closes its file. Without the variable it does nothing.
func startCPUProfile() (stop func(), err error) {
	return startInDir(cpuProfileEnv, "cpu-%d.pprof", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace does the same for the trace traceEnv asks for.
func startTrace() (stop func(), err error) {
	return startInDir(traceEnv, "trace-%d.out", trace.Start, trace.Stop)
}

// startHeapProfile starts keeping the peak heap profile heapProfileEnv
// asks for; stop takes a last look, then closes its file. Without the
// variable it does nothing.
func startHeapProfile() (stop func(), err error) {
	done, finished := make(chan struct{}), make(chan struct{})
	start := func(w io.Writer) error {
		f := w.(*os.File)
		go func() {
			defer close(finished)
			tick := time.NewTicker(heapProfileEvery)
			defer tick.Stop()
			sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var peak uint64
			var buf bytes.Buffer
			look := func() {
				metrics.Read(sample)
				if live := sample[0].Value.Uint64(); live > peak {
					peak = live
					buf.Reset()
					// The heap profile's in-use figures are those of the
					// last collection, as the live heap read above is. The
					// text form (go tool pprof reads it) ends with the
					// runtime's memory statistics.
					if pprof.Lookup("heap").WriteTo(&buf, 1) == nil {
						f.Truncate(0)
						f.WriteAt(buf.Bytes(), 0)
					}
				}
			}
			for {
				select {
				case <-done:
					look()
					return
				case <-tick.C:
					look()
				}
			}
		}()
		return nil
	}
	end := func() {
		close(done)
		<-finished
	}
	return startInDir(heapProfileEnv, "heap-%d.pprof", start, end)
}

// startInDir starts writing into the file named by pattern (and the pid)
// in the directory env names, if it names one.
func startInDir(env, pattern string, start func(io.Writer) error, end func()) (stop func(), err error) {
	dir := os.Getenv(env)
	if dir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf(pattern, os.Getpid())))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	return func() {
		end()
		f.Close()
	}, nil
}
