package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
)

// cpuProfileEnv names a directory into which `run` writes a CPU profile of
// itself, cpu-<pid>.pprof, from its start until the pipeline stops: `make
// profile` merges those of make bench's drains (docs/hot-path.md).
const cpuProfileEnv = "TRIBUTARY_CPUPROFILE"

// startCPUProfile starts the profile cpuProfileEnv asks for; stop ends it
// and closes its file. Without the variable it does nothing.
func startCPUProfile() (stop func(), err error) {
	dir := os.Getenv(cpuProfileEnv)
	if dir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// traceEnv names a directory into which `run` writes an execution trace of
// itself, trace-<pid>.out, from its start until the pipeline stops: where
// its goroutines wait, which a CPU profile does not show (`go tool trace
// -pprof=net`, docs/hot-path.md).
const traceEnv = "TRIBUTARY_TRACE"

// startTrace starts the trace traceEnv asks for; stop ends it and closes
// its file. Without the variable it does nothing.
func startTrace() (stop func(), err error) {
	dir := os.Getenv(traceEnv)
	if dir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("trace-%d.out", os.Getpid())))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", traceEnv, err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", traceEnv, err)
	}
	return func() {
		trace.Stop()
		f.Close()
	}, nil
}
