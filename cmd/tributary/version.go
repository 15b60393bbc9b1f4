package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are stamped by `make build` and the Dockerfile:
//
//	-ldflags "-X main.version=$(git describe) -X main.commit=$(git rev-parse HEAD)"
//
// A plain `go build` leaves them empty; build then falls back to what the
// Go toolchain recorded (the module version, VCS revision when available).
var version, commit string

// build is what the binary knows about how it was built.
type build struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
}

func currentBuild() build {
	b := build{Version: version, Commit: commit, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && b.Commit == "" {
				b.Commit = s.Value
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func (b build) String() string {
	return fmt.Sprintf("tributary %s (commit %s, %s)", b.Version, b.Commit, b.GoVersion)
}
