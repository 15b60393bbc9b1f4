package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
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
