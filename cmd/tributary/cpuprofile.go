package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
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

// startCPUProfile starts the profile cpuProfileEnv asks for; stop ends it
// and closes its file. Without the variable it does nothing.
func startCPUProfile() (stop func(), err error) {
	return startInDir(cpuProfileEnv, "cpu-%d.pprof", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace does the same for the trace traceEnv asks for.
func startTrace() (stop func(), err error) {
	return startInDir(traceEnv, "trace-%d.out", trace.Start, trace.Stop)
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
